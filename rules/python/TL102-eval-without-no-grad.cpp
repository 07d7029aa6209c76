// TL102 eval-without-no-grad: a forward pass in evaluation code with autograd recording.
#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The function's name says it evaluates: validate, run_eval, test_epoch, predict, ...
bool has_evaluation_role(std::string_view function_name, bool pytest_file) {
  static const std::unordered_set<std::string_view> tokens = {
      "eval", "evaluate", "evaluation", "evaluating", "validate", "validation", "valid", "val",
      "predict", "prediction", "predictions", "inference", "infer", "test", "testing",
  };
  std::string name = lower(function_name);
  // Generic verbs count only as the whole name (`generate_inputs` builds inputs).
  if (name == "sample" || name == "generate" || name == "sampling") return true;
  if (name.starts_with("test") && pytest_file) return false;  // a pytest test, not an evaluation routine
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('_', start);
    if (end == std::string::npos) end = name.size();
    std::string_view token = std::string_view(name).substr(start, end - start);
    if (tokens.contains(token)) return !(token.starts_with("test") && pytest_file);
    start = end + 1;
  }
  return false;
}

// Names that hold a model in practice when nothing better is known (function parameters).
bool names_model(std::string_view name) {
  std::string n = lower(name);
  static const std::unordered_set<std::string_view> exact = {
      "model", "net", "network", "classifier", "encoder", "decoder", "generator", "discriminator",
      "netg", "netd", "backbone", "policy", "module", "ema_model", "teacher", "student",
  };
  return exact.contains(n) || n.ends_with("_model") || n.starts_with("model_") || n.ends_with("_net");
}

struct Candidate {
  TSNode call{};
  std::string model;
};

class EvalWithoutNoGrad final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    if (model.in_no_grad()) return;
    // pytest tests exercise models on purpose; helpers in the same file are still code.
    if (model.is_pytest_file() && model.function().name.starts_with("test")) return;
    const Syntax& syn = Syntax::get();
    Kind k = syn.kind(call.callee);
    if (k != Kind::kIdentifier && k != Kind::kAttribute) return;
    if (k == Kind::kAttribute) {
      // Only `self.model(x)`: other attribute calls are methods, not forward passes.
      TSNode object = field(call.callee, syn.fields().object);
      if (syn.kind(object) != Kind::kIdentifier || model.text(object) != "self") return;
    }
    std::string_view callee = model.text(call.callee);
    const FunctionState& fn = model.function();
    bool eval_mode = model.is_in_eval_mode(callee);
    bool role = !fn.is_module_level && has_evaluation_role(fn.name, model.is_pytest_file());
    if (!eval_mode && !role) return;
    ValueInfo value = model.infer_value(call.callee);
    bool is_model = value.kind == ValueKind::kModel || eval_mode;
    if (!is_model && value.kind == ValueKind::kUnknown && k == Kind::kIdentifier) {
      const Binding* b = model.lookup(callee);
      is_model = b && b->kind == BindingKind::kParameter && names_model(callee);
    }
    if (!is_model && value.kind == ValueKind::kUnknown && k == Kind::kAttribute) {
      is_model = names_model(model.text(field(call.callee, syn.fields().attribute)));
    }
    if (!is_model) return;
    auto& list = pending_[fn.qualname];
    if (std::none_of(list.begin(), list.end(), [&](const Candidate& c) { return c.model == callee; })) {
      list.push_back({call.node, std::string(callee)});
    }
  }

  void on_function_end(const FunctionState& fn, RuleContext& ctx) override { flush(fn, ctx, true); }
  void on_module_end(RuleContext& ctx) override { flush(ctx.model().function(), ctx, false); }

 private:
  void flush(const FunctionState& fn, RuleContext& ctx, bool in_function) {
    auto it = pending_.find(fn.qualname);
    if (it == pending_.end()) return;
    std::vector<Candidate> candidates = std::move(it->second);
    pending_.erase(it);
    // Gradients are wanted here: fine-tuning with frozen BatchNorm, saliency maps.
    if (fn.calls_backward || fn.steps_optimizer || fn.calls_autograd_grad) return;
    // Lightning runs *_step hooks of a LightningModule under no_grad itself.
    const SemanticModel& model = ctx.model();
    if (in_function && fn.name.ends_with("_step") && fn.enclosing_class >= 0) return;
    for (const auto& c : candidates) {
      std::vector<ProjectCondition> conditions;
      std::string where = "module-level code in eval mode";
      if (in_function) {
        ProjectCondition cond;
        cond.kind = ProjectCondition::Kind::kNotAlwaysCalledIn;
        cond.roots = {fn.qualname};
        cond.fact = "no-grad";
        conditions.push_back(std::move(cond));
        where = "evaluation function `" + fn.name + "`";
      }
      ctx.report(c.call,
                 "forward pass of `" + c.model + "` in " + where +
                     " runs with autograd recording: activations are kept for a backward pass that never "
                     "comes; wrap it in `with torch.no_grad():` or `torch.inference_mode()`",
                 std::nullopt, std::move(conditions));
    }
    (void)model;
  }

  std::unordered_map<std::string, std::vector<Candidate>> pending_;
};

}  // namespace
}  // namespace python

python::RuleEntry eval_without_no_grad_rule() {
  return python::rule_entry<python::EvalWithoutNoGrad>({
      .code = "TL102",
      .name = "eval-without-no-grad",
      .severity = Severity::kWarning,
      .checklist_items = {"A5"},
      .languages = {Language::kPython, Language::kCpp},
  });
}

}  // namespace torchlint
