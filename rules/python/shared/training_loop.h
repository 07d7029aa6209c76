#pragma once
// Shared by the training-loop rules (TL103-TL109, TL206, TL208, TL601): what one
// iteration of a loop does, which statements run only under a condition, and which names
// hold tensors of the forward pass.
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/text.h"
#include "python/rule.h"

namespace torchlint::python::loop_util {

// How two spellings of one object compare: `self.optimizer` and `optimizer` are the same
// optimizer in practice; `opt_g` and `opt_d` are not.
inline std::string key(std::string_view receiver) { return ascii_lower(last_dotted_part(receiver)); }

inline bool contains(TSNode outer, TSNode inner) {
  return !ts_node_is_null(outer) && !ts_node_is_null(inner) && ts_node_start_byte(outer) <= ts_node_start_byte(inner) &&
         ts_node_end_byte(inner) <= ts_node_end_byte(outer);
}

inline uint32_t line_of(TSNode n) { return ts_node_start_point(n).row + 1; }

// Whether `node` runs only sometimes per execution of `stop` (a loop): under an `if`/`elif`/
// `else` branch, a conditional expression's branch, the right operand of `and`/`or`, an
// `except` handler, a `case`, a nested `while`, or inside a nested def/lambda that the
// loop does not run. A condition itself is evaluated every time and is not guarded.
bool guarded_within(TSNode node, TSNode stop);

// Whether `node` lies in an `except` handler between it and `stop`.
bool in_except_within(TSNode node, TSNode stop);

// Loops that already ended in this file, to tell a loop's own statements from those of
// the loops nested in it (the engine gives a loop the events of its nested loops too).
class NestedLoops {
 public:
  // The ended loop strictly inside `loop` that holds `node`, or null.
  TSNode nested_in(TSNode loop, TSNode node) const;
  // Call once `loop` was analysed: it replaces the loops nested in it.
  void close(TSNode loop);

 private:
  std::vector<TSNode> closed_;
};

struct IterationEvent {
  const LoopEvent* event = nullptr;
  bool nested = false;   // belongs to a loop nested in this one
  bool guarded = false;  // direct events only: runs under a condition or in a handler
};

// One iteration of `loop`, in source order.
std::vector<IterationEvent> iteration(const LoopState& loop, const NestedLoops& nested);

// An optimizer step that passes a closure (`opt.step(closure)`, LBFGS): the closure
// zeroes, computes and back-propagates itself.
bool is_closure_step(const LoopEvent& e, std::string_view source);

// The loss expression a backward event differentiates: `loss` in `loss.backward()`,
// `scaler.scale(loss).backward()` and `accelerator.backward(loss)`.
TSNode backward_loss(const LoopEvent& e);

// Identifiers inside a (small) expression.
void identifiers_in(TSNode expr, std::string_view source, std::unordered_set<std::string>& out);

// Whether `name` is bound by a `for` loop around `node` (`for opt in optimizers:`): it then
// stands for several objects in turn.
bool is_loop_variable(TSNode node, std::string_view name, std::string_view source);

// Names of the losses back-propagated in a loop.
std::unordered_set<std::string> backward_names(const LoopState& loop, std::string_view source);

// --- Tensors of the forward pass ---------------------------------------------------

enum class Origin : uint8_t {
  kUnknown,
  kPython,    // a Python number or host value: `.item()`, `float(t)`, literals
  kLoss,      // a loss with its autograd graph: a criterion call and arithmetic on it
  kOutput,    // the model's output (or something computed from it)
  kDetached,  // a device tensor without graph: `.detach()`, `.data`
};

// A torch.nn.functional loss (`F.cross_entropy`, `F.mse_loss`).
bool is_loss_function(std::string_view qualname);

// A call of a loss criterion: `criterion(out, y)` with `criterion = nn.CrossEntropyLoss()`,
// `F.cross_entropy(...)`, `self.loss_fn(...)`.
bool is_criterion_call(TSNode call, const SemanticModel& model);
// is_criterion_call for a callee whose qualified name `q` is already resolved.
bool is_criterion_callee(TSNode callee, const std::optional<std::string>& q, const SemanticModel& model);

// The origin of the values bound to names, per function, in source order. A shared
// analysis (TL107, TL206): names are updated after the rules saw an assignment, so a rule
// reads what they held before it.
class TensorNames final : public Analysis {
 public:
  void after_assign(const AssignEvent& a, RuleContext& ctx) override { on_assign(a, ctx.model()); }
  void on_function_end(const FunctionState& fn, RuleContext&) override { function_end(fn); }

  Origin origin(std::string_view name, const SemanticModel& model) const;

  Origin classify(TSNode expr, const SemanticModel& model, int depth = 0) const;

  // Keeps the names current; call from on_assign.
  void on_assign(const AssignEvent& a, const SemanticModel& model);

  void function_end(const FunctionState& fn) { names_.erase(fn.qualname); }

 private:
  // Names are views of the file's text; an unknown origin is not stored (origin() of an
  // absent name is unknown), which keeps the maps small.
  using Names = std::unordered_map<std::string_view, Origin>;
  static void set(Names& names, std::string_view name, Origin o);
  PerFunction<Names> names_;
};

// The identifier an expression is computed from (`loss` in `(loss * 2).mean()`), when
// there is one; null otherwise.
TSNode root_identifier(TSNode expr);

}  // namespace torchlint::python::loop_util
