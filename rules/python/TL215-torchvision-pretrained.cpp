// TL215 torchvision-pretrained: a torchvision model builder called with the deprecated
// `pretrained=` / `pretrained_backbone=` instead of `weights=` / `weights_backbone=`.
#include <string>
#include <vector>

#include "catalog.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

constexpr TorchVersion kDeprecatedSince{0, 13};  // torchvision's multi-weight API

// Classification builders whose `pretrained=True` loaded the `IMAGENET1K_V1` weights
// (torchvision keeps that mapping for the legacy flag), so `weights="IMAGENET1K_V1"` is
// the same model. Others (detection, segmentation, video, quantized) get no fix.
bool legacy_weights_are_imagenet1k_v1(std::string_view q) {
  if (!q.starts_with("torchvision.models.")) return false;
  std::string_view name = q.substr(std::string_view("torchvision.models.").size());
  if (name.find('.') != std::string_view::npos) return false;
  for (std::string_view family :
       {"resnet", "resnext", "wide_resnet", "vgg", "densenet", "alexnet", "squeezenet", "googlenet", "inception_v3",
        "mobilenet_v2", "mobilenet_v3", "mnasnet", "shufflenet_v2", "efficientnet_b"}) {
    if (name.starts_with(family)) return true;
  }
  return false;
}

// A model builder: a lower-case function under torchvision.models.
bool is_builder(std::string_view q) {
  if (!q.starts_with("torchvision.models.")) return false;
  std::string_view last = q.substr(q.rfind('.') + 1);
  return !last.empty() && last[0] >= 'a' && last[0] <= 'z';
}

class TorchvisionPretrained final : public Rule {
 public:
  static constexpr std::string_view kTriggers[] = {"pretrained", "pretrained_backbone", "torchvision"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (!call.qualname || !is_builder(*call.qualname) || ctx.options().target_torchvision < kDeprecatedSince) return;
    // One finding per call; its fix rewrites every flag it can.
    std::vector<std::string_view> flags;
    Fix fix;
    bool all_fixed = true;
    for (size_t i = 0; i < call.arg_count; ++i) {
      const CallArgument& a = call.args[i];
      if (a.kind == Kind::kKeywordArgument && (a.name == "pretrained" || a.name == "pretrained_backbone")) {
        flags.push_back(a.name);
        all_fixed &= rewrite(call, a.value, a.name, ts_node_parent(a.value), fix);
      }
    }
    // `resnet50(True)`: the old first positional parameter (keyword-only `weights` now).
    TSNode first = call.positional(0);
    Kind k = ts_node_is_null(first) ? Kind::kOther : Syntax::get().kind(first);
    if ((k == Kind::kTrue || k == Kind::kFalse) && legacy_weights_are_imagenet1k_v1(*call.qualname)) {
      flags.push_back("pretrained");
      all_fixed &= rewrite(call, first, "pretrained", first, fix);
    }
    if (flags.empty()) return;
    std::string names, weights;
    for (std::string_view f : flags) {
      names += (names.empty() ? "`" : " and `") + std::string(f) + "=`";
      weights +=
          (weights.empty() ? "`" : " and `") + std::string(f == "pretrained" ? "weights" : "weights_backbone") + "=`";
    }
    std::optional<Fix> offered;
    if (!fix.edits.empty()) {
      fix.message = all_fixed ? "Use the weights API" : "Use the weights API where the weights are known";
      offered = std::move(fix);
    }
    ctx.report(call.node,
               names + (flags.size() > 1 ? " are" : " is") + " deprecated since torchvision 0.13: pass " + weights +
                   " (a weights enum such as `ResNet50_Weights.IMAGENET1K_V1`, `\"DEFAULT\"` for the best available, "
                   "or `None`)",
               std::move(offered));
  }

 private:
  // Adds to `fix` the rewrite of one flag when its weights are known; whether it could.
  static bool rewrite(const CallEvent& call, TSNode value, std::string_view keyword, TSNode replaced, Fix& fix) {
    const bool backbone = keyword == "pretrained_backbone";
    std::string weights = backbone ? "weights_backbone" : "weights";
    Kind k = Syntax::get().kind(value);
    std::string new_value;
    if (k == Kind::kFalse) new_value = "None";
    if (k == Kind::kTrue && !backbone && legacy_weights_are_imagenet1k_v1(*call.qualname))
      new_value = "\"IMAGENET1K_V1\"";
    if (new_value.empty()) return false;
    fix.edits.push_back({ts_node_start_byte(replaced), ts_node_end_byte(replaced), weights + "=" + new_value});
    return true;
  }
};

}  // namespace
}  // namespace python

python::RuleEntry torchvision_pretrained_rule() {
  return python::rule_entry<python::TorchvisionPretrained>(catalog_entry("TL215"));
}

}  // namespace torchlint
