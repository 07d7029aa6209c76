#pragma once
// Which DataLoader calls build a training loader. Shared by the DataLoader rules
// (TL201, TL202): each keeps its own tracker and decides what is missing.
#include <functional>
#include <string>
#include <vector>

#include "rule.h"

namespace torchlint::python {

struct LoaderCandidate {
  TSNode call{};
  std::string name;     // assigned name, empty when not assigned
  std::string message;  // the finding, should it turn out to be a training loader
  std::optional<Fix> fix;
  bool training = false;
  // Training when one of these project functions trains a step: the loop that iterates the
  // loader leaves the step to them (`for batch in self.train_data: self._run_batch(batch)`).
  std::vector<std::string> step_helpers;
  // The loader is the return value of `function` (`return DataLoader(...)` in a
  // `prepare_dataloader`): training when a caller keeps it under a training name.
  std::string returned_by;
  // What else must hold for the finding to stand (the rule's own questions).
  std::vector<ProjectCondition> conditions;
};

class TrainingLoaderTracker {
 public:
  // Records a DataLoader call that lacks what the rule wants; `message` is reported if the
  // loader turns out to be for training (shuffle=True, a "train" name, or iterated by a
  // loop that trains).
  void consider(const CallEvent& call, RuleContext& ctx, std::string message,
                std::vector<ProjectCondition> conditions = {});
  void on_loop_end(const LoopState& loop, RuleContext& ctx);
  // Reports the training loaders; `extra` can veto per candidate (e.g. no CUDA use).
  void report(RuleContext& ctx, const std::vector<ProjectCondition>& conditions = {});
  // Reports the loaders that are certainly not for training: no training use, no helper
  // that may train with them, not returned to a caller that may train with them.
  void report_not_training(RuleContext& ctx);

  // The DataLoader argument `keyword` (positional index `position`), or null.
  static TSNode argument(const CallEvent& call, RuleContext& ctx, std::string_view keyword, size_t position);

 private:
  std::vector<LoaderCandidate> candidates_;
};

}  // namespace torchlint::python
