// TL111 determinism-conflict: cudnn.benchmark = True in a program that asks for
// deterministic algorithms.
#include <algorithm>

#include "catalog.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

constexpr std::string_view kBenchmark = "torch.backends.cudnn.benchmark";
constexpr std::string_view kDeterministic = "torch.backends.cudnn.deterministic";
constexpr std::string_view kUseDeterministic = "torch.use_deterministic_algorithms";

// Facts for the project pass: a function that turns determinism on whatever its
// arguments, and a function that decides cudnn.benchmark itself (any value but True).
constexpr const char* kFactDeterministic = "cudnn-deterministic";
constexpr const char* kFactBenchmarkHandled = "cudnn-benchmark-handled";

bool is_true(TSNode node) { return !ts_node_is_null(node) && Syntax::get().kind(node) == Kind::kTrue; }

// The if/elif/else branch each enclosing `if` puts a node in, innermost first, up to the
// enclosing function: (if statement, the clause or block holding the node).
std::vector<std::pair<const void*, const void*>> branches(TSNode node) {
  const Syntax& syn = Syntax::get();
  std::vector<std::pair<const void*, const void*>> out;
  TSNode child = node;
  std::vector<TSNode> path = ancestors(node);
  for (auto it = path.rbegin(); it != path.rend(); child = *it, ++it) {
    TSNode p = *it;
    Kind k = syn.kind(p);
    if (k == Kind::kFunctionDefinition || k == Kind::kClassDefinition) break;
    if (k == Kind::kIfStatement) out.emplace_back(p.id, child.id);
  }
  return out;
}

// Two settings in different branches of one `if` never run together.
bool exclusive(const std::vector<std::pair<const void*, const void*>>& a,
               const std::vector<std::pair<const void*, const void*>>& b) {
  for (const auto& [if_a, branch_a] : a) {
    for (const auto& [if_b, branch_b] : b) {
      if (if_a == if_b && branch_a != branch_b) return true;
    }
  }
  return false;
}

struct Setting {
  TSNode node{};
  std::string function;
  uint32_t line = 0;
  std::string what;                     // as the user wrote it, for the message
  std::vector<const void*> conditions;  // enclosing conditions in its function
  std::vector<std::pair<const void*, const void*>> branches;
  bool module_level = false;
};

// One setting's guard is nested in the other's (or both are unconditional): whenever the
// more guarded one runs, so does the other.
bool guards_nest(const Setting& a, const Setting& b) {
  auto subset = [](const std::vector<const void*>& x, const std::vector<const void*>& y) {
    return std::all_of(x.begin(), x.end(), [&](const void* c) { return std::find(y.begin(), y.end(), c) != y.end(); });
  };
  return subset(a.conditions, b.conditions) || subset(b.conditions, a.conditions);
}

class DeterminismConflict final : public Rule {
 public:
  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    if (event.op != "=" || ts_node_is_null(event.value)) return;
    const Syntax& syn = Syntax::get();
    if (syn.kind(event.target) != Kind::kAttribute) return;
    auto q = ctx.model().resolve_qualified_name(event.target);
    if (!q) return;
    if (*q == kBenchmark) {
      if (is_true(event.value)) {
        benchmarks_.push_back(make(event.node, ctx, "cudnn.benchmark = True"));
      } else {
        resets_.push_back(make(event.node, ctx, ""));
        ctx.add_fact(kFactBenchmarkHandled);
      }
    } else if (*q == kDeterministic && is_true(event.value)) {
      record_deterministic(make(event.node, ctx, "`torch.backends.cudnn.deterministic = True`"), ctx);
    }
  }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    if (call.qualname == kUseDeterministic) {
      TSNode mode = call.keyword("mode", model.source());
      if (ts_node_is_null(mode)) mode = call.positional(0);
      if (is_true(mode)) record_deterministic(make(call.node, ctx, "`torch.use_deterministic_algorithms(True)`"), ctx);
      return;
    }
    // Project calls made unconditionally: helpers whose determinism settings always run.
    if (!call.qualname || model.enclosing_conditions().size() > 0) return;
    std::string_view top = std::string_view(*call.qualname).substr(0, call.qualname->find('.'));
    if (ctx.model().is_external_package(top)) return;
    calls_.push_back({model.function().qualname, *call.qualname, ts_node_start_byte(call.node)});
  }

  void on_module_end(RuleContext& ctx) override {
    for (const Setting& b : benchmarks_) {
      // A later assignment in the same function decides benchmark again (often `False`
      // in the deterministic branch): torchlint does not follow which one wins.
      bool reset_later = std::any_of(resets_.begin(), resets_.end(), [&](const Setting& r) {
        return r.function == b.function && ts_node_start_byte(r.node) > ts_node_start_byte(b.node);
      });
      if (reset_later) continue;
      const Setting* conflict = nullptr;
      for (const Setting& d : deterministic_) {
        bool same_function = d.function == b.function && !exclusive(b.branches, d.branches) && guards_nest(b, d);
        // Module-level code runs on import, before any function of the file.
        bool module_wide = d.module_level && d.conditions.empty() && !b.module_level;
        if (same_function || module_wide) {
          conflict = &d;
          break;
        }
      }
      const std::string head =
          "`cudnn.benchmark = True` makes cuDNN choose convolution algorithms by timing them, a choice that can "
          "change from run to run, but ";
      const std::string tail =
          " asks for reproducible results; set `torch.backends.cudnn.benchmark = False` "
          "whenever determinism is on";
      if (conflict) {
        ctx.report(b.node, head + conflict->what + " (line " + std::to_string(conflict->line) + ")" + tail);
        continue;
      }
      if (!b.conditions.empty()) continue;
      // Determinism switched on by a helper this function calls (a `set_seed` that also
      // sets cudnn.deterministic): before this line, benchmark=True overrides whatever
      // the helper chose; after it, only a helper that does not reset benchmark conflicts.
      std::vector<std::string> before, after;
      for (const auto& c : calls_) {
        if (c.function != b.function) continue;
        (c.byte < ts_node_start_byte(b.node) ? before : after).push_back(c.callee);
      }
      using K = ProjectCondition::Kind;
      const std::string message = head + "a helper called from `" + function_name(b.function) +
                                  "` turns deterministic algorithms on and" + tail;
      if (!before.empty()) {
        ctx.report(b.node, message, std::nullopt, {{K::kReachableHas, before, kFactDeterministic, ""}});
      }
      if (!after.empty()) {
        std::vector<ProjectCondition> conditions{{K::kReachableHas, after, kFactDeterministic, ""},
                                                 {K::kReachableLacks, after, kFactBenchmarkHandled, ""}};
        // Reported once: the "before" finding already covers a program where both hold.
        if (!before.empty()) conditions.push_back({K::kReachableLacks, before, kFactDeterministic, ""});
        ctx.report(b.node, message, std::nullopt, std::move(conditions));
      }
    }
    benchmarks_.clear();
    deterministic_.clear();
    resets_.clear();
    calls_.clear();
  }

 private:
  struct ProjectCall {
    std::string function;
    std::string callee;
    uint32_t byte = 0;
  };

  static std::string function_name(const std::string& qualname) {
    size_t dot = qualname.rfind('.');
    std::string name = dot == std::string::npos ? qualname : qualname.substr(dot + 1);
    return name == kModuleFunction ? "module-level code" : name;
  }

  static Setting make(TSNode node, RuleContext& ctx, std::string what) {
    const SemanticModel& model = ctx.model();
    Setting s;
    s.node = node;
    s.function = model.function().qualname;
    s.module_level = model.function().is_module_level;
    s.line = ts_node_start_point(node).row + 1;
    s.what = std::move(what);
    for (TSNode c : model.enclosing_conditions()) s.conditions.push_back(c.id);
    s.branches = branches(node);
    return s;
  }

  void record_deterministic(Setting s, RuleContext& ctx) {
    if (s.conditions.empty()) ctx.add_fact(kFactDeterministic);
    deterministic_.push_back(std::move(s));
  }

  std::vector<Setting> benchmarks_;
  std::vector<Setting> deterministic_;
  std::vector<Setting> resets_;
  std::vector<ProjectCall> calls_;
};

}  // namespace
}  // namespace python

python::RuleEntry determinism_conflict_rule() {
  return python::rule_entry<python::DeterminismConflict>(catalog_entry("TL111"));
}

}  // namespace torchlint
