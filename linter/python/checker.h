#pragma once
// The single traversal: walks the tree once with a cursor (no recursion, so deep nesting
// cannot overflow the stack), keeps the SemanticModel current and calls the rules.
#include <memory>
#include <vector>

#include "core/lint_session.h"
#include "rule.h"
#include "semantic_model.h"

namespace torchlint::python {

class Checker final : public RuleContext {
 public:
  struct ActiveRule {
    const RuleInfo* info;
    std::unique_ptr<Rule> rule;
    EventMask events = ~EventMask{0};  // what the rule handles: nothing else is dispatched to it
  };

  // `parse_error`: the catalog's rule for a syntax error, reported with the findings.
  Checker(const SourceFile& file, TSTree* tree, const AnalysisOptions& options, std::vector<ActiveRule> rules,
          const RuleInfo& parse_error);
  FileResult run();

  const SemanticModel& model() const override { return model_; }
  const AnalysisOptions& options() const override { return options_; }
  void report(TSNode node, std::string message, std::optional<Fix> fix,
              std::vector<ProjectCondition> conditions) override;
  void report_as(Severity severity, TSNode node, std::string message, std::optional<Fix> fix) override;
  void relate(uint32_t start_byte, uint32_t end_byte, std::string message) override;
  using RuleContext::relate;
  void add_fact(std::string_view fact) override;

 protected:
  Analysis* find_analysis(const void* key) override;
  Analysis& add_analysis(const void* key, std::unique_ptr<Analysis> analysis, EventMask events) override;

 private:
  // Calls `f(handler)` for the shared analyses, then for the rules (current_rule_ set),
  // that handle `event`.
  template <class F>
  void dispatch(Event event, F&& f);

  bool enter(TSNode node);
  void leave(TSNode node);

  void on_import(TSNode node);
  void on_import_from(TSNode node);
  void on_function_enter(TSNode node);
  void on_function_leave(TSNode node);
  void on_class_enter(TSNode node);
  void on_with_enter(TSNode node);
  void on_if_enter(TSNode node);
  void on_call(TSNode node);
  void on_assignment(TSNode node);
  void dispatch_assign(const AssignEvent& event);
  void on_comment(TSNode node);
  void on_decorator(TSNode node);
  void dispatch_import(const ImportEvent& event);
  void bind_target(TSNode target, const ValueInfo& value, const std::string& alias_of, BindingKind kind);
  void add_fact(FunctionState& fn, std::string_view fact);
  // `reference`: the function is passed as a value (a callback, a launcher's target), not
  // called here; a reference the project pass cannot resolve is not an unknown callee.
  void record_call_edge(const std::string& callee, bool reference = false);
  // Functions passed as arguments (`mp.spawn(main)`, `Process(target=run)`,
  // `partial(step, model)`, `self._train_step`) run as part of this function's work.
  void record_callback_edges();
  // A hand-written optimizer step (`p -= lr * p.grad`): the function trains. Loops do not
  // count it as an optimizer step (the step-order rules track optimizer objects).
  static bool manual_update_uses_grad(std::string_view expr);
  void note_manual_step();

  // Whether `node` (an expression or simple statement) holds nothing the traversal acts
  // on: no call and no comment, so no '(' and no '#' in its text (its own opening
  // parenthesis aside), and no syntax error. About half the nodes of typical code are
  // inside such subtrees; not visiting them is the cheapest way to handle them.
  bool holds_no_events(TSNode node) const;

  // Parent of the node being entered (ts_node_parent re-walks from the root).
  TSNode parent_node() const { return ancestors_.size() >= 2 ? ancestors_[ancestors_.size() - 2] : TSNode{}; }

  const SourceFile& file_;
  TSTree* tree_;
  const AnalysisOptions& options_;
  std::vector<ActiveRule> rules_;
  const RuleInfo& parse_error_;
  struct ActiveAnalysis {
    const void* key;
    std::unique_ptr<Analysis> analysis;
    EventMask events;
  };
  std::vector<ActiveAnalysis> analyses_;  // in feeding order
  const ActiveRule* current_rule_ = nullptr;
  // The rule that made the last finding in result_.diagnostics (relate() attaches to it).
  const ActiveRule* last_reporter_ = nullptr;
  std::vector<CallArgument> call_args_;  // the arguments of the call being dispatched
  TSTreeCursor arg_cursor_{};            // reused to read them
  SemanticModel model_;
  FileResult result_;
  std::vector<uint32_t> marks_;     // offsets of the '(' and '#' bytes, ascending
  mutable size_t next_mark_ = 0;    // where holds_no_events resumes its search
  std::vector<TSNode> ancestors_;   // path from the root to the current node
  std::vector<TSNode> statements_;  // enclosing simple statements
  // Every function's byte range and qualname, in the order entered: a finding reported
  // at module end is placed in the function that holds its node.
  struct FunctionSpan {
    uint32_t start, end;
    std::string qualname;
  };
  std::vector<FunctionSpan> function_spans_;
  bool module_calls_own_function_ = false;  // module-level code runs the script's functions
  std::vector<size_t> with_pushes_;         // contexts pushed per with statement
  std::vector<bool> if_was_main_guard_;
  std::vector<bool> pushed_condition_;  // per if/elif/while node
  void note_syntax_error(TSNode node, std::string message);
  void locate_hidden_error(TSNode root);
  // The earliest syntax problem: tree-sitter's ERROR/MISSING nodes, and what its
  // permissive grammar accepts but Python does not (empty blocks, Python 2 statements).
  std::optional<std::pair<TSNode, std::string>> first_error_;
};

}  // namespace torchlint::python
