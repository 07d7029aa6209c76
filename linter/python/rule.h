#pragma once
// The interface a Python rule implements. The Checker walks the tree once and calls the
// rules' event handlers; rules read the SemanticModel and report through the context.
// A rule never walks the tree itself and never prints.
#include <memory>
#include <iterator>
#include <optional>
#include <type_traits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/diagnostic.h"
#include "core/lint_session.h"
#include "core/rule_info.h"
#include "semantic_model.h"

namespace torchlint::python {

// One argument of a call, read once by the Checker: `name` is the keyword (empty for a
// positional argument), `value` the keyword's value or the argument itself.
struct CallArgument {
  std::string_view name;
  TSNode value{};
  Kind kind = Kind::kOther;  // of the argument node (kKeywordArgument, kListSplat, ...)
};

// A call expression with its callee resolved and its arguments indexed.
struct CallEvent {
  TSNode node{};
  TSNode callee{};
  TSNode arguments{};  // argument_list (null for `f(x for x in y)`)
  std::optional<std::string> qualname;
  std::string_view method;  // "step" for `opt.step()`
  TSNode receiver{};        // `opt` in `opt.step()`
  TSNode assigned_to{};     // `loader` in `loader = DataLoader(...)`
  bool is_with_item = false;
  bool is_decorator = false;
  bool has_args_splat = false;
  bool has_kwargs_splat = false;
  // The named children of `arguments` but comments, in order (owned by the Checker, valid
  // while the event is dispatched).
  const CallArgument* args = nullptr;
  size_t arg_count = 0;

  TSNode keyword(std::string_view name, std::string_view source = {}) const;
  TSNode positional(size_t index) const;
  size_t positional_count() const;
  // model.forward_pass_target(node, /*by_name=*/true), computed once per call: several
  // rules ask, and the model does not change while the event is dispatched.
  std::string_view forward_pass_target(const SemanticModel& model) const {
    if (!forward_known_) {
      forward_target_ = model.forward_pass_target(node, /*by_name=*/true);
      forward_known_ = true;
    }
    return forward_target_;
  }

 private:
  mutable bool forward_known_ = false;
  mutable std::string_view forward_target_;
};

// A decorator that is a bare name (`@torch.cuda.amp.custom_fwd`, no call).
struct DecoratorEvent {
  TSNode node{};  // the decorator expression
  std::optional<std::string> qualname;
};

// One name an import statement binds: `import torch.nn as nn` (qualified_name
// "torch.nn"), `import functorch` ("functorch"), `from torch import qr as old_qr`
// ("torch.qr", canonical like a call's qualname). Star imports make no event.
struct ImportEvent {
  TSNode statement{};  // the import_statement / import_from_statement
  TSNode name{};       // the dotted_name or aliased_import of this name
  TSNode module{};     // from-imports: the module's dotted_name (null for `import x`)
  std::string qualified_name;
  std::string_view alias;  // `as` name, empty without one
  bool is_from = false;
};

// An assignment statement, after its right-hand side was traversed: `x = v`,
// `self.layers = [...]`, `total += loss`, `a = b = v` (one event per target).
struct AssignEvent {
  TSNode node{};  // the assignment
  TSNode target{};
  TSNode value{};       // null for annotations without a value
  std::string_view op;  // "=" or the augmented operator ("+=")
};

class RuleContext;

// State a rule or analysis keeps per function, by qualname (the module's own code is a
// function too). The entry of the function being traversed is looked up once per
// function rather than once per event: events come by the hundred per function.
template <class T>
class PerFunction {
 public:
  T& current(const SemanticModel& model) {
    const FunctionState& fn = model.function();
    // The node tells apart functions whose states reuse an address.
    if (!current_ || current_fn_ != &fn || current_node_ != fn.node.id) {
      current_ = &by_qualname_[fn.qualname];
      current_fn_ = &fn;
      current_node_ = fn.node.id;
    }
    return *current_;
  }
  // The current function's entry if it has one (no entry is created).
  const T* find_current(const SemanticModel& model) const {
    const FunctionState& fn = model.function();
    if (current_ && current_fn_ == &fn && current_node_ == fn.node.id) return current_;
    auto it = by_qualname_.find(fn.qualname);
    return it == by_qualname_.end() ? nullptr : &it->second;
  }
  T& operator[](const std::string& qualname) { return by_qualname_[qualname]; }
  T* find(const std::string& qualname) {
    auto it = by_qualname_.find(qualname);
    return it == by_qualname_.end() ? nullptr : &it->second;
  }
  const T* find(const std::string& qualname) const {
    auto it = by_qualname_.find(qualname);
    return it == by_qualname_.end() ? nullptr : &it->second;
  }
  void erase(const std::string& qualname) {
    by_qualname_.erase(qualname);
    current_ = nullptr;
  }
  void clear() {
    by_qualname_.clear();
    current_ = nullptr;
  }
  auto begin() const { return by_qualname_.begin(); }
  auto end() const { return by_qualname_.end(); }

 private:
  std::unordered_map<std::string, T> by_qualname_;
  T* current_ = nullptr;
  const FunctionState* current_fn_ = nullptr;
  const void* current_node_ = nullptr;
};

// A per-file analysis that several rules read (the training checkpoints of TL301–TL303,
// the request handlers of TL701–TL703, ...). The Checker creates it the first time a rule
// asks for it, in Rule::on_start, and feeds it every event before the rules, so its work
// is done once per file however many rules use it. It reports nothing itself.
class Analysis {
 public:
  virtual ~Analysis() = default;
  // On creation: where an analysis asks for the analyses it builds on (they are fed first).
  virtual void on_start(RuleContext&) {}
  virtual void on_call(const CallEvent&, RuleContext&) {}
  virtual void on_assign(const AssignEvent&, RuleContext&) {}
  // After the rules saw the assignment: for state a rule reads as it was before it.
  virtual void after_assign(const AssignEvent&, RuleContext&) {}
  virtual void on_class_end(const ClassInfo&, TSNode /*class_definition*/, RuleContext&) {}
  virtual void on_function_end(const FunctionState&, RuleContext&) {}
  virtual void on_loop_end(const LoopState&, RuleContext&) {}
  virtual void on_module_end(RuleContext&) {}
};

// The events a rule or analysis handles. The Checker calls a handler only where the class
// declares one: a call event would otherwise make some forty virtual calls, most of them
// into the empty defaults, each touching a cold object and vtable.
enum class Event : uint8_t {
  kCall,
  kDecorator,
  kAssign,
  kAfterAssign,
  kClassEnd,
  kFunctionEnd,
  kLoopEnd,
  kModuleEnd,
  kImport
};
using EventMask = uint32_t;
constexpr EventMask event_bit(Event e) { return EventMask{1} << static_cast<unsigned>(e); }

// The events class `T` handles, read from its declarations at compile time: `&T::on_call`
// names a member of `Base` exactly when neither `T` nor a class between them declares it.
// Handlers are public, and a class does not overload a handler's name with another
// signature next to its override (the address would be ambiguous: a compile error here).
template <class T, class Base>
constexpr EventMask handled_events() {
  EventMask m = 0;
  auto declares = [](auto derived, auto base) { return !std::is_same_v<decltype(derived), decltype(base)>; };
  if (declares(&T::on_call, &Base::on_call)) m |= event_bit(Event::kCall);
  if (declares(&T::on_assign, &Base::on_assign)) m |= event_bit(Event::kAssign);
  if (declares(&T::on_class_end, &Base::on_class_end)) m |= event_bit(Event::kClassEnd);
  if (declares(&T::on_function_end, &Base::on_function_end)) m |= event_bit(Event::kFunctionEnd);
  if (declares(&T::on_loop_end, &Base::on_loop_end)) m |= event_bit(Event::kLoopEnd);
  if (declares(&T::on_module_end, &Base::on_module_end)) m |= event_bit(Event::kModuleEnd);
  if constexpr (requires { &Base::on_decorator; }) {
    if (declares(&T::on_decorator, &Base::on_decorator)) m |= event_bit(Event::kDecorator);
  }
  if constexpr (requires { &Base::on_import; }) {
    if (declares(&T::on_import, &Base::on_import)) m |= event_bit(Event::kImport);
  }
  if constexpr (requires { &Base::after_assign; }) {
    if (declares(&T::after_assign, &Base::after_assign)) m |= event_bit(Event::kAfterAssign);
  }
  return m;
}

namespace detail {
template <class A>
inline constexpr char analysis_key = 0;  // its address identifies analysis type A
}  // namespace detail

class RuleContext {
 public:
  virtual ~RuleContext() = default;
  virtual const SemanticModel& model() const = 0;
  virtual const AnalysisOptions& options() const = 0;
  virtual void report(TSNode node, std::string message, std::optional<Fix> fix = std::nullopt,
                      std::vector<ProjectCondition> conditions = {}) = 0;
  // A finding whose severity is not the rule's catalog severity (a removed API is an
  // error where the rule's deprecations are warnings).
  virtual void report_as(Severity severity, TSNode node, std::string message,
                         std::optional<Fix> fix = std::nullopt) = 0;
  // Adds a related location (byte range of this file) to the finding this rule reported
  // last: the second place that explains it. Nothing happens when the last report was
  // dropped.
  virtual void relate(uint32_t start_byte, uint32_t end_byte, std::string message) = 0;
  void relate(TSNode node, std::string message) {
    if (!ts_node_is_null(node)) relate(ts_node_start_byte(node), ts_node_end_byte(node), std::move(message));
  }
  // Records a fact about the function being traversed (module-level code included) for
  // the project pass: "checks-device", "saves-checkpoint", ...
  virtual void add_fact(std::string_view fact) = 0;
  std::string_view text(TSNode node) const { return model().text(node); }

  // The file's shared analysis of type `A` (default-constructible, derived from Analysis),
  // created on first use. Ask for it in Rule::on_start, so that it sees the whole file.
  template <class A>
  A& analysis() {
    const void* key = &detail::analysis_key<A>;
    if (Analysis* a = find_analysis(key)) return static_cast<A&>(*a);
    return static_cast<A&>(add_analysis(key, std::make_unique<A>(), handled_events<A, Analysis>()));
  }

 protected:
  virtual Analysis* find_analysis(const void* key) = 0;
  virtual Analysis& add_analysis(const void* key, std::unique_ptr<Analysis> analysis, EventMask events) = 0;
};

class Rule {
 public:
  virtual ~Rule() = default;
  // Before the traversal: where a rule asks for the shared analyses it reads.
  virtual void on_start(RuleContext&) {}
  virtual void on_call(const CallEvent&, RuleContext&) {}
  virtual void on_decorator(const DecoratorEvent&, RuleContext&) {}
  virtual void on_import(const ImportEvent&, RuleContext&) {}
  virtual void on_assign(const AssignEvent&, RuleContext&) {}
  virtual void on_class_end(const ClassInfo&, TSNode /*class_definition*/, RuleContext&) {}
  virtual void on_function_end(const FunctionState&, RuleContext&) {}
  virtual void on_loop_end(const LoopState&, RuleContext&) {}
  virtual void on_module_end(RuleContext&) {}
};

struct RuleEntry {
  RuleInfo info;
  std::unique_ptr<Rule> (*make)();   // null for rules the front-end or session reports itself
  EventMask events = ~EventMask{0};  // what the rule's class handles (rule_entry fills it in)
  // The rule's kTriggers (empty: it runs on every file).
  std::vector<std::string_view> triggers;
};

// A rule all of whose findings and facts need one of a few names in the file declares
//
//   static constexpr std::string_view kTriggers[] = {"DataLoader"};
//
// and is not created for a file that mentions none of them as a whole identifier (in its
// code, strings or comments; see core/word_scan.h). No event of such a file reaches it, so
// the list must be complete: in a file that mentions none of the names, the rule could
// neither report nor record a fact. Aliases need no entry of their own: `from torch.nn
// import Linear as L` still mentions `Linear`, and resolution in this engine stays within
// the file, so a name the file never spells cannot resolve to the API.
template <class R>
std::vector<std::string_view> rule_triggers() {
  if constexpr (requires { R::kTriggers; }) {
    return {std::begin(R::kTriggers), std::end(R::kTriggers)};
  } else {
    return {};
  }
}

// The registry entry of rule class `R`.
template <class R>
RuleEntry rule_entry(RuleInfo info) {
  return {std::move(info), []() -> std::unique_ptr<Rule> { return std::make_unique<R>(); }, handled_events<R, Rule>(),
          rule_triggers<R>()};
}

}  // namespace torchlint::python
