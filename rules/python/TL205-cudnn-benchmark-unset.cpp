// TL205 cudnn-benchmark-unset: CNN training on CUDA that never decides cudnn.benchmark.

#include "catalog.h"
#include "core/text.h"
#include "python/api_tables.h"
#include "python/shared/device.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

constexpr const char* kFactConv = "builds-conv";
// Layers and models whose inputs usually change shape from batch to batch.
constexpr const char* kFactVariableInput = "variable-input-model";
constexpr const char* kFactBenchmarkSet = "sets-cudnn-benchmark";
constexpr const char* kFactDeterminism = "configures-determinism";

bool is_cnn_name(std::string_view name) {
  static constexpr std::string_view prefixes[] = {
      "resnet",       "resnext", "wide_resnet", "vgg",        "alexnet",    "densenet", "mobilenet",
      "efficientnet", "regnet",  "convnext",    "squeezenet", "shufflenet", "mnasnet",  "googlenet",
      "inception",    "fcn_",    "deeplabv3",   "lraspp",     "r3d_",       "mc3_",     "r2plus1d",
      "unet",         "csp",     "darknet",     "dla",        "hrnet",
  };
  for (std::string_view p : prefixes) {
    if (name.starts_with(p)) return true;
  }
  return false;
}

// A convolutional network: conv layers, a torchvision CNN, a timm CNN by name.
bool builds_conv(const CallEvent& call, const SemanticModel& model) {
  const std::string& q = *call.qualname;
  if (api::cudnn_conv_layers().contains(q)) return true;
  if (q.starts_with("torchvision.models.") && q.find("detection") == std::string::npos &&
      q.find("optical_flow") == std::string::npos) {
    return is_cnn_name(last_dotted_part(q));
  }
  if (q == "timm.create_model" || q == "timm.models.create_model") {
    std::string_view v;
    return string_literal_value(call.positional(0), model.source(), v) && is_cnn_name(v);
  }
  return false;
}

bool variable_input(const std::string& q) {
  if (api::variable_input_layers().contains(q)) return true;
  if (q.starts_with("transformers.")) return true;  // language models, tokenizers
  // Detection and optical-flow models resize each batch to its own image sizes.
  return q.starts_with("torchvision.models.") &&
         (q.find("detection") != std::string::npos || q.find("optical_flow") != std::string::npos);
}

class CudnnBenchmarkUnset final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    const FunctionState& fn = model.function();
    if (fn.is_module_level && ts_node_is_null(first_step_) && fn.first_training_byte == ts_node_start_byte(call.node)) {
      first_step_ = call.node;
    }
    if (!call.qualname) return;
    if (device_util::cuda_when_available(call, model)) cuda_ = true;
    const std::string& q = *call.qualname;
    if (builds_conv(call, model)) ctx.add_fact(kFactConv);
    if (variable_input(q)) ctx.add_fact(kFactVariableInput);
    if (q == "torch.use_deterministic_algorithms") ctx.add_fact(kFactDeterminism);
    // Lightning's Trainer sets cudnn.benchmark from its own argument.
    bool lightning = q.starts_with("lightning.") || q.starts_with("pytorch_lightning.");
    if (lightning && q.ends_with("Trainer") && !ts_node_is_null(call.keyword("benchmark", model.source()))) {
      ctx.add_fact(kFactBenchmarkSet);
    }
  }

  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    if (Syntax::get().kind(event.target) != Kind::kAttribute) return;
    auto q = ctx.model().resolve_qualified_name(event.target);
    if (q == "torch.backends.cudnn.benchmark") ctx.add_fact(kFactBenchmarkSet);
    if (q == "torch.backends.cudnn.deterministic") ctx.add_fact(kFactDeterminism);
  }

  void on_module_end(RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    if (model.uses_cuda() || cuda_) ctx.add_fact(kUsesCudaFact);
    cuda_ = false;
    TSNode anchor{};
    if (model.has_main_guard()) {
      anchor = field(model.main_guard_node(), Syntax::get().fields().condition);
    } else if (!ts_node_is_null(first_step_)) {
      anchor = first_step_;
    }
    first_step_ = {};
    if (ts_node_is_null(anchor) || model.is_pytest_file()) return;  // a library module or tests
    using K = ProjectCondition::Kind;
    const std::vector<std::string> roots{model.function().qualname};
    ctx.report(anchor,
               "entry script trains a convolutional network on CUDA but never sets "
               "`torch.backends.cudnn.benchmark`: with fixed input sizes, `torch.backends.cudnn.benchmark = True` "
               "lets cuDNN time its convolution algorithms once and keep the fastest; set it at start-up (keep it "
               "off when input sizes vary or runs must be deterministic)",
               std::nullopt,
               {{K::kReachableHas, roots, "trains", ""},
                {K::kReachableHas, roots, kFactConv, ""},
                {K::kReachableHas, roots, kUsesCudaFact, ""},
                {K::kReachableLacks, roots, kFactVariableInput, ""},
                {K::kProjectLacks, {}, kFactBenchmarkSet, ""},
                {K::kProjectLacks, {}, kFactDeterminism, ""}});
  }

 private:
  TSNode first_step_{};
  bool cuda_ = false;  // the file runs on CUDA when it is available
};

}  // namespace
}  // namespace python

python::RuleEntry cudnn_benchmark_unset_rule() {
  return python::rule_entry<python::CudnnBenchmarkUnset>(catalog_entry("TL205"));
}

}  // namespace torchlint
