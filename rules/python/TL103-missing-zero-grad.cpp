// TL103 missing-zero-grad: a training loop steps an optimizer whose gradients it never zeroes.
#include <algorithm>
#include <unordered_set>

#include "catalog.h"
#include "core/text.h"
#include "python/rule.h"
#include "python/shared/training_loop.h"

namespace torchlint {
namespace python {
namespace {

using namespace loop_util;

// A loop's first line (`for x, y in loader:`), as a related location: the whole loop would
// paint its body too.
std::pair<uint32_t, uint32_t> loop_header(TSNode loop, std::string_view source) {
  uint32_t start = ts_node_start_byte(loop), end = ts_node_end_byte(loop);
  size_t eol = source.find('\n', start);
  if (eol != std::string_view::npos && eol < end) end = static_cast<uint32_t>(eol);
  return {start, end};
}

// Calls that clear gradients besides `zero_grad()`: `p.grad.zero_()`, `p.grad.data.fill_(0)`,
// and helpers named for it (`zero_grads(model)`, `reset_gradients()`).
bool clears_gradients(const CallEvent& call, const SemanticModel& model) {
  if (!ts_node_is_null(call.receiver) && (call.method == "zero_" || call.method == "fill_" || call.method == "mul_")) {
    std::string_view r = model.text(call.receiver);
    if (r.ends_with(".grad") || r.ends_with(".grad.data")) return true;
  }
  std::string_view spelled = last_dotted_part(call.method.empty() ? model.text(call.callee) : call.method);
  // Every name below contains "grad": most calls are decided without a lower-case copy.
  auto has_grad = [](std::string_view s) {
    for (size_t i = 0; i + 4 <= s.size(); ++i) {
      if ((s[i] | 0x20) == 'g' && (s[i + 1] | 0x20) == 'r' && (s[i + 2] | 0x20) == 'a' && (s[i + 3] | 0x20) == 'd') {
        return true;
      }
    }
    return false;
  };
  if (!has_grad(spelled)) return false;
  std::string name = ascii_lower(spelled);
  if (name.find("zero_grad") != std::string::npos) return true;
  return name.find("grad") != std::string::npos &&
         (name.find("zero") != std::string::npos || name.find("reset") != std::string::npos ||
          name.find("clear") != std::string::npos);
}

class MissingZeroGrad final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    // zero_grad() itself is a loop event, matched per optimizer at the loop's end.
    if (call.method == "zero_grad")
      ctx.add_fact("zeroes-grad");
    else if (clears_gradients(call, ctx.model()))
      cleared(ctx);
  }

  // `p.grad = None` (in a loop over the parameters) clears gradients too.
  void on_assign(const AssignEvent& a, RuleContext& ctx) override {
    if (ts_node_is_null(a.target) || Syntax::get().kind(a.target) != Kind::kAttribute) return;
    if (ctx.text(field(a.target, Syntax::get().fields().attribute)) == "grad") cleared(ctx);
  }

  void on_loop_end(const LoopState& loop, RuleContext& ctx) override {
    // Judged once per outermost loop: zeroing anywhere in it (an outer epoch loop that
    // accumulates over the inner loop, a branch for gradient accumulation) counts.
    if (loop.depth != 0 || !loop.trains()) return;
    if (cleared_loops_.erase(loop.node.id) > 0) return;
    const SemanticModel& model = ctx.model();
    bool zeroes_any_model = false;
    std::unordered_set<std::string> zeroed;
    for (const auto& e : loop.events) {
      if (e.kind != LoopEventKind::kZeroGrad) continue;
      // `model.zero_grad()`, `self.zero_grad()`: which optimizer owns those parameters is
      // not known, so it counts for all of them.
      // `for opt in optimizers: opt.zero_grad()`: which ones is not known either.
      if (!api::receiver_names_optimizer(e.receiver) || is_loop_variable(e.node, e.receiver, model.source()))
        zeroes_any_model = true;
      zeroed.insert(key(e.receiver));
    }
    if (zeroes_any_model) return;
    std::vector<std::string> helpers;
    for (const auto& c : loop.callees) {
      if (std::find(helpers.begin(), helpers.end(), c) == helpers.end()) helpers.push_back(c);
    }
    std::unordered_set<std::string> reported;
    for (const auto& e : loop.events) {
      if (e.kind != LoopEventKind::kOptimizerStep || is_closure_step(e, model.source())) continue;
      std::string k = key(e.receiver);
      if (zeroed.contains(k) || !reported.insert(k).second) continue;
      if (is_loop_variable(e.node, e.receiver, model.source())) continue;  // one of several optimizers
      std::vector<ProjectCondition> conditions;
      if (!helpers.empty()) {
        // A helper called in the loop may zero the gradients.
        conditions.push_back({ProjectCondition::Kind::kReachableLacks, helpers, "zeroes-grad", "zero"});
        conditions.push_back({ProjectCondition::Kind::kReachableLacks, helpers, "zeroes-grad", "grad"});
      }
      ctx.report(e.node,
                 "optimizer `" + e.receiver + "` is stepped in the training loop at line " +
                     std::to_string(line_of(loop.node)) +
                     " but its gradients are never zeroed there: every backward() adds to the gradients of all "
                     "previous iterations, so each step uses a growing sum; call `" +
                     e.receiver + ".zero_grad()` once per step (before backward() or after step())",
                 std::nullopt, std::move(conditions));
      auto [header_start, header_end] = loop_header(loop.node, model.source());
      ctx.relate(header_start, header_end, "the training loop");
    }
  }

 private:
  void cleared(RuleContext& ctx) {
    ctx.add_fact("zeroes-grad");
    const SemanticModel& model = ctx.model();
    const auto& loops = model.loops();
    size_t base = model.function().loop_base;
    for (size_t i = base; i < loops.size(); ++i) cleared_loops_.insert(loops[i].node.id);
  }

  std::unordered_set<const void*> cleared_loops_;
};

}  // namespace
}  // namespace python

python::RuleEntry missing_zero_grad_rule() {
  return python::rule_entry<python::MissingZeroGrad>(catalog_entry("TL103"));
}

}  // namespace torchlint
