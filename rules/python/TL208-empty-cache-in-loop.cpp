// TL208 empty-cache-in-loop: torch.cuda.empty_cache() on every iteration of a training loop.
#include <algorithm>
#include <unordered_set>

#include "catalog.h"
#include "python/rule.h"
#include "python/shared/training_loop.h"

namespace torchlint {
namespace python {
namespace {

using namespace loop_util;

struct Candidate {
  TSNode node{};
  TSNode loop{};                     // the outermost loop of the function holding the call
  TSNode innermost{};                // the loop the call is in
  bool training = false;             // a loop around it trains
  std::vector<std::string> helpers;  // project functions called in those loops
};

class EmptyCacheInLoop final : public Rule {
 public:
  // Only `torch.cuda.empty_cache` is judged.
  static constexpr std::string_view kTriggers[] = {"empty_cache"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (call.qualname != "torch.cuda.empty_cache" && call.qualname != "torch.cuda.memory.empty_cache") return;
    const SemanticModel& model = ctx.model();
    if (model.loop_depth() == 0) return;  // after the loop
    TSNode outermost = model.loops()[model.function().loop_base].node;
    // Periodic cleanup (`if step % 100 == 0`) or recovery in an OOM handler.
    if (guarded_within(call.node, outermost)) return;
    pending_.push_back({call.node, outermost, model.loops().back().node});
  }

  void on_loop_end(const LoopState& loop, RuleContext&) override {
    for (auto& c : pending_) {
      if (!contains(loop.node, c.node)) continue;
      if (loop.trains()) c.training = true;
      for (const auto& callee : loop.callees) {
        if (std::find(c.helpers.begin(), c.helpers.end(), callee) == c.helpers.end()) c.helpers.push_back(callee);
      }
    }
  }

  void on_function_end(const FunctionState& fn, RuleContext& ctx) override { flush(fn, ctx); }
  void on_module_end(RuleContext& ctx) override { flush(ctx.model().function(), ctx); }

 private:
  void flush(const FunctionState& fn, RuleContext& ctx) {
    std::vector<Candidate> mine;
    std::erase_if(pending_, [&](Candidate& c) {
      if (!fn.is_module_level && !contains(fn.node, c.node)) return false;
      mine.push_back(std::move(c));
      return true;
    });
    for (const auto& c : mine) {
      std::vector<ProjectCondition> conditions;
      // The loop calls the training step in a helper (`train_step(batch)`). A backward pass
      // with no optimizer step is a benchmark or a gradient probe, not training.
      if (!c.training && !fn.steps_optimizer) {
        if (c.helpers.empty()) continue;
        conditions.push_back({ProjectCondition::Kind::kReachableHas, c.helpers, "trains", ""});
      }
      ctx.report(c.node,
                 "`torch.cuda.empty_cache()` runs on every iteration of the training loop at line " +
                     std::to_string(line_of(c.innermost)) +
                     ": it frees no memory PyTorch could reuse, it only returns cached blocks to the driver, which "
                     "the allocator must then request again with slow, synchronising cudaMalloc calls; remove it, "
                     "or call it after the loop or when handling an out-of-memory error",
                 std::nullopt, std::move(conditions));
    }
  }

  std::vector<Candidate> pending_;
};

}  // namespace
}  // namespace python

python::RuleEntry empty_cache_in_loop_rule() {
  return python::rule_entry<python::EmptyCacheInLoop>(catalog_entry("TL208"));
}

}  // namespace torchlint
