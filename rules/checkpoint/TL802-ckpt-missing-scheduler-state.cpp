// TL802 ckpt-missing-scheduler-state: a schedule was in use, its state was not saved.
#include "catalog.h"
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class MissingSchedulerState final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    const TrainingState& t = ctx.training();
    if (!t.training || t.optimizers.empty() || !t.schedule_hint || !t.schedulers.empty()) return;
    ctx.report(checkpoint.display,
               "training checkpoint has no LR scheduler state although a schedule was in use (`" +
                   t.schedule_hint_where +
                   "`): resuming restarts the schedule at its first step; save `scheduler.state_dict()` too");
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry ckpt_missing_scheduler_state_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::MissingSchedulerState>(catalog_entry("TL802"));
}

}  // namespace torchlint
