// TL503 deep-without-residual: a plain stack of many weight layers with no skip connection.
#include "catalog.h"
#include "python/shared/nn_stack.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

// Depth beyond which plain stacks degrade (He et al. 2016 saw it from about 20 layers;
// VGG-19 is the deepest plain network trained routinely).
constexpr int kMaxPlainDepth = 10;

class DeepWithoutResidual final : public nn_stack::StackRule {
 protected:
  void on_sequential(const CallEvent& call, const nn_stack::Stack& s, RuleContext& ctx) override {
    // A Sequential cannot skip, but a block inside it can.
    if (s.unknown || s.reported || s.skip || s.weights <= kMaxPlainDepth || ctx.model().is_pytest_file()) return;
    tracker_.reported_sequential(call.node, ctx.model());
    ctx.report(call.node, "`nn.Sequential` chains " + std::to_string(s.weights) +
                              " conv/linear layers with no skip connection (a Sequential cannot add its input back): "
                              "plain stacks this deep optimise worse than shallower ones; build it from residual "
                              "blocks (`out = x + block(x)`)");
  }

  void on_module_class(const ClassInfo& cls, TSNode node, const nn_stack::Tracker::ClassFlow& flow,
                       RuleContext& ctx) override {
    if (!flow.analysed || flow.inherits_report || ctx.model().is_pytest_file()) return;
    if (flow.join || flow.depth <= kMaxPlainDepth) return;
    tracker_.reported_class(cls.qualname);
    TSNode name = field(node, Syntax::get().fields().name);
    ctx.report(name, "module `" + std::string(ctx.text(name)) + "` chains " + std::to_string(flow.depth) +
                         " conv/linear layers in `forward` with no skip connection (no `x + f(x)`, no concatenation "
                         "of earlier outputs): plain stacks this deep optimise worse than shallower ones; add "
                         "residual connections");
  }
};

}  // namespace
}  // namespace python

python::RuleEntry deep_without_residual_rule() {
  return python::rule_entry<python::DeepWithoutResidual>(catalog_entry("TL503"));
}

}  // namespace torchlint
