// TL106 scheduler-before-optimizer: scheduler.step() runs before optimizer.step() in the same
// iteration, so the schedule skips its first value.
#include "catalog.h"
#include "python/rule.h"
#include "python/shared/training_loop.h"

namespace torchlint {
namespace python {
namespace {

using namespace loop_util;

class SchedulerBeforeOptimizer final : public Rule {
 public:
  // Its findings pair a scheduler step with an optimizer step: both are `.step()` calls.
  static constexpr std::string_view kTriggers[] = {"step"};

  void on_loop_end(const LoopState& loop, RuleContext& ctx) override {
    if (loop.steps_optimizer) check(loop, ctx);
    nested_.close(loop.node);
  }

 private:
  // ReduceLROnPlateau.step(metric), timm-style step(epoch): stepped with what they need,
  // wherever the user put them.
  static bool takes_arguments(const LoopEvent& e) {
    TSNode args = field(e.node, Syntax::get().fields().arguments);
    return !ts_node_is_null(args) && ts_node_named_child_count(args) > 0;
  }

  static bool is_plateau(const LoopEvent& e, const SemanticModel& model) {
    TSNode callee = field(e.node, Syntax::get().fields().function);
    if (!is_type(callee, "attribute")) return false;
    ValueInfo v = model.infer_value(field(callee, Syntax::get().fields().object));
    return v.type.find("ReduceLROnPlateau") != std::string::npos;
  }

  void check(const LoopState& loop, RuleContext& ctx) {
    const SemanticModel& model = ctx.model();
    std::vector<IterationEvent> it = iteration(loop, nested_);
    for (size_t s = 0; s < it.size(); ++s) {
      const LoopEvent& sched = *it[s].event;
      // Conditional steps (warmup phases, `if epoch > 0`) are deliberate schedules.
      if (sched.kind != LoopEventKind::kSchedulerStep || it[s].nested || it[s].guarded) continue;
      if (takes_arguments(sched) || is_plateau(sched, model)) continue;
      bool stepped_before = false;
      for (size_t i = 0; i < s && !stepped_before; ++i) {
        // An optimizer (maybe another one, maybe in a helper) already stepped in this
        // iteration: which optimizer the scheduler drives is unknown.
        auto k = it[i].event->kind;
        stepped_before = k == LoopEventKind::kOptimizerStep || k == LoopEventKind::kCall;
      }
      if (stepped_before) continue;
      for (size_t o = s + 1; o < it.size(); ++o) {
        const LoopEvent& opt = *it[o].event;
        if (opt.kind != LoopEventKind::kOptimizerStep) continue;
        std::string where = it[o].nested ? "in the nested loop at line " +
                                               std::to_string(line_of(nested_.nested_in(loop.node, opt.node)))
                                         : "in the same iteration";
        ctx.report(sched.node,
                   "`" + sched.receiver + ".step()` runs before `" + std::string(ctx.text(opt.node)) + "` (line " +
                       std::to_string(line_of(opt.node)) + ") " + where +
                       ": the scheduler advances before the optimizer has used the current learning rate, so the "
                       "first value of the schedule is skipped (PyTorch warns about this order since 1.1); call `" +
                       sched.receiver + ".step()` after the optimizer's step");
        ctx.relate(opt.node, "the optimizer's step, after the scheduler's");
        break;
      }
    }
  }

  NestedLoops nested_;
};

}  // namespace
}  // namespace python

python::RuleEntry scheduler_before_optimizer_rule() {
  return python::rule_entry<python::SchedulerBeforeOptimizer>(catalog_entry("TL106"));
}

}  // namespace torchlint
