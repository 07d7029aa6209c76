// TL102 eval-without-no-grad: a forward pass in evaluation code with autograd recording.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "catalog.h"
#include "core/name_table.h"
#include "core/text.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

// The function's name says it evaluates: validate, run_eval, test_epoch, predict, ...
bool has_evaluation_role(std::string_view function_name, bool pytest_file) {
  static const NameSet tokens = {
      "eval",    "evaluate",   "evaluation",  "evaluating", "validate", "validation", "valid",   "val",
      "predict", "prediction", "predictions", "inference",  "infer",    "test",       "testing",
  };
  std::string name = ascii_lower(function_name);
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

bool names_other_runtime(std::string_view name) {
  std::string n = ascii_lower(name);
  for (std::string_view word : {"keras", "tf_", "tflite", "onnx", "trt", "tensorrt", "session", "openvino", "coreml"}) {
    if (n.find(word) != std::string::npos) return true;
  }
  return false;
}

// The model is fed, once, a made-up tensor of a literal shape (`net(torch.randn(1, 3, 32,
// 32))`, or a name bound to one): a shape or smoke check, not an evaluation whose
// activations pile up. Noise of a computed shape is a generator's real input.
bool is_shape_check(const CallEvent& call, const SemanticModel& model) {
  TSNode input = call.positional(0);
  if (ts_node_is_null(input) || model.loop_depth() > 0) return false;
  ValueInfo value = model.infer_value(input);
  return value.kind == ValueKind::kTensor && value.literal_shape;
}

struct Candidate {
  TSNode call{};
  std::string model;
  bool by_callers = false;  // evaluation only if every caller runs it in eval mode
};

class EvalWithoutNoGrad final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    if (model.in_no_grad()) return;
    // pytest tests exercise models on purpose; helpers in the same file are still code.
    if (model.is_pytest_file() && model.function().name.starts_with("test")) return;
    const FunctionState& fn = model.function();
    if (role_function_ != fn.node.id) {  // a function's role is read once
      role_function_ = fn.node.id;
      role_ = !fn.is_module_level && has_evaluation_role(fn.name, model.is_pytest_file());
    }
    bool role = !fn.is_module_level && role_;
    if (call.method == "train" || call.method == "requires_grad_") sets_train_.insert(fn.qualname);
    bool evaluating = role || model.is_in_eval_mode(model.text(call.callee));
    // Elsewhere a forward pass is evaluation when every caller runs it in eval mode (decided
    // by the project pass), unless this function put a model back in train mode first.
    if (!evaluating && (fn.is_module_level || sets_train_.contains(fn.qualname))) return;
    std::string callee(call.forward_pass_target(model));
    if (callee.empty()) return;
    if (is_shape_check(call, model)) return;
    // Judged by its callers, a name must stand for a torch module: other runtimes' models
    // (`keras_model`, an ONNX or TensorRT session) have no autograd to switch off.
    if (!evaluating && names_other_runtime(callee)) return;
    auto& list = pending_[fn.qualname];
    if (std::none_of(list.begin(), list.end(), [&](const Candidate& c) { return c.model == callee; })) {
      list.push_back({call.node, callee, !evaluating});
    }
  }

  void on_function_end(const FunctionState& fn, RuleContext& ctx) override {
    role_function_ = nullptr;  // back in the enclosing function
    flush(fn, ctx, true);
  }
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
        if (c.by_callers) {
          conditions.push_back({ProjectCondition::Kind::kAlwaysCalledIn, {fn.qualname}, kEvalModeContext, ""});
          where = "`" + fn.name + "` (every caller runs it in eval mode)";
        }
      } else if (c.by_callers) {
        continue;
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
  std::unordered_set<std::string> sets_train_;  // functions that call .train() / requires_grad_()
  const void* role_function_ = nullptr;         // the function role_ was read for
  bool role_ = false;
};

}  // namespace
}  // namespace python

python::RuleEntry eval_without_no_grad_rule() {
  return python::rule_entry<python::EvalWithoutNoGrad>(catalog_entry("TL102"));
}

}  // namespace torchlint
