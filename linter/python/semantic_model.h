#pragma once
// What one traversal learns about a Python file: imports and aliases, scopes and
// bindings, the value kinds of simple assignments, the grad-mode context stack, loops,
// conditions, functions and their facts. Rules read it; only the Checker writes it.
#include <tree_sitter/api.h>

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api_tables.h"
#include "core/project_facts.h"
#include "syntax.h"

namespace torchlint::python {

using api::ValueKind;

// The fact of a function that names a GPU (`.cuda()`, a "cuda" device, `torch.accelerator`):
// GPU-only advice is given only in programs that have it.
inline constexpr const char* kUsesCudaFact = "uses-cuda";

struct ValueInfo {
  ValueKind kind = ValueKind::kUnknown;
  std::string type;   // constructor's qualified name, or the project class
  bool cuda = false;  // a device value that is (or may be) CUDA
  // A made-up tensor of a shape written as literals (`torch.randn(1, 3, 32, 32)`): what a
  // shape check feeds a model, unlike noise of a computed shape (a generator's input).
  bool literal_shape = false;
};

enum class BindingKind : uint8_t { kImport, kAssign, kParameter, kFunction, kClass, kLoopTarget, kOther };

struct Binding {
  BindingKind kind = BindingKind::kOther;
  std::string qualified_name;  // imports and aliases: what the name stands for
  ValueInfo value;
  uint32_t line = 0;
};

struct ClassInfo {
  std::string qualname;
  std::vector<std::string> bases;                       // resolved qualified names
  bool is_module = false;                               // derives from torch.nn.Module
  std::unordered_map<std::string, Binding> attributes;  // self.x = ... in any method
};

enum class ScopeKind : uint8_t { kModule, kClass, kFunction };

struct Scope {
  ScopeKind kind = ScopeKind::kModule;
  std::string qualname;
  std::unordered_map<std::string_view, Binding> bindings;
  int class_index = -1;  // classes_ entry for class scopes
};

// Everything torchlint tracks for the function being traversed (or the module's
// top-level code, which is treated as a function named "<module>").
struct FunctionState {
  TSNode node{};
  // The decorated_definition holding `node` when it has decorators, else null: rules read
  // the decorators from it (ts_node_parent would walk down from the root to find it).
  TSNode decorated{};
  std::string name;
  std::string qualname;
  bool is_module_level = false;
  int enclosing_class = -1;  // classes_ index when this is a method
  bool grad_disabled_decorator = false;
  bool grad_disabled_statement = false;  // torch.set_grad_enabled(False) earlier in the body
  bool calls_backward = false;
  bool steps_optimizer = false;
  bool calls_autograd_grad = false;
  uint32_t first_training_byte = 0;  // where an optimizer step was first seen
  // Receivers currently in eval mode ("model", "self.net"), from .eval() / .train(False).
  std::vector<std::string> eval_mode;
  FunctionFacts facts;
  size_t scope_index = 0;
  size_t context_base = 0;  // grad-context entries below this belong to outer functions
  size_t loop_base = 0;
  size_t condition_base = 0;
};

// What happens in one iteration of a loop, in source order: the training-loop model.
enum class LoopEventKind : uint8_t {
  kZeroGrad,       // opt.zero_grad(), model.zero_grad()
  kForward,        // model(x)
  kBackward,       // loss.backward(), scaler.scale(loss).backward()
  kOptimizerStep,  // opt.step(), scaler.step(opt)
  kSchedulerStep,  // sched.step()
  kCall,           // a call into the project (a helper that may do any of the above)
};

struct LoopEvent {
  LoopEventKind kind;
  TSNode node{};
  std::string receiver;      // "opt", "self.optimizer", the model, the loss expression
  std::string callee;        // kCall: the qualified name
  bool conditional = false;  // under an `if` inside the loop body (gradient accumulation)
  size_t arguments = 0;      // positional arguments (ReduceLROnPlateau.step(metric))
};

struct LoopState {
  TSNode node{};
  TSNode iter{};  // for-loops: the iterable expression
  bool is_for = false;
  bool calls_backward = false;
  bool steps_optimizer = false;
  std::vector<std::string> callees;  // qualified names called in the body
  // Project functions called in the body itself, not in a loop nested in it: what one
  // iteration runs once (a training step helper), for the project pass.
  std::vector<std::string> direct_callees;
  std::vector<LoopEvent> events;  // in source order, nested loops included
  size_t condition_base = 0;      // conditions inside the body start here
  size_t depth = 0;               // 0 for the outermost loop of its function
  // Per event, whether it runs under a condition within this loop (-1: not yet known):
  // every training-loop rule asks at the loop's end, and the answer is a walk of the tree.
  mutable std::vector<int8_t> guarded;
  // The loop trains: both a backward pass and an optimizer step in its body.
  bool trains() const { return calls_backward && steps_optimizer; }
};

enum class GradContext : uint8_t { kNoGrad, kEnableGrad, kAutocast, kDetectAnomaly, kOther };

// A few answers about nodes (keyed by node identity), kept while one event is dispatched.
struct NodeKey {
  const void* id = nullptr;
  uint32_t start = 0;
  bool operator==(const NodeKey&) const = default;
};

template <class T>
class EventMemo {
 public:
  const T* find(const NodeKey& key) const {
    for (size_t i = 0; i < count_; ++i) {
      if (entries_[i].first == key) return &entries_[i].second;
    }
    return nullptr;
  }
  void add(const NodeKey& key, const T& value) {
    entries_[next_] = {key, value};
    next_ = (next_ + 1) % kSize;
    if (count_ < kSize) ++count_;
  }
  void clear() { count_ = next_ = 0; }
  // compute(expr), answered from the memo when `active`.
  template <class F>
  T get(bool active, TSNode expr, F&& compute) {
    if (!active) return compute(expr);
    const NodeKey key{expr.id, ts_node_start_byte(expr)};
    if (const T* hit = find(key)) return *hit;
    T result = compute(expr);
    add(key, result);
    return result;
  }

 private:
  static constexpr size_t kSize = 8;
  std::array<std::pair<NodeKey, T>, kSize> entries_;
  size_t count_ = 0;
  size_t next_ = 0;
};

class SemanticModel {
 public:
  SemanticModel(std::string_view source, std::string module_name);

  std::string_view source() const { return source_; }
  const std::string& module_name() const { return module_; }
  std::string_view text(TSNode node) const { return node_text(node, source_); }

  // --- Name resolution ----------------------------------------------------------
  // Qualified, canonical name of an expression (identifier or attribute chain), e.g.
  // `nn.DataParallel` -> "torch.nn.parallel.data_parallel.DataParallel". nullopt when
  // it cannot be known (parameters, call results, `from x import *` names).
  std::optional<std::string> resolve_qualified_name(TSNode expr) const;
  const Binding* lookup(std::string_view name) const;
  // A library the project uses rather than defines (api::is_external_package), except the
  // package this file is part of: in Lightning's own repository `lightning` is project code.
  bool is_external_package(std::string_view top) const { return top != own_package_ && api::is_external_package(top); }
  bool has_star_import() const { return !star_imports_.empty(); }
  const std::vector<std::string>& star_imports() const { return star_imports_; }

  // --- Values -------------------------------------------------------------------
  ValueInfo infer_value(TSNode expr) const;
  const ClassInfo* class_info(std::string_view qualname) const;

  // --- Context ------------------------------------------------------------------
  bool in_no_grad() const;  // innermost grad-mode context of the current function disables grad
  bool in_context(GradContext kind) const;
  bool in_main_guard() const { return main_guard_depth_ > 0; }
  const FunctionState& function() const { return *functions_.back(); }
  FunctionState& function() { return *functions_.back(); }
  bool in_function() const { return functions_.size() > 1; }
  const std::vector<LoopState>& loops() const { return loops_; }
  // Loops of the current function only (a loop around a def does not run its body).
  size_t loop_depth() const { return loops_.size() - function().loop_base; }
  // Conditions (if/elif/while/ternary) enclosing the current node in this function.
  std::span<const TSNode> enclosing_conditions() const;
  const ClassInfo* enclosing_class() const;
  bool is_pytest_file() const { return pytest_file_; }
  bool has_main_guard() const { return main_guard_node_.id != nullptr; }
  TSNode main_guard_node() const { return main_guard_node_; }
  bool uses_cuda() const { return uses_cuda_; }

  // The model a call runs forward (`model(x)`, `self.net(x)`), as written; empty when the
  // callee is not known to be a model. With `by_name`, parameters and attributes named
  // like models (model, net, encoder, ...) count too. A view of the source text.
  std::string_view forward_pass_target(TSNode call, bool by_name) const;

  // Whether `receiver` ("model", "self.net") is in eval mode at this point of the function.
  bool is_in_eval_mode(std::string_view receiver) const;

 private:
  friend class Checker;

  // While the Checker dispatches one event the model does not change (rules see it
  // const), and several rules ask about the same nodes (a call's callee, an assigned
  // value): their answers are kept for the event's duration.
  void begin_event() const;
  void end_event() const { memo_active_ = false; }
  std::optional<std::string> resolve_uncached(TSNode expr) const;
  ValueInfo infer_uncached(TSNode expr) const;
  mutable bool memo_active_ = false;
  mutable EventMemo<std::optional<std::string>> resolved_;
  mutable EventMemo<ValueInfo> inferred_;

  Binding* bind(std::string_view name, Binding binding);
  std::string qualify(std::string_view name) const;  // name in the innermost def scope

  std::string_view source_;
  std::string module_;
  std::string package_;      // for relative imports
  std::string own_package_;  // see is_external_package
  std::vector<Scope> scopes_;
  std::vector<size_t> scope_stack_;
  std::vector<std::unique_ptr<ClassInfo>> classes_;
  std::unordered_map<std::string_view, size_t> class_by_qualname_;  // views of ClassInfo::qualname
  std::vector<std::unique_ptr<FunctionState>> functions_;           // stack; [0] is the module
  std::vector<std::pair<GradContext, bool>> contexts_;              // (kind, disables grad)
  std::vector<LoopState> loops_;
  std::vector<TSNode> conditions_;
  std::vector<std::string> star_imports_;
  // Owned copies of names that are not slices of the source (dotted import names).
  std::vector<std::unique_ptr<std::string>> owned_names_;
  int main_guard_depth_ = 0;
  TSNode main_guard_node_{};
  bool pytest_file_ = false;
  bool uses_cuda_ = false;
  // Command-line options whose default names a GPU (`parser.add_argument("--device",
  // default="cuda")`): `args.device` is a CUDA device unless the user says otherwise.
  std::vector<std::string> cuda_options_;
};

}  // namespace torchlint::python
