#include "rule.h"

namespace torchlint::ckpt {

namespace {

class Context : public CheckpointContext {
 public:
  Context(const TrainingState& training, std::vector<Diagnostic>& out) : training_(training), out_(out) {}
  const TrainingState& training() const override { return training_; }
  void report(const std::string& path, std::string message) override {
    Diagnostic d;
    d.code = rule_->code;
    d.name = rule_->name;
    d.severity = rule_->severity;
    d.message = std::move(message);
    d.path = path;
    d.start = {1, 1};
    d.end = {1, 1};
    d.statement_first_line = d.statement_last_line = 1;
    out_.push_back(std::move(d));
  }
  const RuleInfo* rule_ = nullptr;

 private:
  const TrainingState& training_;
  std::vector<Diagnostic>& out_;
};

}  // namespace

std::vector<Diagnostic> run_checkpoint_rules_impl(const Checkpoint& checkpoint,
                                                  const std::vector<const CheckpointRuleEntry*>& rules) {
  std::vector<Diagnostic> out;
  TrainingState training = analyze_training_state(checkpoint);
  Context context(training, out);
  for (const CheckpointRuleEntry* entry : rules) {
    context.rule_ = &entry->info;
    entry->make()->check(checkpoint, context);
  }
  return out;
}

}  // namespace torchlint::ckpt
