// TL303 checkpoint-missing-epoch: a training checkpoint that does not record how far training got.
#include "catalog.h"
#include "python/training_checkpoint.h"

namespace torchlint {
namespace python {
namespace {

class CheckpointMissingEpoch final : public Rule {
 public:
  void on_start(RuleContext& ctx) override { tracker_ = &ctx.analysis<TrainingCheckpointTracker>(); }

  void on_module_end(RuleContext& ctx) override {
    for (const auto& checkpoint : tracker_->checkpoints()) {
      // A scheduler's own `last_epoch` does not count: the loop resumes from the counter it reads back.
      if (checkpoint.dict.counter) continue;
      ctx.report(checkpoint.node,
                 "training checkpoint has no epoch or step counter: a resumed run cannot tell where training "
                 "stopped (a number in the file name is not restored); add `\"epoch\": epoch` or "
                 "`\"global_step\": step`",
                 std::nullopt, checkpoint.conditions);
    }
  }

 private:
  const TrainingCheckpointTracker* tracker_ = nullptr;
};

}  // namespace
}  // namespace python

python::RuleEntry checkpoint_missing_epoch_rule() {
  return python::rule_entry<python::CheckpointMissingEpoch>(catalog_entry("TL303"));
}

}  // namespace torchlint
