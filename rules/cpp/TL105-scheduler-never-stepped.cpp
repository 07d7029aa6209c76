// TL105 scheduler-never-stepped (C++): a torch::optim::LRScheduler (StepLR, ...) that is
// created and never stepped nor handed to anything that could step it.
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl105 {
using namespace api;

class SchedulerNeverStepped final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    f.addMatcher(varDecl(hasType(scheduler_class()), unless(parmVarDecl())).bind("decl"), this);
    f.addMatcher(fieldDecl(hasType(scheduler_class())).bind("decl"), this);
    f.addMatcher(declRefExpr(to(varDecl(hasType(scheduler_class())))).bind("ref"), this);
    f.addMatcher(memberExpr(member(fieldDecl(hasType(scheduler_class())))).bind("ref"), this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    if (auto* d = r.Nodes.getNodeAs<ValueDecl>("decl")) {
      if (ctx_.in_main_file(d->getLocation())) decls_.push_back(d);
      return;
    }
    const Expr* ref = r.Nodes.getNodeAs<Expr>("ref");
    const ValueDecl* target = nullptr;
    if (auto* dr = dyn_cast<DeclRefExpr>(ref)) target = dr->getDecl();
    if (auto* me = dyn_cast<MemberExpr>(ref)) target = me->getMemberDecl();
    if (!target) return;
    // `sched.step()`: stepped. `sched.get_last_lr()`: neither. Anything else (an argument,
    // a capture, an address, a member access of the variable itself): it escapes.
    auto parents = r.Context->getParents(*ref);
    const Stmt* p = parents.empty() ? nullptr : parents[0].get<Stmt>();
    while (p && (isa<ImplicitCastExpr>(p) || isa<ParenExpr>(p))) {
      auto pp = r.Context->getParents(*p);
      p = pp.empty() ? nullptr : pp[0].get<Stmt>();
    }
    if (auto* member = dyn_cast_or_null<MemberExpr>(p); member && member->getMemberDecl() != target) {
      if (isa<CXXMethodDecl>(member->getMemberDecl())) {
        if (member->getMemberDecl()->getName() == "step") stepped_.insert(target);
        return;
      }
    }
    escaped_.insert(target);
  }
  void finish() override {
    for (const ValueDecl* d : decls_) {
      if (stepped_.contains(d) || escaped_.contains(d)) continue;
      ctx_.report("TL105", d->getLocation(),
                  "LR scheduler `" + d->getNameAsString() + "` is created but `" + d->getNameAsString() +
                      ".step()` is never called: the learning rate never changes; step it once per epoch after the "
                      "optimizer");
    }
  }

 private:
  std::vector<const ValueDecl*> decls_;
  std::set<const ValueDecl*> stepped_, escaped_;
};

}  // namespace tl105
std::unique_ptr<Rule> make_scheduler_never_stepped(Context& c) {
  return std::make_unique<tl105::SchedulerNeverStepped>(c);
}
}  // namespace torchlint::cpp
