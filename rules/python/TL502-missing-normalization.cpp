// TL502 missing-normalization: a deep stack of conv/linear layers with no normalization.
#include "catalog.h"
#include "python/shared/nn_stack.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

constexpr int kMinDepth = 4;

class MissingNormalization final : public nn_stack::StackRule {
 protected:
  void on_sequential(const CallEvent& call, const nn_stack::Stack& s, RuleContext& ctx) override {
    // Unknown blocks may normalise; SELU networks are built to need no norm layers.
    if (s.unknown || s.reported || s.norm || s.self_norm || s.weights < kMinDepth || ctx.model().is_pytest_file())
      return;
    tracker_.reported_sequential(call.node, ctx.model());
    ctx.report(call.node, "`nn.Sequential` stacks " + std::to_string(s.weights) +
                              " conv/linear layers with no normalization layer: deep unnormalised stacks train slowly "
                              "and are fragile to initialisation and learning rate; add BatchNorm (conv) or "
                              "LayerNorm (linear) after each weight layer");
  }

  void on_module_class(const ClassInfo& cls, TSNode node, const nn_stack::Tracker::ClassFlow& flow,
                       RuleContext& ctx) override {
    if (!flow.analysed || flow.inherits_report || ctx.model().is_pytest_file()) return;
    if (flow.any_norm || flow.self_norm || flow.unknown_modules || flow.depth < kMinDepth) return;
    tracker_.reported_class(cls.qualname);
    std::string_view name = ctx.text(field(node, Syntax::get().fields().name));
    ctx.report(field(node, Syntax::get().fields().name),
               "module `" + std::string(name) + "` chains " + std::to_string(flow.depth) +
                   " conv/linear layers in `forward` with no normalization (no BatchNorm/LayerNorm/GroupNorm layer, "
                   "no functional norm): deep unnormalised stacks train slowly and are fragile to initialisation and "
                   "learning rate; add a norm layer after each weight layer");
  }
};

}  // namespace
}  // namespace python

python::RuleEntry missing_normalization_rule() {
  return python::rule_entry<python::MissingNormalization>(catalog_entry("TL502"));
}

}  // namespace torchlint
