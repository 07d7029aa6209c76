// TL801 ckpt-missing-optimizer-state: a training checkpoint without optimizer state.
#include "catalog.h"
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class MissingOptimizerState final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    const TrainingState& t = ctx.training();
    if (!t.training || t.weights.empty() || !t.optimizers.empty()) return;
    ctx.report(checkpoint.display,
               "training checkpoint (" + t.training_reason +
                   ") has no optimizer state: resuming restarts the optimizer "
                   "(momentum, Adam moments and step counts are lost); save `optimizer.state_dict()` with the model");
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry ckpt_missing_optimizer_state_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::MissingOptimizerState>(catalog_entry("TL801"));
}

}  // namespace torchlint
