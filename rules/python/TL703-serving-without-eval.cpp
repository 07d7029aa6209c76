// TL703 serving-without-eval: a model answers requests while still in training mode.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "catalog.h"
#include "python/api_tables.h"
#include "python/shared/serving.h"
#include "python/training_checkpoint.h"

namespace torchlint {
namespace python {
namespace {

enum class Source : uint8_t {
  kEval,     // already in eval mode: `.eval()` in the chain, HF from_pretrained, torch.jit.load
  kModel,    // a module constructor: training mode until someone calls eval()
  kProject,  // a project function: it may call eval() itself
  kOther,    // anything torchlint cannot tell
};

struct Creation {
  std::string target;  // "model", "self.net"
  std::string owner;   // "" for module globals, else the class qualname
  Source source = Source::kOther;
  std::string callee;  // kProject: the function
  std::string inner;   // kModel: the wrapped model (`DataParallel(net)`)
  TSNode node{};       // the assignment
};

// The names a function declares `global` in its body.
std::vector<std::string_view> global_names(TSNode fn, const SemanticModel& model) {
  std::vector<std::string_view> out;
  TSNode body = field(fn, Syntax::get().fields().body);
  for (TSNode stmt : named_children(body)) {
    if (!is_type(stmt, "global_statement")) continue;
    for (TSNode name : named_children(stmt)) out.push_back(model.text(name));
  }
  return out;
}

Creation classify(TSNode value, const SemanticModel& model) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  Creation c;
  for (int depth = 0; depth < 16; ++depth) {
    Kind k = syn.kind(value);
    if (k == Kind::kParenthesizedExpression) {
      value = ts_node_named_child(value, 0);
      continue;
    }
    if (k != Kind::kCall) return c;
    TSNode callee = field(value, f.function);
    if (syn.kind(callee) == Kind::kAttribute) {
      std::string_view method = model.text(field(callee, f.attribute));
      TSNode args = field(value, f.arguments);
      TSNode first =
          ts_node_is_null(args) || ts_node_named_child_count(args) == 0 ? TSNode{} : ts_node_named_child(args, 0);
      if (method == "eval" || (method == "train" && !ts_node_is_null(first) && syn.kind(first) == Kind::kFalse)) {
        c.source = Source::kEval;
        return c;
      }
      if (api::module_moving_methods().contains(method)) {
        value = field(callee, f.object);
        continue;
      }
    }
    auto q = model.resolve_qualified_name(callee);
    if (!q) return c;
    // Hugging Face returns from_pretrained models in eval mode; TorchScript keeps the saved mode.
    if (q->ends_with(".from_pretrained") || *q == "torch.jit.load" || *q == "transformers.pipeline") {
      c.source = Source::kEval;
      return c;
    }
    if (model.infer_value(value).kind == ValueKind::kModel) {
      c.source = Source::kModel;
      TSNode args = field(value, f.arguments);
      TSNode first =
          ts_node_is_null(args) || ts_node_named_child_count(args) == 0 ? TSNode{} : ts_node_named_child(args, 0);
      if (!ts_node_is_null(first) && syn.kind(first) == Kind::kIdentifier) c.inner = std::string(model.text(first));
      return c;
    }
    if (!is_library_name(*q)) {
      c.source = Source::kProject;
      c.callee = *q;
    }
    return c;
  }
  return c;
}

class ServingWithoutEval final : public Rule {
 public:
  void on_start(RuleContext& ctx) override { handlers_ = &ctx.analysis<RequestHandlers>(); }
  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    // What models are made of matters only for what handlers serve.
    if (event.op != "=" || ts_node_is_null(event.value) || !handlers_->may_have_handlers(ctx)) return;
    const SemanticModel& model = ctx.model();
    const Syntax& syn = Syntax::get();
    const FunctionState& fn = model.function();
    Kind tk = syn.kind(event.target);
    Creation c;
    if (tk == Kind::kIdentifier) {
      std::string_view name = model.text(event.target);
      if (!fn.is_module_level && !declares_global(fn, name, model)) {
        if (handlers_->current_is_handler(ctx)) locals_.insert(fn.qualname + "|" + std::string(name));
        return;
      }
    } else if (tk == Kind::kAttribute) {
      TSNode object = field(event.target, syn.fields().object);
      const ClassInfo* cls = model.enclosing_class();
      if (syn.kind(object) != Kind::kIdentifier || model.text(object) != "self" || !cls) return;
      c.owner = cls->qualname;
    } else {
      return;
    }
    if (syn.kind(event.value) == Kind::kNone) return;  // a placeholder filled in later
    Creation s = classify(event.value, model);
    c.source = s.source;
    c.callee = std::move(s.callee);
    c.inner = std::move(s.inner);
    c.target = std::string(model.text(event.target));
    c.node = event.node;
    creations_.push_back(std::move(c));
  }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    const Syntax& syn = Syntax::get();
    const FunctionState& fn = model.function();
    if (call.method == "eval" || (call.method == "train" && !ts_node_is_null(call.positional(0)) &&
                                  syn.kind(call.positional(0)) == Kind::kFalse)) {
      std::string root = ts_node_is_null(call.receiver) ? std::string() : receiver_root(call.receiver, model);
      if (!root.empty()) {
        evals_.insert(root);
        if (const ClassInfo* cls = model.enclosing_class()) evals_.insert(cls->qualname + "|" + root);
      }
      sets_eval_.insert(fn.qualname);
    }
    if (call.qualname && (call.qualname->ends_with(".from_pretrained") || *call.qualname == "torch.jit.load")) {
      sets_eval_.insert(fn.qualname);
    }
    if (!handlers_->may_have_handlers(ctx)) return;  // the rest concerns served models only
    // A model handed to a project function, which may put it in eval mode.
    if (!ts_node_is_null(call.arguments)) {
      for (size_t i = 0; i < call.arg_count; ++i) {
        TSNode arg = call.args[i].value;
        Kind k = syn.kind(arg);
        if (k != Kind::kIdentifier && k != Kind::kAttribute) continue;
        std::string_view text = model.text(arg);
        if (!call.qualname) {
          handed_unknown_.insert(text);
        } else if (!is_library_name(*call.qualname)) {
          handed_[text].push_back(*call.qualname);
        }
      }
    }
    if (!handlers_->current_is_handler(ctx)) return;
    std::string target(call.forward_pass_target(model));
    if (target.empty() || handlers_->is_library_callable(target, ctx)) return;
    if (!target.starts_with("self.")) {
      const Binding* b = model.lookup(target);
      if (!b || b->kind == BindingKind::kParameter || b->kind == BindingKind::kImport) return;
    }
    const ClassInfo* cls = model.enclosing_class();
    served_.push_back({call.node, target, fn.qualname, fn.name, cls ? cls->qualname : std::string()});
  }

  void on_function_end(const FunctionState& fn, RuleContext& ctx) override {
    if (sets_eval_.contains(fn.qualname)) ctx.add_fact("sets-eval");
    // An endpoint that trains (online learning) wants training mode.
    if (fn.calls_backward || fn.steps_optimizer) {
      std::erase_if(served_, [&](const Served& s) { return s.handler == fn.qualname; });
    }
  }

  void on_module_end(RuleContext& ctx) override {
    if (sets_eval_.contains(ctx.model().function().qualname)) ctx.add_fact("sets-eval");
    std::unordered_set<std::string> seen;
    using K = ProjectCondition::Kind;
    for (const auto& s : served_) {
      bool self_attribute = s.target.starts_with("self.");
      std::string owner = self_attribute ? s.class_qualname : std::string();
      if (!seen.insert(owner + "|" + s.target).second) continue;
      if (!self_attribute && locals_.contains(s.handler + "|" + s.target)) continue;  // loaded per request: TL702
      if (evals_.contains(self_attribute ? owner + "|" + s.target : s.target)) continue;
      if (handed_unknown_.contains(s.target)) continue;
      std::vector<ProjectCondition> conditions;
      const Creation* made = nullptr;
      bool decided = true;
      for (const auto& c : creations_) {
        if (c.target != s.target || c.owner != owner) continue;
        switch (c.source) {
          case Source::kEval:
          case Source::kOther:
            decided = false;
            break;
          case Source::kProject:
            conditions.push_back({K::kReachableLacks, {c.callee}, "sets-eval", ""});
            if (!made) made = &c;
            break;
          case Source::kModel:
            if (!c.inner.empty() && evals_.contains(c.inner)) decided = false;
            if (!made) made = &c;
            break;
        }
      }
      if (!decided || !made) continue;
      if (auto it = handed_.find(s.target); it != handed_.end()) {
        for (const auto& callee : it->second) conditions.push_back({K::kReachableLacks, {callee}, "sets-eval", ""});
      }
      // Reported where the model is made, where `.eval()` belongs.
      ctx.report(made->node,
                 "`" + s.target + "` serves requests (`" + s.handler_name + "`, line " +
                     std::to_string(ts_node_start_point(s.call).row + 1) +
                     ") but is never put in eval mode: dropout stays active and batch norm uses per-request "
                     "batch statistics, so answers are random and depend on the batch; call `" +
                     s.target + ".eval()` once after loading",
                 std::nullopt, std::move(conditions));
    }
    served_.clear();
  }

 private:
  bool declares_global(const FunctionState& fn, std::string_view name, const SemanticModel& model) {
    auto [it, inserted] = globals_.try_emplace(fn.node.id);
    if (inserted) it->second = global_names(fn.node, model);
    return std::find(it->second.begin(), it->second.end(), name) != it->second.end();
  }

  struct Served {
    TSNode call{};
    std::string target;
    std::string handler;
    std::string handler_name;
    std::string class_qualname;
  };
  RequestHandlers* handlers_ = nullptr;  // shared
  std::vector<Creation> creations_;
  std::vector<Served> served_;
  std::unordered_set<std::string> evals_;
  std::unordered_set<std::string> sets_eval_;
  std::unordered_set<std::string> locals_;
  std::unordered_map<const void*, std::vector<std::string_view>> globals_;
  // Names of the file's source (views into it) handed to calls.
  std::unordered_set<std::string_view> handed_unknown_;
  std::unordered_map<std::string_view, std::vector<std::string>> handed_;
};

}  // namespace
}  // namespace python

python::RuleEntry serving_without_eval_rule() {
  return python::rule_entry<python::ServingWithoutEval>(catalog_entry("TL703"));
}

}  // namespace torchlint
