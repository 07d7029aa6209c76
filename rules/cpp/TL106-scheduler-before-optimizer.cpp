// TL106 scheduler-before-optimizer (C++): scheduler.step() before optimizer.step() in the
// same iteration (also: before the training function the epoch loop calls).
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl106 {
using namespace api;

class SchedulerBeforeOptimizer final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    f.addMatcher(member_call("step", scheduler_class()).bind("sstep"), this);
    f.addMatcher(optimizer_call("step").bind("ostep"), this);
    f.addMatcher(varDecl(hasType(scheduler_class()), unless(parmVarDecl())).bind("sched"), this);
    graph_.add_matchers(f, this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    if (graph_.on_match(r)) return;
    if (auto* s = r.Nodes.getNodeAs<CXXMemberCallExpr>("sstep")) scheduler_steps_.push_back(s);
    if (auto* o = r.Nodes.getNodeAs<CXXMemberCallExpr>("ostep")) {
      optimizer_steps_.push_back(o);
      graph_.mark(o, *r.Context);
    }
    if (auto* v = r.Nodes.getNodeAs<VarDecl>("sched")) optimizers_of_[v] = mentioned(v->getInit());
  }
  void finish() override {
    ASTContext& ast = ctx_.ast();
    for (const CXXMemberCallExpr* ss : scheduler_steps_) {
      const Stmt* loop = innermost_loop(ss, ast);
      if (!loop) continue;
      const ValueDecl* sched = call_object(ss);
      std::set<const ValueDecl*> opts;
      if (auto it = optimizers_of_.find(sched); it != optimizers_of_.end()) opts = it->second;
      unsigned at = order(ss, ast);
      bool before = false, after = false;
      for (const CXXMemberCallExpr* os : optimizer_steps_) {
        if (!is_inside(os, loop, ast)) continue;
        const ValueDecl* opt = call_object(os);
        if (!opts.empty() && opt && !opts.contains(opt)) continue;  // another optimizer's schedule
        (order(os, ast) < at ? before : after) = true;
      }
      // Training helpers called in the loop count where they are called.
      for (const auto& [call, callee] : graph_.calls()) {
        if (!graph_.reaches(callee) || !is_inside(call, loop, ast) || is_inside(ss, call, ast)) continue;
        (order(call, ast) < at ? before : after) = true;
      }
      if (before || !after) continue;
      ctx_.report("TL106", ss,
                  "`" + (sched ? sched->getNameAsString() : std::string("scheduler")) +
                      ".step()` runs before the optimizer's `step()` in the same iteration: the first learning rate "
                      "of the schedule is skipped; step the scheduler after the optimizer (at the end of the epoch)");
    }
  }

 private:
  CallGraph graph_;
  std::vector<const CXXMemberCallExpr*> scheduler_steps_, optimizer_steps_;
  std::map<const ValueDecl*, std::set<const ValueDecl*>> optimizers_of_;
};

}  // namespace tl106
std::unique_ptr<Rule> make_scheduler_before_optimizer(Context& c) {
  return std::make_unique<tl106::SchedulerBeforeOptimizer>(c);
}
}  // namespace torchlint::cpp
