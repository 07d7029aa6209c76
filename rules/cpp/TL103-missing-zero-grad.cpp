// TL103 missing-zero-grad (C++): a loop calls backward() and optimizer.step() but never
// zero_grad() on that optimizer or on a model it optimizes.
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl103 {
using namespace api;

class MissingZeroGrad final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    add_training_step_matchers(f, this);
    graph_.add_matchers(f, this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    if (graph_.on_match(r)) return;
    if (auto* s = r.Nodes.getNodeAs<CXXMemberCallExpr>("step")) steps_.push_back(s);
    if (auto* b = r.Nodes.getNodeAs<CallExpr>("backward")) backwards_.push_back(b);
    for (const char* id : {"ozero", "mzero"}) {
      if (auto* z = r.Nodes.getNodeAs<CXXMemberCallExpr>(id)) {
        zeros_.push_back({z, id[0] == 'o'});
        graph_.mark(z, *r.Context);
      }
    }
    if (auto* v = r.Nodes.getNodeAs<VarDecl>("opt")) models_of_[v] = mentioned(v->getInit());
  }
  void finish() override {
    ASTContext& ast = ctx_.ast();
    std::set<std::pair<const Stmt*, const ValueDecl*>> reported;
    for (const CXXMemberCallExpr* step : steps_) {
      if (step->getNumArgs() > 0 && !isa<CXXDefaultArgExpr>(step->getArg(0))) continue;  // step(closure)
      const Stmt* loop = innermost_loop(step, ast);
      if (!loop) continue;
      bool backward =
          std::any_of(backwards_.begin(), backwards_.end(), [&](const CallExpr* b) { return is_inside(b, loop, ast); });
      if (!backward) continue;
      const ValueDecl* opt = call_object(step);
      if (!opt) continue;
      std::set<const ValueDecl*> models;
      if (auto it = models_of_.find(opt); it != models_of_.end()) models = it->second;
      bool zeroed = false;
      for (const auto& [z, on_optimizer] : zeros_) {
        if (!is_inside(z, loop, ast)) continue;
        const ValueDecl* target = call_object(z);
        // zero_grad on another optimizer does not clear this one's parameters; on a
        // module it does when the optimizer was built from it (or we cannot tell).
        if (on_optimizer ? (target == opt || !target) : (models.empty() || !target || models.contains(target)))
          zeroed = true;
      }
      if (zeroed || graph_.scope_calls_marked(loop, ast)) continue;
      if (!reported.insert({loop, opt}).second) continue;
      ctx_.report("TL103", step,
                  "`" + opt->getNameAsString() +
                      ".step()` runs in a loop that calls `backward()` but never `zero_grad()`: "
                      "gradients accumulate across iterations; call `" +
                      opt->getNameAsString() + ".zero_grad()` every step");
    }
  }

 private:
  CallGraph graph_;
  std::vector<const CXXMemberCallExpr*> steps_;
  std::vector<std::pair<const CXXMemberCallExpr*, bool>> zeros_;  // (call, on an optimizer)
  std::vector<const CallExpr*> backwards_;
  std::map<const ValueDecl*, std::set<const ValueDecl*>> models_of_;
};

}  // namespace tl103
std::unique_ptr<Rule> make_missing_zero_grad(Context& c) { return std::make_unique<tl103::MissingZeroGrad>(c); }
}  // namespace torchlint::cpp
