// TL603 requires-grad-typo: `x.require_grad = ...`, an attribute autograd never reads.
#include "catalog.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

class RequiresGradTypo final : public Rule {
 public:
  static constexpr std::string_view kTriggers[] = {"require_grad"};

  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    const Syntax& syn = Syntax::get();
    if (event.op != "=" || syn.kind(event.target) != Kind::kAttribute) return;
    TSNode attribute = field(event.target, syn.fields().attribute);
    if (ctx.text(attribute) != "require_grad") return;
    // `self.require_grad = flag`: a class's own setting, named as its author chose.
    if (ctx.text(field(event.target, syn.fields().object)) == "self") return;
    Fix fix;
    fix.message = "Set `requires_grad`";
    fix.edits.push_back({ts_node_start_byte(attribute), ts_node_end_byte(attribute), "requires_grad"});
    // The typo did nothing; the fixed line changes what autograd does.
    fix.unsafe = true;
    ctx.report(event.target,
               "`" + std::string(ctx.text(event.target)) +
                   "` sets an attribute autograd never reads: the tensor's `requires_grad` is unchanged (did you "
                   "mean `requires_grad`?)",
               std::move(fix));
  }
};

}  // namespace
}  // namespace python

python::RuleEntry requires_grad_typo_rule() {
  return python::rule_entry<python::RequiresGradTypo>(catalog_entry("TL603"));
}

}  // namespace torchlint
