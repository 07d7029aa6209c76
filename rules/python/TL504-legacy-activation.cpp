// TL504 legacy-activation: Sigmoid/Tanh as hidden activations of a deep stack.
#include <unordered_set>

#include "catalog.h"
#include "python/shared/nn_stack.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

constexpr int kMinDepth = 3;

class LegacyActivation final : public nn_stack::StackRule {
 protected:
  void on_sequential(const CallEvent& call, const nn_stack::Stack& s, RuleContext& ctx) override {
    const SemanticModel& m = ctx.model();
    if (s.weights < kMinDepth || m.is_pytest_file()) return;
    // Hidden: some weight layer comes after it. A final Sigmoid/Tanh is an output layer.
    std::vector<nn_stack::LegacyUse> hidden;
    for (size_t i = 0; i < s.leaves.size(); ++i) {
      if (s.leaves[i].kind != nn_stack::Layer::kLegacyAct) continue;
      for (size_t j = i + 1; j < s.leaves.size(); ++j) {
        if (s.leaves[j].weights > 0) {
          auto q = m.resolve_qualified_name(field(s.leaves[i].node, Syntax::get().fields().function));
          hidden.push_back({s.leaves[i].node, q ? std::string(nn_stack::nn_class(*q)) : "Sigmoid/Tanh"});
          break;
        }
      }
    }
    if (hidden.empty()) return;
    tracker_.reported_sequential(call.node, m);
    report(ctx, hidden, s.weights, "this `nn.Sequential`");
  }

  void on_module_class(const ClassInfo&, TSNode node, const nn_stack::Tracker::ClassFlow& flow,
                       RuleContext& ctx) override {
    if (!flow.analysed || ctx.model().is_pytest_file()) return;
    if (flow.depth < kMinDepth || flow.hidden_legacy.empty()) return;
    std::string where = "`" + std::string(ctx.text(field(node, Syntax::get().fields().name))) + ".forward`";
    report(ctx, flow.hidden_legacy, flow.depth, where);
  }

 private:
  // Each hidden activation once (a helper's layer can be reached from several stacks).
  void report(RuleContext& ctx, const std::vector<nn_stack::LegacyUse>& hidden, int depth, const std::string& where) {
    for (const auto& [node, name] : hidden) {
      if (!reported_.insert(nn_stack::start_of(node)).second) continue;
      ctx.report(node, name + " is a hidden activation in " + where + ", a stack of " + std::to_string(depth) +
                           " conv/linear layers: saturating activations shrink gradients at every layer; use ReLU, "
                           "GELU or SiLU between layers and keep Sigmoid/Tanh for outputs and gates");
    }
  }

  std::unordered_set<uint64_t> reported_;
};

}  // namespace
}  // namespace python

python::RuleEntry legacy_activation_rule() {
  return python::rule_entry<python::LegacyActivation>(catalog_entry("TL504"));
}

}  // namespace torchlint
