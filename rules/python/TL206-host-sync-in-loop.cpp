// TL206 host-sync-in-loop: every iteration of the hot training loop copies a tensor to the
// host (`.item()`, `.cpu()`, `print(loss)`), which makes the CPU wait for the GPU.
#include <algorithm>
#include <unordered_set>

#include "catalog.h"
#include "python/shared/device.h"
#include "python/rule.h"
#include "python/shared/training_loop.h"

namespace torchlint {
namespace python {
namespace {

using namespace loop_util;

struct Candidate {
  TSNode node{};
  TSNode loop{};                   // the innermost loop holding the call
  std::string what;                // `loss.item()`, `print(loss)`
  bool tensor = false;             // known to be a tensor of the forward pass
  std::vector<std::string> roots;  // else: names that make it one if the loop back-propagates them
};

class HostSyncInLoop final : public Rule {
 public:
  // Only loops that step an optimizer (`.step()`) are judged.
  static constexpr std::string_view kTriggers[] = {"step"};

  void on_start(RuleContext& ctx) override { names_ = &ctx.analysis<TensorNames>(); }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    if (model.loop_depth() == 0 || model.is_pytest_file()) return;  // tests check values on purpose
    std::vector<TSNode> values;
    std::string what;
    if (!ts_node_is_null(call.receiver) && call.positional_count() == 0 &&
        (call.method == "item" || call.method == "cpu" || call.method == "numpy" || call.method == "tolist")) {
      values.push_back(call.receiver);
      what = std::string(model.text(call.node));
    } else if (call.qualname == "builtins.float" && call.positional_count() == 1) {
      values.push_back(call.positional(0));
      what = std::string(model.text(call.node));
    } else if (call.qualname == "builtins.print") {
      printed_values(call, values);
    }
    if (values.empty()) return;
    const LoopState& loop = model.loops().back();
    // Logging every N steps (any condition in the loop) syncs rarely enough.
    if (guarded_within(call.node, loop.node)) return;
    Candidate c{call.node, loop.node, std::move(what)};
    for (TSNode v : values) {
      Origin o = names_->classify(v, model);
      std::string root;
      if (o == Origin::kUnknown) {
        // `loss.cpu()`: computed from `loss`, a tensor when that is one.
        TSNode r = root_identifier(v);
        if (ts_node_is_null(r)) continue;
        root = std::string(model.text(r));
        o = names_->origin(root, model);
      }
      if (o == Origin::kPython) continue;  // `loss = loss.item()` earlier
      if (o == Origin::kUnknown) {
        c.roots.push_back(root);
        if (c.what.empty()) c.what = "print(" + std::string(model.text(v)) + ")";
        continue;
      }
      c.tensor = true;
      if (c.what.empty() || c.what.starts_with("print(")) c.what = "print(" + std::string(model.text(v)) + ")";
      break;
    }
    if (!c.tensor && c.roots.empty()) return;
    pending_.push_back(std::move(c));
  }

  void on_loop_end(const LoopState& loop, RuleContext& ctx) override {
    std::vector<Candidate> mine;
    std::erase_if(pending_, [&](Candidate& c) {
      if (!ts_node_eq(c.loop, loop.node)) return false;
      mine.push_back(std::move(c));
      return true;
    });
    bool hot = trains_directly(loop);
    nested_.close(loop.node);
    if (!hot || mine.empty()) return;
    std::unordered_set<std::string> backward = backward_names(loop, ctx.model().source());
    std::vector<TSNode> reported;
    for (const auto& c : mine) {
      if (!c.tensor &&
          std::none_of(c.roots.begin(), c.roots.end(), [&](const std::string& r) { return backward.contains(r); })) {
        continue;
      }
      // `x.cpu().numpy()`, `print(a.item())`: one finding per expression.
      if (std::any_of(reported.begin(), reported.end(),
                      [&](TSNode r) { return contains(r, c.node) || contains(c.node, r); })) {
        continue;
      }
      if (!reported.empty() && line_of(reported.back()) == line_of(c.node)) continue;
      reported.push_back(c.node);
      ctx.report(c.node,
                 "`" + c.what + "` copies a tensor to the host on every iteration of the training loop at line " +
                     std::to_string(line_of(loop.node)) +
                     ": the CPU stops until the GPU has finished all queued work, so the next batch cannot be "
                     "queued ahead; log every N steps (`if step % log_interval == 0:`) or keep running totals on "
                     "the device (`total += loss.detach()`) and read them after the loop",
                 std::nullopt, device_util::gpu_program_condition(ctx.model()));
    }
  }

 private:
  // What a print() shows: bare arguments, and expressions interpolated in f-strings.
  static void printed_values(const CallEvent& call, std::vector<TSNode>& out) {
    size_t n = call.positional_count();
    for (size_t i = 0; i < n; ++i) {
      TSNode arg = call.positional(i);
      if (ts_node_is_null(arg)) continue;
      Kind k = Syntax::get().kind(arg);
      if (k == Kind::kIdentifier || k == Kind::kAttribute || k == Kind::kSubscript) out.push_back(arg);
      if (k != Kind::kString) continue;
      for (TSNode part : named_children(arg)) {
        if (!is_type(part, "interpolation")) continue;
        TSNode expr = ts_node_named_child(part, 0);
        Kind ek = Syntax::get().kind(expr);
        // `{loss.item():.4f}` is a call: reported as the .item() it is.
        if (ek == Kind::kIdentifier || ek == Kind::kAttribute || ek == Kind::kSubscript) out.push_back(expr);
      }
    }
  }

  // The loop itself steps an optimizer (not only a loop nested in it): the per-batch loop,
  // not the epoch loop around it. The backward pass may be in an L-BFGS closure.
  bool trains_directly(const LoopState& loop) const {
    for (const auto& e : loop.events) {
      if (e.kind == LoopEventKind::kOptimizerStep && ts_node_is_null(nested_.nested_in(loop.node, e.node))) return true;
    }
    return false;
  }

  const TensorNames* names_ = nullptr;  // shared
  std::vector<Candidate> pending_;
  NestedLoops nested_;
};

}  // namespace
}  // namespace python

python::RuleEntry host_sync_in_loop_rule() {
  return python::rule_entry<python::HostSyncInLoop>(catalog_entry("TL206"));
}

}  // namespace torchlint
