#pragma once
// TL201 dataloader-num-workers and TL211 dataloader-main-process: one check of the
// DataLoader's `num_workers`, reported for training loaders (TL201) or for the others
// (TL211, opt-in).
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "python/rule.h"
#include "python/training_dataloader.h"

namespace torchlint::python::dataloader_workers {

// The loaders that load in the main process (no `num_workers`, or a literal 0 nobody
// explained). TL201 reports the training loaders among them; TL211 (opt-in) the others,
// the loaders TL201 can tell are not for training.
class NumWorkersCheck : public Rule {
 public:
  // Its findings are DataLoader calls.
  static constexpr std::string_view kTriggers[] = {"DataLoader"};

  void on_call(const CallEvent& call, RuleContext& ctx) override;
  // `collator = DataCollatorWithPadding(tokenizer)`, then `collate_fn=collator`.
  void on_assign(const AssignEvent& event, RuleContext& ctx) override;
  void on_loop_end(const LoopState& loop, RuleContext& ctx) override;
  void on_module_end(RuleContext& ctx) override;

 protected:
  explicit NumWorkersCheck(bool training) : training_(training) {}

 private:
  // Worker processes only add start-up and IPC cost when an item is a slice of tensors
  // already in memory: a `TensorDataset`, or a project dataset class whose `__getitem__`
  // just indexes its own attributes (decided by the project pass, `conditions`).
  bool in_memory(const CallEvent& call, RuleContext& ctx, std::vector<ProjectCondition>& conditions) const;

  const bool training_;  // TL201: report the training loaders; TL211: the others
  TrainingLoaderTracker tracker_;
  std::unordered_set<std::string> collators_;
};

// The rules TL201 (true) and TL211 (false) register; the check itself is compiled once.
template <bool kTraining>
class DataloaderWorkers final : public NumWorkersCheck {
 public:
  DataloaderWorkers() : NumWorkersCheck(kTraining) {}
};

}  // namespace torchlint::python::dataloader_workers
