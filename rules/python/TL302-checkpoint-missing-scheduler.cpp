// TL302 checkpoint-missing-scheduler: a training checkpoint that cannot resume the LR schedule.
#include "python/training_checkpoint.h"

namespace torchlint {
namespace python {
namespace {

std::string describe(const TrainingObject& o, const TrainingCheckpoint& checkpoint) {
  std::string where = o.parameter ? "parameter of `" + o.function_name + "` at line "
                      : !o.self_attribute && o.function_name != checkpoint.function_name && !o.function_name.empty()
                          ? "created in `" + o.function_name + "` at line "
                          : "created at line ";
  return "'" + o.name + "' " + where + std::to_string(o.line);
}

class CheckpointMissingScheduler final : public Rule {
 public:
  void on_start(RuleContext& ctx) override { tracker_ = &ctx.analysis<TrainingCheckpointTracker>(); }

  void on_module_end(RuleContext& ctx) override {
    for (const auto& checkpoint : tracker_->checkpoints()) {
      for (const auto& scheduler : checkpoint.schedulers) {
        if (TrainingCheckpointTracker::saves(checkpoint, scheduler)) continue;
        ctx.report(checkpoint.node,
                   "LR scheduler " + describe(scheduler, checkpoint) +
                       " is not saved in the checkpoint written here: a resumed run starts the schedule over "
                       "(warm-up again, wrong learning rate); add `\"scheduler\": " + scheduler.name +
                       ".state_dict()`",
                   std::nullopt, checkpoint.conditions);
        break;  // one finding per checkpoint
      }
    }
  }

 private:
  const TrainingCheckpointTracker* tracker_ = nullptr;
};

}  // namespace
}  // namespace python

python::RuleEntry checkpoint_missing_scheduler_rule() {
  return python::rule_entry<python::CheckpointMissingScheduler>({
      .code = "TL302",
      .name = "checkpoint-missing-scheduler",
      .severity = Severity::kWarning,
      .checklist_items = {"A4"},
      .languages = {Language::kPython, Language::kCpp},
  });
}

}  // namespace torchlint
