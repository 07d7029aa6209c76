// TL107 loss-accumulates-graph: a loss tensor is added to a running total across the
// iterations of a training loop, keeping every iteration's autograd graph alive.
#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "catalog.h"
#include "python/rule.h"
#include "python/shared/training_loop.h"

namespace torchlint {
namespace python {
namespace {

using namespace loop_util;

struct Candidate {
  TSNode node{};                   // the accumulating statement or call
  std::string accumulator;         // `total`, `self.stats["loss"]`, `losses`
  std::string value;               // what is added, as written
  bool certain = false;            // a criterion result; otherwise it must be back-propagated in the loop
  std::vector<std::string> names;  // identifiers of unknown origin in the added value
};

class LossAccumulatesGraph final : public Rule {
 public:
  // Only loops that call `.backward()` are judged.
  static constexpr std::string_view kTriggers[] = {"backward"};

  void on_start(RuleContext& ctx) override { names_ = &ctx.analysis<TensorNames>(); }
  void on_assign(const AssignEvent& a, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    if (!ts_node_is_null(a.target) && !ts_node_is_null(a.value)) {
      std::string_view target = model.text(a.target);
      TSNode added{};
      if (a.op == "+=") {
        added = a.value;
      } else if (a.op == "=" && is_type(a.value, "binary_operator") && model.text(ts_node_child(a.value, 1)) == "+") {
        // total = total + loss (either order)
        TSNode left = field(a.value, Syntax::get().fields().left);
        TSNode right = field(a.value, Syntax::get().fields().right);
        if (model.text(left) == target)
          added = right;
        else if (model.text(right) == target)
          added = left;
      }
      if (!ts_node_is_null(added))
        consider(a.node, target, added, ctx);
      else if (a.op == "=" && model.loop_depth() > 0)
        resets_.push_back({std::string(target), a.node});
    }
  }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (ts_node_is_null(call.receiver)) return;
    Kind rk = Syntax::get().kind(call.receiver);
    if (rk != Kind::kIdentifier && rk != Kind::kAttribute && rk != Kind::kSubscript) return;
    std::string_view receiver = ctx.text(call.receiver);
    if (call.method == "append" && call.positional_count() == 1) consider(call.node, receiver, call.positional(0), ctx);
    if (call.method == "clear" && ctx.model().loop_depth() > 0) resets_.push_back({std::string(receiver), call.node});
  }

  void on_loop_end(const LoopState& loop, RuleContext& ctx) override {
    std::string_view source = ctx.model().source();
    std::unordered_set<std::string> backward;
    bool have_backward = false;
    std::unordered_set<std::string> reported;
    std::erase_if(pending_, [&](const Candidate& c) {
      if (!contains(loop.node, c.node)) return false;
      // Reset on every iteration: the total lives for one iteration only.
      for (const auto& [name, node] : resets_) {
        if (name == c.accumulator && contains(loop.node, node) && !guarded_within(node, loop.node)) return true;
      }
      if (!loop.calls_backward) return loop.depth == 0;  // keep for an enclosing loop that trains
      if (!have_backward) {
        backward = backward_names(loop, source);
        have_backward = true;
      }
      // `loss = loss + l` then `loss.backward()`: a multi-task sum or gradient accumulation.
      if (backward.contains(accumulator_root(c.accumulator))) return true;
      std::string value = c.value;
      if (!c.certain) {
        auto hit =
            std::find_if(c.names.begin(), c.names.end(), [&](const std::string& n) { return backward.contains(n); });
        if (hit == c.names.end()) return true;
        value = *hit;
      }
      if (reported.insert(c.accumulator).second) {
        ctx.report(c.node, "`" + c.accumulator + "` collects the loss tensor `" + value +
                               "` with its autograd graph on every iteration of the training loop at line " +
                               std::to_string(line_of(loop.node)) +
                               ": each iteration's graph stays referenced and memory grows; add `" + value +
                               ".item()` (or `.detach()`) instead");
      }
      return true;
    });
    if (loop.depth == 0) {
      std::erase_if(resets_, [&](const auto& r) { return contains(loop.node, r.second); });
    }
  }

 private:
  // `losses` in `losses`, `self.history` -> `self`: the variable the accumulator lives in.
  static std::string accumulator_root(std::string_view text) {
    size_t end = text.find_first_of(".[");
    return std::string(text.substr(0, end));
  }

  void consider(TSNode node, std::string_view accumulator, TSNode added, RuleContext& ctx) {
    const SemanticModel& model = ctx.model();
    if (model.loop_depth() == 0 || model.in_no_grad() || ts_node_is_null(added)) return;
    Candidate c;
    c.node = node;
    c.accumulator = std::string(accumulator);
    c.value = std::string(model.text(added));
    Origin o = names_->classify(added, model);
    if (o != Origin::kLoss && o != Origin::kUnknown) return;  // a number, a detached tensor, the outputs
    c.certain = o == Origin::kLoss;
    // The names `loss * batch_size` is computed from; of unknown origin (`loss =
    // outputs.loss`), a name is a loss only if the loop back-propagates it.
    std::string loss_name;
    std::vector<TSNode> operands{added};
    for (size_t i = 0; i < operands.size() && i < 16; ++i) {
      TSNode n = operands[i];
      if (is_type(n, "parenthesized_expression")) {
        operands.push_back(ts_node_named_child(n, 0));
      } else if (is_type(n, "binary_operator")) {
        std::string_view op = model.text(ts_node_child(n, 1));
        if (op != "*" && op != "/" && op != "+" && op != "-") continue;
        operands.push_back(field(n, Syntax::get().fields().left));
        operands.push_back(field(n, Syntax::get().fields().right));
      } else if (is_type(n, "identifier")) {
        Origin name_origin = names_->origin(model.text(n), model);
        if (name_origin == Origin::kUnknown) c.names.emplace_back(model.text(n));
        if (loss_name.empty() && c.certain && name_origin == Origin::kLoss) {
          loss_name = std::string(model.text(n));
        }
      }
    }
    if (!c.certain && c.names.empty()) return;
    if (!loss_name.empty())
      c.value = loss_name;
    else if (!is_type(added, "identifier") && !is_type(added, "call") && !is_type(added, "attribute"))
      c.value = "(" + c.value + ")";
    pending_.push_back(std::move(c));
  }

  const TensorNames* names_ = nullptr;  // shared
  std::vector<Candidate> pending_;
  std::vector<std::pair<std::string, TSNode>> resets_;
};

}  // namespace
}  // namespace python

python::RuleEntry loss_accumulates_graph_rule() {
  return python::rule_entry<python::LossAccumulatesGraph>(catalog_entry("TL107"));
}

}  // namespace torchlint
