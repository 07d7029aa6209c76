// TL212 zero-grad-set-to-zero: `zero_grad(set_to_none=False)` writes zeros into every gradient.
#include "catalog.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

class ZeroGradSetToZero final : public Rule {
 public:
  static constexpr std::string_view kTriggers[] = {"zero_grad"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (call.method != "zero_grad") return;
    TSNode value = call.keyword("set_to_none");
    if (ts_node_is_null(value) && call.positional_count() == 1) value = call.positional(0);
    if (ts_node_is_null(value) || Syntax::get().kind(value) != Kind::kFalse) return;
    Fix fix;
    fix.message = "Set gradients to `None`";
    fix.edits.push_back({ts_node_start_byte(value), ts_node_end_byte(value), "True"});
    // Code that reads `.grad` after zero_grad would find None instead of zeros.
    fix.unsafe = true;
    ctx.report(call.node,
               "`zero_grad(set_to_none=False)` fills every gradient with zeros, a memory write per parameter that "
               "`set_to_none=True` (the default since torch 2.0) avoids",
               std::move(fix));
  }
};

}  // namespace
}  // namespace python

python::RuleEntry zero_grad_set_to_zero_rule() {
  return python::rule_entry<python::ZeroGradSetToZero>(catalog_entry("TL212"));
}

}  // namespace torchlint
