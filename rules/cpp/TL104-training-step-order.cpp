// TL104 training-step-order (C++): in one iteration, zero_grad() between backward() and
// step() of the same optimizer, or step() before any backward().
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl104 {
using namespace api;

class StepOrder final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    add_training_step_matchers(f, this);
    graph_.add_matchers(f, this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    if (graph_.on_match(r)) return;
    ASTContext& ast = *r.Context;
    if (auto* v = r.Nodes.getNodeAs<VarDecl>("opt")) models_of_[v] = mentioned(v->getInit());
    if (auto* s = r.Nodes.getNodeAs<CXXMemberCallExpr>("step")) add(s, Event::kStep, ast);
    if (auto* b = r.Nodes.getNodeAs<CallExpr>("backward")) {
      add(b, Event::kBackward, ast);
      graph_.mark(b, ast);
    }
    if (auto* z = r.Nodes.getNodeAs<CXXMemberCallExpr>("ozero")) add(z, Event::kOptimizerZero, ast);
    if (auto* z = r.Nodes.getNodeAs<CXXMemberCallExpr>("mzero")) add(z, Event::kModuleZero, ast);
  }
  void finish() override {
    ASTContext& ast = ctx_.ast();
    for (auto& [loop, events] : loops_) {
      std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.order < b.order; });
      for (size_t i = 0; i < events.size(); ++i) {
        const Event& s = events[i];
        if (s.kind != Event::kStep || !s.object) continue;
        auto* call = cast<CXXMemberCallExpr>(s.call);
        if (call->getNumArgs() > 0 && !isa<CXXDefaultArgExpr>(call->getArg(0))) continue;  // step(closure)
        std::set<const ValueDecl*> models;
        if (auto it = models_of_.find(s.object); it != models_of_.end()) models = it->second;
        auto clears = [&](const Event& e) {
          if (e.kind == Event::kOptimizerZero) return e.object == s.object;
          if (e.kind == Event::kModuleZero) return !models.empty() && models.contains(e.object);
          return false;
        };
        // Walk back from the step: the nearest backward or zero_grad decides.
        bool backward_before = false;
        const Event* zero_after_backward = nullptr;
        for (size_t j = i; j-- > 0;) {
          const Event& e = events[j];
          if (e.kind == Event::kBackward) {
            backward_before = true;
            break;
          }
          if (clears(e) && !zero_after_backward) zero_after_backward = &e;
        }
        if (backward_before && zero_after_backward && !conditional_between(zero_after_backward->call, loop, ast)) {
          ctx_.report("TL104", zero_after_backward->call,
                      "`zero_grad()` runs between `backward()` and `" + s.object->getNameAsString() +
                          ".step()`: the step sees no gradients; call `zero_grad()` before `backward()`");
          continue;
        }
        if (backward_before) continue;
        // No backward earlier in the iteration: a backward later means this step applies
        // the previous iteration's gradients (unless a helper called before it backs up).
        bool backward_after = std::any_of(events.begin() + static_cast<long>(i), events.end(),
                                          [](const Event& e) { return e.kind == Event::kBackward; });
        if (backward_after && !graph_.scope_calls_marked(loop, ast, call)) {
          ctx_.report(
              "TL104", call,
              "`" + s.object->getNameAsString() +
                  ".step()` runs before `backward()` in the same iteration: it "
                  "applies the previous iteration's gradients; order: zero_grad(), forward, backward(), step()");
        }
      }
    }
  }

 private:
  struct Event {
    enum Kind { kStep, kBackward, kOptimizerZero, kModuleZero } kind;
    const CallExpr* call;
    const ValueDecl* object;
    unsigned order;
  };
  void add(const CallExpr* call, Event::Kind kind, ASTContext& ast) {
    const Stmt* loop = innermost_loop(call, ast);
    if (!loop) return;
    loops_[loop].push_back({kind, call, kind == Event::kBackward ? nullptr : call_object(call), order(call, ast)});
  }
  CallGraph graph_;
  std::map<const Stmt*, std::vector<Event>> loops_;
  std::map<const ValueDecl*, std::set<const ValueDecl*>> models_of_;
};

}  // namespace tl104
std::unique_ptr<Rule> make_training_step_order(Context& c) { return std::make_unique<tl104::StepOrder>(c); }
}  // namespace torchlint::cpp
