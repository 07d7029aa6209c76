// TL301 checkpoint-missing-optimizer: a training checkpoint that cannot resume the optimizer.
#include "catalog.h"
#include "python/training_checkpoint.h"

namespace torchlint {
namespace python {
namespace {

class CheckpointMissingOptimizer final : public Rule {
 public:
  void on_start(RuleContext& ctx) override { tracker_ = &ctx.analysis<TrainingCheckpointTracker>(); }

  void on_module_end(RuleContext& ctx) override {
    for (const auto& checkpoint : tracker_->checkpoints()) {
      if (const TrainingObject* optimizer =
              TrainingCheckpointTracker::first_unsaved(checkpoint, checkpoint.optimizers)) {
        ctx.report(checkpoint.node,
                   "optimizer " + TrainingCheckpointTracker::describe(*optimizer, checkpoint) +
                       " is not saved in the checkpoint written here: a resumed run restarts its momentum and "
                       "adaptive statistics from zero; add `\"optimizer\": " +
                       optimizer->name + ".state_dict()`",
                   std::nullopt, checkpoint.conditions);
        ctx.relate(optimizer->start_byte, optimizer->end_byte, "optimizer `" + optimizer->name + "`, not saved");
      }
    }
  }

 private:
  const TrainingCheckpointTracker* tracker_ = nullptr;
};

}  // namespace
}  // namespace python

python::RuleEntry checkpoint_missing_optimizer_rule() {
  return python::rule_entry<python::CheckpointMissingOptimizer>(catalog_entry("TL301"));
}

}  // namespace torchlint
