#pragma once
// The interface a Python rule implements. The Checker walks the tree once and calls the
// rules' event handlers; rules read the SemanticModel and report through the context.
// A rule never walks the tree itself and never prints.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/lint_session.h"
#include "core/rule_info.h"
#include "semantic_model.h"

namespace torchlint::python {

// A call expression with its callee resolved and its arguments indexed.
struct CallEvent {
  TSNode node{};
  TSNode callee{};
  TSNode arguments{};     // argument_list (null for `f(x for x in y)`)
  std::optional<std::string> qualname;
  std::string_view method;  // "step" for `opt.step()`
  TSNode receiver{};        // `opt` in `opt.step()`
  TSNode assigned_to{};     // `loader` in `loader = DataLoader(...)`
  bool is_with_item = false;
  bool is_decorator = false;
  bool has_args_splat = false;
  bool has_kwargs_splat = false;

  TSNode keyword(std::string_view name, std::string_view source) const;
  TSNode positional(size_t index) const;
  size_t positional_count() const;
};

// A decorator that is a bare name (`@torch.cuda.amp.custom_fwd`, no call).
struct DecoratorEvent {
  TSNode node{};        // the decorator expression
  std::optional<std::string> qualname;
};

// An assignment statement, after its right-hand side was traversed: `x = v`,
// `self.layers = [...]`, `total += loss`, `a = b = v` (one event per target).
struct AssignEvent {
  TSNode node{};    // the assignment
  TSNode target{};
  TSNode value{};   // null for annotations without a value
  std::string_view op;  // "=" or the augmented operator ("+=")
};

class RuleContext {
 public:
  virtual ~RuleContext() = default;
  virtual const SemanticModel& model() const = 0;
  virtual const AnalysisOptions& options() const = 0;
  virtual void report(TSNode node, std::string message, std::optional<Fix> fix = std::nullopt,
                      std::vector<ProjectCondition> conditions = {}) = 0;
  // Records a fact about the function being traversed (module-level code included) for
  // the project pass: "checks-device", "saves-checkpoint", ...
  virtual void add_fact(std::string_view fact) = 0;
  std::string_view text(TSNode node) const { return model().text(node); }
};

class Rule {
 public:
  virtual ~Rule() = default;
  virtual void on_call(const CallEvent&, RuleContext&) {}
  virtual void on_decorator(const DecoratorEvent&, RuleContext&) {}
  virtual void on_assign(const AssignEvent&, RuleContext&) {}
  virtual void on_class_end(const ClassInfo&, TSNode /*class_definition*/, RuleContext&) {}
  virtual void on_function_end(const FunctionState&, RuleContext&) {}
  virtual void on_loop_end(const LoopState&, RuleContext&) {}
  virtual void on_module_end(RuleContext&) {}
};

struct RuleEntry {
  RuleInfo info;
  std::unique_ptr<Rule> (*make)();  // null for rules the front-end or session reports itself
};

// The registry entry of rule class `R`.
template <class R>
RuleEntry rule_entry(RuleInfo info) {
  return {std::move(info), []() -> std::unique_ptr<Rule> { return std::make_unique<R>(); }};
}

}  // namespace torchlint::python
