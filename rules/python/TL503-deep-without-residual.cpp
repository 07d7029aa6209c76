// TL503 deep-without-residual: a plain stack of many weight layers with no skip connection.
#include "python/nn_stack.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

// Depth beyond which plain stacks degrade (He et al. 2016 saw it from about 20 layers;
// VGG-19 is the deepest plain network trained routinely).
constexpr int kMaxPlainDepth = 10;

class DeepWithoutResidual final : public Rule {
 public:
  static constexpr const auto& kTriggers = nn_stack::kWeightLayers;

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& m = ctx.model();
    tracker_.on_call(call, m);
    if (call.qualname != nn_stack::kSequential || tracker_.nested(call.node)) return;
    nn_stack::Stack s = tracker_.summarize(call.node, m, /*mark_nested=*/true);
    // A Sequential cannot skip, but a block inside it can.
    if (s.unknown || s.reported || s.skip || s.weights <= kMaxPlainDepth || m.is_pytest_file()) return;
    tracker_.reported_sequential(call.node, m);
    ctx.report(call.node, "`nn.Sequential` chains " + std::to_string(s.weights) +
                              " conv/linear layers with no skip connection (a Sequential cannot add its input back): "
                              "plain stacks this deep optimise worse than shallower ones; build it from residual "
                              "blocks (`out = x + block(x)`)");
  }

  void on_assign(const AssignEvent& event, RuleContext& ctx) override { tracker_.on_assign(event, ctx.model()); }
  void on_function_end(const FunctionState& fn, RuleContext& ctx) override { tracker_.on_function_end(fn, ctx.model()); }

  void on_class_end(const ClassInfo& cls, TSNode node, RuleContext& ctx) override {
    nn_stack::Tracker::ClassFlow flow = tracker_.analyse(cls, node, ctx.model());
    if (!flow.analysed || flow.inherits_report || ctx.model().is_pytest_file()) return;
    if (flow.join || flow.depth <= kMaxPlainDepth) return;
    tracker_.reported_class(cls.qualname);
    TSNode name = field(node, Syntax::get().fields().name);
    ctx.report(name, "module `" + std::string(ctx.text(name)) + "` chains " + std::to_string(flow.depth) +
                         " conv/linear layers in `forward` with no skip connection (no `x + f(x)`, no concatenation "
                         "of earlier outputs): plain stacks this deep optimise worse than shallower ones; add "
                         "residual connections");
  }

 private:
  nn_stack::Tracker tracker_;
};

}  // namespace
}  // namespace python

python::RuleEntry deep_without_residual_rule() {
  return python::rule_entry<python::DeepWithoutResidual>({
      .code = "TL503",
      .name = "deep-without-residual",
      .severity = Severity::kInfo,
      .checklist_items = {"B4"},
      .languages = {Language::kPython},
  });
}

}  // namespace torchlint
