// TL104 training-step-order: within one iteration, gradients are cleared between backward()
// and step(), or the optimizer steps before the backward pass that should feed it.
#include <algorithm>
#include <unordered_set>

#include "catalog.h"
#include "python/rule.h"
#include "python/shared/training_loop.h"

namespace torchlint {
namespace python {
namespace {

using namespace loop_util;

class TrainingStepOrder final : public Rule {
 public:
  // Only loops that call `.backward()` (and step) are judged.
  static constexpr std::string_view kTriggers[] = {"backward"};

  // Gradient surgery writes gradients back after a zero_grad(): `p.grad = g`,
  // `p.grad.copy_(g)` (PCGrad, gradient projection, custom accumulation).
  void on_assign(const AssignEvent& a, RuleContext& ctx) override {
    if (ctx.model().loop_depth() == 0 || ts_node_is_null(a.target) || !is_type(a.target, "attribute")) return;
    if (ctx.text(field(a.target, Syntax::get().fields().attribute)) == "grad")
      grad_writes_.push_back(ts_node_start_byte(a.node));
  }
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (ctx.model().loop_depth() == 0 || ts_node_is_null(call.receiver)) return;
    std::string_view r = ctx.text(call.receiver);
    if ((r.ends_with(".grad") || r.ends_with(".grad.data")) && call.method.ends_with("_")) {
      grad_writes_.push_back(ts_node_start_byte(call.node));
    }
  }

  void on_loop_end(const LoopState& loop, RuleContext& ctx) override {
    if (loop.calls_backward && loop.steps_optimizer) check(loop, ctx);
    nested_.close(loop.node);
    if (loop.depth == 0) grad_writes_.clear();
  }

 private:
  void check(const LoopState& loop, RuleContext& ctx) {
    std::string_view source = ctx.model().source();
    std::vector<IterationEvent> it = iteration(loop, nested_);
    auto is = [&](size_t i, LoopEventKind k) { return it[i].event->kind == k; };
    auto step_of = [&](size_t i, const std::string& k) {
      return is(i, LoopEventKind::kOptimizerStep) && !it[i].nested && key(it[i].event->receiver) == k &&
             !is_closure_step(*it[i].event, source);
    };

    // (a) backward, zero_grad(opt), step(opt), with no backward in between: the step
    // applies cleared gradients. A zero_grad under a condition (skipping a NaN batch, then
    // `continue`) or in an OOM handler is a deliberate reset, not a misorder.
    for (size_t z = 0; z < it.size(); ++z) {
      if (!is(z, LoopEventKind::kZeroGrad) || it[z].nested || it[z].guarded) continue;
      std::string k = key(it[z].event->receiver);
      if (!api::receiver_names_optimizer(it[z].event->receiver))
        continue;  // a model's zero_grad: its optimizer is unknown
      size_t b = z;
      for (size_t i = 0; i < z; ++i) {
        if (is(i, LoopEventKind::kBackward) && !it[i].nested) b = i;
        // The gradients were already used (or cleared) after that backward.
        if (b != z && i > b && (step_of(i, k) || is(i, LoopEventKind::kZeroGrad))) b = z;
      }
      if (b == z) continue;
      for (size_t s = z + 1; s < it.size(); ++s) {
        // A backward pass (here, in a nested loop, or maybe in a helper) refills them.
        if (is(s, LoopEventKind::kBackward) || is(s, LoopEventKind::kCall)) break;
        if (is(s, LoopEventKind::kZeroGrad) && !it[s].nested) break;
        if (!step_of(s, k)) continue;
        uint32_t from = ts_node_start_byte(it[z].event->node), to = ts_node_start_byte(it[s].event->node);
        if (std::any_of(grad_writes_.begin(), grad_writes_.end(), [&](uint32_t w) { return from < w && w < to; }))
          break;
        ctx.report(it[z].event->node,
                   "`" + it[z].event->receiver + ".zero_grad()` runs between the backward pass (line " +
                       std::to_string(line_of(it[b].event->node)) + ") and `" +
                       std::string(ctx.text(it[s].event->node)) + "` (line " +
                       std::to_string(line_of(it[s].event->node)) +
                       "): the step sees cleared gradients and the iteration learns nothing; zero the gradients "
                       "before backward() or after step()");
        ctx.relate(it[b].event->node, "the backward pass");
        ctx.relate(it[s].event->node, "the step that sees cleared gradients");
        break;
      }
    }

    // (b) step(opt) before any backward of the iteration, with a backward after it: each
    // step applies the previous batch's gradients. Only for loops with one optimizer (with
    // several, which backward feeds which step is unknown) and unconditional steps (a
    // conditional step at the top is gradient accumulation from earlier iterations).
    std::unordered_set<std::string> optimizers;
    for (const auto& e : it) {
      if (e.event->kind == LoopEventKind::kOptimizerStep) optimizers.insert(key(e.event->receiver));
    }
    if (optimizers.size() != 1) return;
    for (size_t s = 0; s < it.size(); ++s) {
      if (is(s, LoopEventKind::kBackward) || is(s, LoopEventKind::kCall)) return;  // helpers may back-propagate
      if (!is(s, LoopEventKind::kOptimizerStep)) continue;
      if (it[s].nested || it[s].guarded || is_closure_step(*it[s].event, source)) return;
      for (size_t b = s + 1; b < it.size(); ++b) {
        if (is(b, LoopEventKind::kOptimizerStep)) return;  // stepped again after a later backward
        if (!is(b, LoopEventKind::kBackward) || it[b].nested) continue;
        for (size_t after = b + 1; after < it.size(); ++after) {
          if (is(after, LoopEventKind::kOptimizerStep)) return;
        }
        ctx.report(it[s].event->node,
                   "`" + std::string(ctx.text(it[s].event->node)) + "` runs before the backward pass (line " +
                       std::to_string(line_of(it[b].event->node)) +
                       ") of the same iteration: each step applies the previous batch's gradients (the first step "
                       "has none, the last batch's are never applied); call step() after backward()");
        ctx.relate(it[b].event->node, "the backward pass of the same iteration");
        return;
      }
      return;
    }
  }

  NestedLoops nested_;
  std::vector<uint32_t> grad_writes_;  // in the current outermost loop
};

}  // namespace
}  // namespace python

python::RuleEntry training_step_order_rule() {
  return python::rule_entry<python::TrainingStepOrder>(catalog_entry("TL104"));
}

}  // namespace torchlint
