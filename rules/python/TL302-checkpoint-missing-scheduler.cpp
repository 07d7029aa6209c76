// TL302 checkpoint-missing-scheduler: a training checkpoint that cannot resume the LR schedule.
#include "catalog.h"
#include "python/training_checkpoint.h"

namespace torchlint {
namespace python {
namespace {

class CheckpointMissingScheduler final : public Rule {
 public:
  void on_start(RuleContext& ctx) override { tracker_ = &ctx.analysis<TrainingCheckpointTracker>(); }

  void on_module_end(RuleContext& ctx) override {
    for (const auto& checkpoint : tracker_->checkpoints()) {
      if (const TrainingObject* scheduler =
              TrainingCheckpointTracker::first_unsaved(checkpoint, checkpoint.schedulers)) {
        ctx.report(checkpoint.node,
                   "LR scheduler " + TrainingCheckpointTracker::describe(*scheduler, checkpoint) +
                       " is not saved in the checkpoint written here: a resumed run starts the schedule over "
                       "(warm-up again, wrong learning rate); add `\"scheduler\": " +
                       scheduler->name + ".state_dict()`",
                   std::nullopt, checkpoint.conditions);
        ctx.relate(scheduler->start_byte, scheduler->end_byte, "LR scheduler `" + scheduler->name + "`, not saved");
      }
    }
  }

 private:
  const TrainingCheckpointTracker* tracker_ = nullptr;
};

}  // namespace
}  // namespace python

python::RuleEntry checkpoint_missing_scheduler_rule() {
  return python::rule_entry<python::CheckpointMissingScheduler>(catalog_entry("TL302"));
}

}  // namespace torchlint
