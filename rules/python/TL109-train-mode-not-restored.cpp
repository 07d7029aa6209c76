// TL109 train-mode-not-restored: a model put in eval mode inside the training loop is not
// put back in train mode before it trains again.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "catalog.h"
#include "core/name_table.h"
#include "core/text.h"
#include "python/rule.h"
#include "python/shared/training_loop.h"

namespace torchlint {
namespace python {
namespace {

using namespace loop_util;

enum class ModeKind : uint8_t {
  kEval,        // model.eval(), model.train(False)
  kTrain,       // model.train(), model.train(True)
  kMaybeTrain,  // model.train(flag), trainer.train_epoch(): may restore train mode
  kForward,     // model(x)
  kHelper,      // a call into the project
  kBackward,    // loss.backward()
};

struct ModeEvent {
  ModeKind kind;
  TSNode node{};
  std::string receiver;             // the model (eval, train, forward)
  bool other_model = false;         // kTrain: the receiver is known to be some model
  bool grad = false;                // kForward: autograd records it
  std::string callee;               // kHelper: qualified name
  std::vector<std::string> models;  // kHelper: model-like arguments, as keys
  bool self_method = false;         // kHelper: a method of the enclosing class
  const void* loop = nullptr;       // the innermost loop holding the call
  bool training = false;            // kForward: in the same loop body as a backward pass
};

// Parameter and attribute names that hold a model in training code.
bool names_model(std::string_view text) {
  std::string n = key(text);
  static const NameSet exact = {
      "model",         "net",  "network", "classifier", "encoder", "decoder", "generator",
      "discriminator", "netg", "netd",    "backbone",   "policy",  "student", "module",
  };
  return exact.contains(n) || n.ends_with("_model") || n.starts_with("model_") || n.ends_with("_net");
}

class TrainModeNotRestored final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    std::optional<ModeEvent> ev;
    std::string_view receiver = ts_node_is_null(call.receiver) ? std::string_view() : model.text(call.receiver);
    if (!receiver.empty() && call.method == "eval" && call.positional_count() == 0 && !call.has_kwargs_splat) {
      ctx.add_fact("sets-eval-mode");
      ev = ModeEvent{ModeKind::kEval, call.node, std::string(receiver)};
    } else if (!receiver.empty() && call.method == "train" && !call.has_args_splat) {
      TSNode mode = call.positional(0);
      if (ts_node_is_null(mode)) mode = call.keyword("mode", model.source());
      Kind mk = ts_node_is_null(mode) ? Kind::kTrue : Syntax::get().kind(mode);
      if (mk == Kind::kFalse) {
        ctx.add_fact("sets-eval-mode");
        ev = ModeEvent{ModeKind::kEval, call.node, std::string(receiver)};
      } else {
        ctx.add_fact("sets-train-mode");
        ev = ModeEvent{mk == Kind::kTrue ? ModeKind::kTrain : ModeKind::kMaybeTrain, call.node, std::string(receiver)};
        ev->other_model = model.infer_value(call.receiver).kind == ValueKind::kModel;
      }
    } else if (model.loop_depth() == 0) {
      // The events below matter only inside a loop.
    } else if (call.method == "backward") {
      ev = ModeEvent{ModeKind::kBackward, call.node};
    } else if (std::string target(call.forward_pass_target(model)); !target.empty()) {
      ev = ModeEvent{ModeKind::kForward, call.node, target};
      ev->grad = !model.in_no_grad();
    } else if (auto callee = helper(call, model)) {
      ev = ModeEvent{ModeKind::kHelper, call.node};
      ev->callee = *callee;
      if (const ClassInfo* cls = model.enclosing_class()) ev->self_method = callee->starts_with(cls->qualname + ".");
      collect_models(call, model, ev->models);
    } else if (ascii_ifind(call.method.empty() ? model.text(call.callee) : call.method, "train") !=
               std::string_view::npos) {
      // `trainer.train_epoch()`, `engine.train()`: unresolved, and may well call model.train().
      ev = ModeEvent{ModeKind::kMaybeTrain, call.node};
    }
    if (call.qualname && api::classify_call(*call.qualname) == ValueKind::kOptimizer) note_optimizer(call, model);
    if (!ev || model.loop_depth() == 0) return;
    const auto& loops = model.loops();
    ev->loop = loops.back().node.id;
    for (size_t i = model.function().loop_base; i < loops.size(); ++i) events_[loops[i].node.id].push_back(*ev);
  }

  void on_loop_end(const LoopState& loop, RuleContext& ctx) override {
    auto found = events_.find(loop.node.id);
    if (found == events_.end()) return;
    std::vector<ModeEvent> events = std::move(found->second);
    events_.erase(found);
    // A forward pass trains when its loop body also back-propagates (not a stray forward
    // after validation, not an evaluation loop nested in the epoch loop).
    std::unordered_set<const void*> backward_loops;
    for (const auto& e : events) {
      if (e.kind == ModeKind::kBackward) backward_loops.insert(e.loop);
    }
    for (auto& e : events) e.training = e.kind == ModeKind::kForward && e.grad && backward_loops.contains(e.loop);
    if (loop.calls_backward) {
      check_training_loop(events, ctx);
    } else if (loop.depth == 0) {
      check_helper_loop(loop, events, ctx);
    }
  }

 private:
  // What the engine records as a project call edge.
  static std::optional<std::string> helper(const CallEvent& call, const SemanticModel& model) {
    if (call.qualname) {
      std::string_view top = std::string_view(*call.qualname).substr(0, call.qualname->find('.'));
      if (model.is_external_package(top)) return std::nullopt;
      return *call.qualname;
    }
    if (!ts_node_is_null(call.receiver) && !call.method.empty()) {
      ValueInfo v = model.infer_value(call.receiver);
      if (v.kind == ValueKind::kInstance) return v.type + "." + std::string(call.method);
    }
    return std::nullopt;
  }

  static void collect_models(const CallEvent& call, const SemanticModel& model, std::vector<std::string>& out) {
    if (ts_node_is_null(call.arguments)) return;
    uint32_t n = ts_node_named_child_count(call.arguments);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode arg = ts_node_named_child(call.arguments, i);
      if (is_type(arg, "keyword_argument")) arg = field(arg, Syntax::get().fields().value);
      Kind k = Syntax::get().kind(arg);
      if (k != Kind::kIdentifier && k != Kind::kAttribute) continue;
      if (model.infer_value(arg).kind == ValueKind::kModel || names_model(model.text(arg)))
        out.push_back(key(model.text(arg)));
    }
  }

  // Which models optimizers built in this file train (`Adam(model.parameters())`).
  void note_optimizer(const CallEvent& call, const SemanticModel& model) {
    bool found = false;
    std::vector<TSNode> stack;
    if (!ts_node_is_null(call.arguments)) stack.push_back(call.arguments);
    for (int guard = 0; !stack.empty() && guard < 2048; ++guard) {
      TSNode n = stack.back();
      stack.pop_back();
      if (is_type(n, "call")) {
        TSNode callee = field(n, Syntax::get().fields().function);
        if (is_type(callee, "attribute")) {
          std::string_view attr = model.text(field(callee, Syntax::get().fields().attribute));
          if (attr == "parameters" || attr == "named_parameters") {
            // `model.backbone.parameters()` in a parameter group trains `model` too.
            for (TSNode o = field(callee, Syntax::get().fields().object); !ts_node_is_null(o);) {
              optimized_.insert(key(model.text(o)));
              o = is_type(o, "attribute") ? field(o, Syntax::get().fields().object) : TSNode{};
            }
            found = true;
          }
        }
      }
      append_named_children(n, stack);
    }
    if (!found) unknown_optimizer_ = true;
  }

  // Whether model `m` may be the one the optimizers train (a frozen teacher in eval mode
  // is not).
  bool trained(const std::string& m) const {
    if (unknown_optimizer_ || optimized_.empty() || optimized_.contains(key(m)) || optimized_.contains("self"))
      return true;
    return false;
  }

  static bool restores(const ModeEvent& e, const std::string& m) {
    if (e.kind == ModeKind::kMaybeTrain) return true;
    if (e.kind != ModeKind::kTrain) return false;
    if (key(e.receiver) == key(m) || m.starts_with(e.receiver + ".")) return true;
    return !e.other_model;  // `trainer.train()`, `self.train()`: may cover it
  }

  static bool passes(const ModeEvent& h, const std::string& m) {
    return std::find(h.models.begin(), h.models.end(), key(m)) != h.models.end() ||
           (h.self_method && m.starts_with("self."));
  }

  // From event `from`, around the iteration: the first grad-recording forward of `m`
  // reached before anything restores train mode. Helpers passed on the way may restore it.
  static std::optional<size_t> reaches_forward(const std::vector<ModeEvent>& events, size_t from, const std::string& m,
                                               std::vector<std::string>& helpers) {
    size_t n = events.size();
    for (size_t step = 1; step < n; ++step) {
      const ModeEvent& e = events[(from + step) % n];
      if (restores(e, m)) return std::nullopt;
      if (e.training && key(e.receiver) == key(m)) return (from + step) % n;
      if (e.kind == ModeKind::kHelper) {
        // `train_one_epoch(model)`: by its name it sets train mode.
        if (ascii_ifind(last_dotted_part(e.callee), "train") != std::string_view::npos) return std::nullopt;
        if (std::find(helpers.begin(), helpers.end(), e.callee) == helpers.end()) helpers.push_back(e.callee);
      }
    }
    return std::nullopt;
  }

  void check_training_loop(const std::vector<ModeEvent>& events, RuleContext& ctx) {
    std::vector<std::string> models;  // trained in this loop with autograd on
    for (const auto& e : events) {
      if (e.training && trained(e.receiver) &&
          std::none_of(models.begin(), models.end(), [&](const std::string& m) { return key(m) == key(e.receiver); })) {
        models.push_back(e.receiver);
      }
    }
    std::unordered_set<std::string> reported;  // one finding per model and loop
    // Direct eval() calls first: the surest finding for a model is the one reported.
    std::vector<size_t> order;
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i].kind == ModeKind::kEval) order.push_back(i);
    }
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i].kind == ModeKind::kHelper) order.push_back(i);
    }
    for (size_t i : order) {
      const ModeEvent& e = events[i];
      if (decided_.contains(e.node.id)) continue;
      for (const auto& m : models) {
        if (e.kind == ModeKind::kEval ? key(e.receiver) != key(m) : !passes(e, m)) continue;
        if (reported.contains(key(m))) break;
        decided_.insert(e.node.id);
        std::vector<std::string> helpers;
        auto forward = reaches_forward(events, i, m, helpers);
        if (!forward) break;
        std::vector<ProjectCondition> conditions;
        using K = ProjectCondition::Kind;
        std::string what;
        if (e.kind == ModeKind::kHelper) {
          // `validate(model)` that calls model.eval() and never model.train().
          helpers.push_back(e.callee);
          conditions.push_back({K::kReachableHas, {e.callee}, "sets-eval-mode", ""});
          what = "`" + std::string(ctx.text(field(e.node, Syntax::get().fields().function))) + "(...)` puts `" + m +
                 "` in eval mode and";
        } else {
          what = "`" + e.receiver + ".eval()` puts `" + m + "` in eval mode and";
        }
        if (!helpers.empty()) conditions.push_back({K::kReachableLacks, helpers, "sets-train-mode", "train"});
        reported.insert(key(m));
        ctx.report(e.node,
                   what + " nothing restores train mode before it trains again (line " +
                       std::to_string(line_of(events[*forward].node)) +
                       "): dropout stays off and batch-norm uses its running statistics while training; call `" + m +
                       ".train()` before the training step (e.g. at the top of each epoch)",
                   std::nullopt, std::move(conditions));
        break;
      }
    }
  }

  // An epoch loop that only calls helpers: `train_one_epoch(model, ...)` then
  // `evaluate(model, ...)`. Decided by the project facts of the helpers.
  void check_helper_loop(const LoopState& loop, const std::vector<ModeEvent>& events, RuleContext& ctx) {
    std::vector<std::string> all_helpers;
    std::vector<std::string> models;
    for (const auto& e : events) {
      if (e.kind == ModeKind::kMaybeTrain) return;
      if (e.kind == ModeKind::kHelper) {
        if (std::find(all_helpers.begin(), all_helpers.end(), e.callee) == all_helpers.end())
          all_helpers.push_back(e.callee);
        for (const auto& m : e.models) {
          if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
        }
      }
      if (e.kind == ModeKind::kEval && std::find(models.begin(), models.end(), key(e.receiver)) == models.end()) {
        models.push_back(key(e.receiver));
      }
    }
    using K = ProjectCondition::Kind;
    for (const auto& m : models) {
      if (!trained(m)) continue;
      std::vector<std::string> trainers;
      const ModeEvent* eval = nullptr;
      const ModeEvent* first_helper = nullptr;
      bool restored = false;
      for (const auto& e : events) {
        if (e.kind == ModeKind::kHelper && std::find(e.models.begin(), e.models.end(), m) != e.models.end()) {
          if (!first_helper) first_helper = &e;
          if (std::find(trainers.begin(), trainers.end(), e.callee) == trainers.end()) trainers.push_back(e.callee);
        }
        if (e.kind == ModeKind::kEval && key(e.receiver) == m && !eval) eval = &e;
        if (e.kind == ModeKind::kTrain && restores(e, m)) restored = true;
        if (e.training && key(e.receiver) == m) restored = true;  // trained here: not this case
      }
      if (restored || trainers.empty()) continue;
      const ModeEvent* anchor = eval ? eval : first_helper;
      if (decided_.contains(anchor->node.id)) continue;
      decided_.insert(anchor->node.id);
      std::vector<ProjectCondition> conditions;
      if (!eval) conditions.push_back({K::kReachableHas, trainers, "sets-eval-mode", ""});
      conditions.push_back({K::kReachableHas, trainers, "trains", ""});
      conditions.push_back({K::kReachableLacks, all_helpers, "sets-train-mode", "train"});
      conditions.push_back({K::kReachableLacks, trainers, "trains-in-eval-mode", ""});
      std::string names;
      for (const auto& t : trainers) names += (names.empty() ? "`" : ", `") + std::string(last_dotted_part(t)) + "`";
      std::string by = eval ? "`" + eval->receiver + ".eval()`" : "a function it calls (" + names + ")";
      ctx.report(anchor->node,
                 "the loop at line " + std::to_string(line_of(loop.node)) + " puts `" + m + "` in eval mode through " +
                     by + ", and no function called there ever calls `" + m +
                     ".train()`: from the second epoch on it trains with dropout off and frozen batch-norm "
                     "statistics; call `" +
                     m + ".train()` at the top of each epoch",
                 std::nullopt, std::move(conditions));
    }
  }

  std::unordered_map<const void*, std::vector<ModeEvent>> events_;
  std::unordered_set<const void*> decided_;
  std::unordered_set<std::string> optimized_;
  bool unknown_optimizer_ = false;
};

}  // namespace
}  // namespace python

python::RuleEntry train_mode_not_restored_rule() {
  return python::rule_entry<python::TrainModeNotRestored>(catalog_entry("TL109"));
}

}  // namespace torchlint
