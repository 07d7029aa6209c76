// TL203 no-mixed-precision: a CUDA training loop in a project that never uses autocast
// or reduced-precision weights.
#include <algorithm>

#include "catalog.h"
#include "python/api_tables.h"
#include "python/shared/device.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

constexpr const char* kFactAutocast = "uses-autocast";
constexpr const char* kFactReducedPrecision = "uses-reduced-precision";
// The program builds layers whose matrix products and convolutions tensor cores speed up:
// a tiny MLP on MNIST is bound by kernel launches, and mixed precision buys it nothing.
constexpr const char* kFactHeavyLayers = "builds-tensor-core-layers";
constexpr const char* kFactMlpLayers = "builds-linear-layers";

bool builds_tensor_core_layers(std::string_view q) {
  if (api::tensor_core_layers().contains(q)) return true;
  return q.starts_with("torchvision.models.") || q.starts_with("transformers.") || q.starts_with("timm.");
}

constexpr const char* kMessage =
    "this CUDA training loop runs entirely in float32 and its program uses no autocast: mixed precision usually "
    "trains much faster on tensor-core GPUs and halves activation memory; run the forward pass and loss under "
    "`torch.autocast(\"cuda\", dtype=torch.bfloat16)` (float16 also needs `torch.amp.GradScaler`)";

bool is_low_precision_dtype(TSNode node, const SemanticModel& model) {
  if (ts_node_is_null(node)) return false;
  auto q = model.resolve_qualified_name(node);
  if (q) return *q == "torch.float16" || *q == "torch.half" || *q == "torch.bfloat16";
  std::string_view v;
  // `torch_dtype="bfloat16"` / `"float16"` / `"auto"` (the checkpoint's own, usually reduced).
  return string_literal_value(node, model.source(), v) &&
         (v == "float16" || v == "bfloat16" || v == "fp16" || v == "bf16" || v == "auto" || v == "half");
}

bool is_autocast(std::string_view q) {
  if (q == api::kAutocast || q == "torch.amp.autocast_mode.custom_fwd" || q == "torch.amp.custom_fwd") return true;
  if (q == "torch.cuda.amp.grad_scaler.GradScaler" || q == "torch.amp.grad_scaler.GradScaler") return true;
  return api::deprecated_amp(q).has_value();
}

// Whole-program precision choices made elsewhere: Lightning/Fabric `precision=`,
// accelerate (also configured by `accelerate config`), DeepSpeed and apex configs.
bool delegates_precision(const CallEvent& call, const SemanticModel& model) {
  if (!call.qualname) return false;
  const std::string& q = *call.qualname;
  if (q.starts_with("accelerate.") && q.ends_with("Accelerator")) return true;
  if (q == "deepspeed.initialize" || q.starts_with("apex.amp.")) return true;
  bool lightning =
      q.starts_with("lightning.") || q.starts_with("pytorch_lightning.") || q.starts_with("lightning_fabric.");
  if (lightning && (q.ends_with("Trainer") || q.ends_with("Fabric"))) {
    return !ts_node_is_null(call.keyword("precision", model.source())) || call.has_kwargs_splat;
  }
  return false;
}

class NoMixedPrecision final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    std::string_view src = model.source();
    if (device_util::cuda_when_available(call, model)) cuda_ = true;
    if (call.qualname && builds_tensor_core_layers(*call.qualname)) ctx.add_fact(kFactHeavyLayers);
    if (call.qualname == "torch.nn.Linear") ctx.add_fact(kFactMlpLayers);
    // A model chosen by name at run time (`models.__dict__[args.arch]()`,
    // `getattr(models, name)()`) may be anything: assume it is worth mixed precision.
    Kind callee_kind = Syntax::get().kind(call.callee);
    if (callee_kind == Kind::kSubscript ||
        (callee_kind == Kind::kCall && model.text(call.callee).starts_with("getattr("))) {
      ctx.add_fact(kFactHeavyLayers);
    }
    // A model class handed to a builder (`MoCo(models.__dict__[args.arch])`,
    // `Wrapper(torchvision.models.resnet50)`).
    for (size_t i = 0; i < call.arg_count; ++i) {
      TSNode v = call.args[i].value;
      if (ts_node_is_null(v)) continue;
      Kind k = Syntax::get().kind(v);
      if (k == Kind::kSubscript && model.text(v).find("models.__dict__[") != std::string_view::npos) {
        ctx.add_fact(kFactHeavyLayers);
      } else if (k == Kind::kAttribute) {
        auto q = model.resolve_qualified_name(v);
        if (q && builds_tensor_core_layers(*q)) ctx.add_fact(kFactHeavyLayers);
      }
    }
    if (call.qualname && is_autocast(*call.qualname)) {
      ctx.add_fact(kFactAutocast);
      return;
    }
    if (delegates_precision(call, model)) {
      ctx.add_fact(kFactAutocast);
      return;
    }
    bool reduced = false;
    if (call.method == "half" || call.method == "bfloat16") reduced = true;
    if (call.method == "to" &&
        (is_low_precision_dtype(call.positional(0), model) || is_low_precision_dtype(call.positional(1), model) ||
         is_low_precision_dtype(call.keyword("dtype", src), model))) {
      reduced = true;
    }
    if (is_low_precision_dtype(call.keyword("torch_dtype", src), model)) reduced = true;
    if (call.qualname == "torch.set_default_dtype" && is_low_precision_dtype(call.positional(0), model)) reduced = true;
    if (reduced) ctx.add_fact(kFactReducedPrecision);
  }

  void on_decorator(const DecoratorEvent& event, RuleContext& ctx) override {
    if (event.qualname && is_autocast(*event.qualname)) ctx.add_fact(kFactAutocast);
  }

  void on_loop_end(const LoopState& loop, RuleContext& ctx) override {
    if (ctx.model().is_pytest_file()) return;
    if (!loop.trains()) {
      // `for batch in loader: self._run_batch(batch)`: the step is in a helper.
      if (!loop.calls_backward && !loop.steps_optimizer && !loop.direct_callees.empty()) {
        helper_loops_.push_back({loop.node, loop.direct_callees});
      }
      return;
    }
    uint32_t start = ts_node_start_byte(loop.node), end = ts_node_end_byte(loop.node);
    // Report the innermost training loop (the step loop), not the epoch loop around it.
    bool has_inner = std::any_of(loops_.begin(), loops_.end(), [&](TSNode l) {
      return ts_node_start_byte(l) >= start && ts_node_end_byte(l) <= end;
    });
    if (!has_inner) loops_.push_back(loop.node);
  }

  void on_module_end(RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    bool cuda = model.uses_cuda() || cuda_;
    if (!loops_.empty()) {
      TSNode first = *std::min_element(loops_.begin(), loops_.end(), [](TSNode a, TSNode b) {
        return ts_node_start_byte(a) < ts_node_start_byte(b);
      });
      using K = ProjectCondition::Kind;
      std::vector<ProjectCondition> conditions{{K::kProjectLacks, {}, kFactAutocast, ""},
                                               {K::kProjectLacks, {}, kFactReducedPrecision, ""}};
      // CUDA named in this file, or else anywhere in the program that runs the loop; a
      // program that never names a GPU is CPU-only.
      for (auto& c : device_util::gpu_program_condition(model, cuda)) conditions.push_back(std::move(c));
      conditions.push_back(mlp_only_exception());
      { ctx.report(first, kMessage, std::nullopt, std::move(conditions)); }
    } else {
      using K = ProjectCondition::Kind;
      for (const auto& [node, helpers] : helper_loops_) {
        std::vector<ProjectCondition> conditions{{K::kReachableOnceHas, helpers, kTrainsStepFact, ""},
                                                 {K::kProjectLacks, {}, kFactAutocast, ""},
                                                 {K::kProjectLacks, {}, kFactReducedPrecision, ""}};
        for (auto& c : device_util::gpu_program_condition(model, cuda)) conditions.push_back(std::move(c));
        conditions.push_back(mlp_only_exception());
        ctx.report(node, kMessage, std::nullopt, std::move(conditions));
      }
    }
    loops_.clear();
    helper_loops_.clear();
    cuda_ = false;
  }

 private:
  // Silent for a program known to build only MLP layers (nn.Linear and no layer tensor
  // cores speed up); a model built where torchlint cannot see keeps the finding.
  static ProjectCondition mlp_only_exception() {
    ProjectCondition c{ProjectCondition::Kind::kProjectLacks, {}, kFactMlpLayers, ""};
    c.unless = kFactHeavyLayers;
    return c;
  }

  std::vector<TSNode> loops_;
  std::vector<std::pair<TSNode, std::vector<std::string>>> helper_loops_;  // loops whose step is in a helper
  bool cuda_ = false;                                                      // the file runs on CUDA when it is available
};

}  // namespace
}  // namespace python

python::RuleEntry no_mixed_precision_rule() {
  return python::rule_entry<python::NoMixedPrecision>(catalog_entry("TL203"));
}

}  // namespace torchlint
