#pragma once
// The interface a checkpoint rule implements. Checkpoint rules run on what the inspector
// built (containers, pickles, the value graph, tensors, training state), never on bytes
// of their own and never on Python source; they report through the context, which turns
// findings into the common Diagnostic (path = the checkpoint file or directory, line 1,
// column 1) so every output format renders them.
#include <memory>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "core/diagnostic.h"
#include "core/rule_info.h"
#include "training_state.h"

namespace torchlint::ckpt {

class CheckpointContext {
 public:
  virtual ~CheckpointContext() = default;
  // The training state of the checkpoint being checked (computed once for all rules).
  virtual const TrainingState& training() const = 0;
  // Reports a finding of the running rule against `path` (a file of the checkpoint, or
  // the checkpoint directory).
  virtual void report(const std::string& path, std::string message) = 0;
};

class CheckpointRule {
 public:
  virtual ~CheckpointRule() = default;
  virtual void check(const Checkpoint& checkpoint, CheckpointContext& context) const = 0;
};

struct CheckpointRuleEntry {
  RuleInfo info;
  std::unique_ptr<CheckpointRule> (*make)();
};

template <class R>
CheckpointRuleEntry checkpoint_rule_entry(RuleInfo info) {
  return {std::move(info), []() -> std::unique_ptr<CheckpointRule> { return std::make_unique<R>(); }};
}

// Runs `rules` (those whose index in `enabled` is set, by RuleInfo code) on a checkpoint.
// `is_enabled(code)` says whether a rule is selected.
template <class IsEnabled>
std::vector<Diagnostic> run_checkpoint_rules(const Checkpoint& checkpoint,
                                             const std::vector<CheckpointRuleEntry>& rules, IsEnabled&& is_enabled);

// Non-template core of run_checkpoint_rules.
std::vector<Diagnostic> run_checkpoint_rules_impl(const Checkpoint& checkpoint,
                                                  const std::vector<const CheckpointRuleEntry*>& rules);

template <class IsEnabled>
std::vector<Diagnostic> run_checkpoint_rules(const Checkpoint& checkpoint,
                                             const std::vector<CheckpointRuleEntry>& rules, IsEnabled&& is_enabled) {
  std::vector<const CheckpointRuleEntry*> selected;
  for (const auto& r : rules) {
    if (is_enabled(r.info.code)) selected.push_back(&r);
  }
  return run_checkpoint_rules_impl(checkpoint, selected);
}

}  // namespace torchlint::ckpt
