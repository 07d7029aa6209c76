// TL207 detect-anomaly-enabled (C++): AnomalyMode::set_enabled(true) / DetectAnomalyGuard
// left in training code (not under an `if`).
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl207 {
using namespace api;

class DetectAnomaly final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    f.addMatcher(callExpr(callee(functionDecl(hasName("::torch::autograd::AnomalyMode::set_enabled"))),
                          hasArgument(0, ignoringImplicit(cxxBoolLiteral(equals(true)))))
                     .bind("on"),
                 this);
    f.addMatcher(
        cxxConstructExpr(hasDeclaration(cxxConstructorDecl(ofClass(hasName("::torch::autograd::DetectAnomalyGuard")))))
            .bind("guard"),
        this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    const Expr* e = r.Nodes.getNodeAs<Expr>("on");
    bool guard = !e;
    if (!e) e = r.Nodes.getNodeAs<Expr>("guard");
    if (!e || conditional_between(e, nullptr, *r.Context)) return;  // `if (args.debug)`: deliberate
    ctx_.report("TL207", e,
                std::string(guard ? "`torch::autograd::DetectAnomalyGuard`" : "`AnomalyMode::set_enabled(true)`") +
                    " records a stack trace for every autograd node and checks every backward result: training runs "
                    "several times slower; enable it only while debugging (under a flag)");
  }
};

}  // namespace tl207
std::unique_ptr<Rule> make_detect_anomaly_enabled(Context& c) { return std::make_unique<tl207::DetectAnomaly>(c); }
}  // namespace torchlint::cpp
