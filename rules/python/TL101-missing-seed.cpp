// TL101 missing-seed: an entry script trains but never seeds the generators it uses.
#include <unordered_map>

#include "catalog.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

class MissingSeed final : public Rule {
 public:
  // Its findings are anchored at the main guard (`if __name__ == "__main__":`) or at a
  // top-level optimizer step (`.step()`).
  static constexpr std::string_view kTriggers[] = {"__main__", "step"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const FunctionState& fn = ctx.model().function();
    if (fn.first_training_byte == ts_node_start_byte(call.node)) {
      if (!fn.is_module_level) {
        first_step_in_function_.emplace(fn.qualname, call.node);
      } else if (ts_node_is_null(first_step_)) {
        first_step_ = call.node;  // scripts with no main guard that train at the top level
      }
      return;
    }
    // Scripts with no main guard whose top-level code calls `train(epoch)` defined above.
    if (fn.is_module_level && ts_node_is_null(first_step_) && call.qualname) {
      auto it = first_step_in_function_.find(*call.qualname);
      if (it != first_step_in_function_.end()) first_step_ = it->second;
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
    // One finding per generator the entry script depends on and never seeds.
    struct Generator {
      const char* draws;  // null: torch, needed whenever the script trains
      const char* seeds;
      const char* message;
    };
    static constexpr Generator kGenerators[] = {
        {nullptr, "seeds-torch",
         "entry script trains (an optimizer step is reachable from here) but never seeds torch: runs cannot be "
         "reproduced; call `torch.manual_seed(seed)` or a seeding helper at start-up"},
        {"draws-numpy", "seeds-numpy",
         "entry script draws from numpy's global RNG but never seeds it; call `np.random.seed(seed)` (or a helper "
         "that seeds every generator) at start-up"},
        {"draws-random", "seeds-random",
         "entry script draws from Python's `random` module but never seeds it; call `random.seed(seed)` (or a "
         "helper that seeds every generator) at start-up"},
    };
    using K = ProjectCondition::Kind;
    const std::vector<std::string> roots{model.function().qualname};
    for (const auto& g : kGenerators) {
      std::vector<ProjectCondition> conditions{{K::kReachableHas, roots, "trains", ""}};
      if (g.draws) conditions.push_back({K::kReachableHas, roots, g.draws, ""});
      // A called helper torchlint cannot see into counts as seeding when its name says so.
      conditions.push_back({K::kReachableLacks, roots, g.seeds, "seed"});
      ctx.report(anchor, g.message, std::nullopt, std::move(conditions));
    }
  }

 private:
  TSNode first_step_{};
  std::unordered_map<std::string, TSNode> first_step_in_function_;
};

}  // namespace
}  // namespace python

python::RuleEntry missing_seed_rule() { return python::rule_entry<python::MissingSeed>(catalog_entry("TL101")); }

}  // namespace torchlint
