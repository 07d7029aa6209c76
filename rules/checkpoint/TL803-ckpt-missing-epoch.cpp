// TL803 ckpt-missing-epoch: a training checkpoint without an epoch or step counter.
#include "catalog.h"
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class MissingEpoch final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    const TrainingState& t = ctx.training();
    if (!t.training || t.weights.empty() || !t.counters.empty()) return;
    ctx.report(
        checkpoint.display,
        "training checkpoint has no epoch or step counter (`epoch`, `global_step`, `iter_num`, ...): a resumed run "
        "cannot tell where it stopped; save the counter with the states");
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry ckpt_missing_epoch_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::MissingEpoch>(catalog_entry("TL803"));
}

}  // namespace torchlint
