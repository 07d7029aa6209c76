// TL101 missing-seed: an entry script trains but never seeds the generators it uses.
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

class MissingSeed final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const FunctionState& fn = ctx.model().function();
    // Remember the first module-level optimizer step, for scripts with no main guard.
    if (fn.is_module_level && ts_node_is_null(first_step_) && fn.first_training_byte == ts_node_start_byte(call.node)) {
      first_step_ = call.node;
    }
  }

  void on_module_end(RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    TSNode anchor{};
    if (model.has_main_guard()) {
      anchor = field(model.main_guard_node(), Syntax::get().fields().condition);
    } else if (!ts_node_is_null(first_step_)) {
      anchor = first_step_;
    } else {
      return;  // a library module: its callers decide about seeding
    }
    const std::vector<std::string> roots{model.function().qualname};
    auto condition = [&](ProjectCondition::Kind kind, const char* fact) {
      ProjectCondition c;
      c.kind = kind;
      c.roots = roots;
      c.fact = fact;
      if (kind == ProjectCondition::Kind::kReachableLacks) c.unknown_callee_hint = "seed";
      return c;
    };
    using K = ProjectCondition::Kind;
    ctx.report(anchor,
               "entry script trains (an optimizer step is reachable from here) but never seeds torch: runs "
               "cannot be reproduced; call `torch.manual_seed(seed)` or a seeding helper at start-up",
               std::nullopt, {condition(K::kReachableHas, "trains"), condition(K::kReachableLacks, "seeds-torch")});
    ctx.report(anchor,
               "entry script draws from numpy's global RNG but never seeds it; call `np.random.seed(seed)` (or a "
               "helper that seeds every generator) at start-up",
               std::nullopt,
               {condition(K::kReachableHas, "trains"), condition(K::kReachableHas, "draws-numpy"),
                condition(K::kReachableLacks, "seeds-numpy")});
    ctx.report(anchor,
               "entry script draws from Python's `random` module but never seeds it; call `random.seed(seed)` (or a "
               "helper that seeds every generator) at start-up",
               std::nullopt,
               {condition(K::kReachableHas, "trains"), condition(K::kReachableHas, "draws-random"),
                condition(K::kReachableLacks, "seeds-random")});
  }

 private:
  TSNode first_step_{};
};

}  // namespace
}  // namespace python

python::RuleEntry missing_seed_rule() {
  RuleInfo info;
  info.code = "TL101";
  info.name = "missing-seed";
  info.severity = Severity::kWarning;
  info.checklist_items = {"A6"};
  info.languages = {Language::kPython, Language::kCpp};
  return {std::move(info), []() -> std::unique_ptr<python::Rule> { return std::make_unique<python::MissingSeed>(); }};
}

}  // namespace torchlint
