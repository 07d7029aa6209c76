// TL102 eval-without-no-grad (C++): a forward pass after `model->eval()` in the same
// function, outside a torch::NoGradGuard / c10::InferenceMode scope.
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl102 {
using namespace api;

class EvalWithoutNoGrad final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    f.addMatcher(module_call("eval").bind("eval"), this);
    f.addMatcher(module_call("train").bind("train"), this);
    f.addMatcher(forward_call().bind("forward"), this);
    f.addMatcher(callExpr(callee(functionDecl(hasName("::c10::GradMode::set_enabled")))).bind("grad_mode"), this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    ASTContext& ast = *r.Context;
    if (auto* c = r.Nodes.getNodeAs<CXXMemberCallExpr>("eval")) add(c, Kind::kEval, ast);
    if (auto* c = r.Nodes.getNodeAs<CXXMemberCallExpr>("train")) {
      bool off = c->getNumArgs() >= 1 && !isa<CXXDefaultArgExpr>(c->getArg(0)) && is_false_literal(c->getArg(0));
      add(c, off ? Kind::kEval : Kind::kTrain, ast);
    }
    if (auto* c = r.Nodes.getNodeAs<CallExpr>("forward")) add(c, Kind::kForward, ast);
    // Grad mode switched by hand anywhere in the function: not ours to judge.
    if (auto* c = r.Nodes.getNodeAs<CallExpr>("grad_mode")) {
      if (const Decl* fn = enclosing_callable(c, ast)) manual_.insert(fn);
    }
  }
  void finish() override {
    ASTContext& ast = ctx_.ast();
    for (auto& [fn, events] : functions_) {
      if (manual_.contains(fn)) continue;
      std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.order < b.order; });
      std::map<const ValueDecl*, Kind> mode;
      std::set<const ValueDecl*> reported;
      for (const Event& e : events) {
        if (!e.object) continue;
        if (e.kind != Kind::kForward) {
          mode[e.object] = e.kind;
          continue;
        }
        auto it = mode.find(e.object);
        if (it == mode.end() || it->second != Kind::kEval || reported.contains(e.object)) continue;
        if (in_no_grad_scope(e.call, ast)) continue;
        reported.insert(e.object);
        ctx_.report("TL102", e.call,
                    "forward pass of `" + e.object->getNameAsString() + "` after `eval()` outside a no-grad scope: autograd "
                    "records the graph and keeps activations alive; declare `torch::NoGradGuard no_grad;` (or "
                    "`c10::InferenceMode guard;`) first");
      }
    }
  }

 private:
  enum class Kind { kEval, kTrain, kForward };
  struct Event {
    Kind kind;
    const CallExpr* call;
    const ValueDecl* object;
    unsigned order;
  };
  void add(const CallExpr* c, Kind k, ASTContext& ast) {
    const Decl* fn = enclosing_callable(c, ast);
    if (!fn) return;
    functions_[fn].push_back({k, c, call_object(c), order(c, ast)});
  }
  std::map<const Decl*, std::vector<Event>> functions_;
  std::set<const Decl*> manual_;
};

}  // namespace tl102
std::unique_ptr<Rule> make_eval_without_no_grad(Context& c) { return std::make_unique<tl102::EvalWithoutNoGrad>(c); }
}  // namespace torchlint::cpp
