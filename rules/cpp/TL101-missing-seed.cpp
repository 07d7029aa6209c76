// TL101 missing-seed (C++): a program (a TU with main()) that trains and never seeds
// LibTorch's generator.
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl101 {
using namespace api;

class MissingSeed final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    // torch::manual_seed is `using at::manual_seed`: the declaration decides.
    f.addMatcher(callExpr(callee(functionDecl(hasAnyName("::at::manual_seed", "::torch::cuda::manual_seed",
                                                         "::torch::cuda::manual_seed_all", "::at::cuda::manual_seed",
                                                         "::at::cuda::manual_seed_all"))))
                     .bind("seed"),
                 this);
    f.addMatcher(cxxMemberCallExpr(callee(cxxMethodDecl(hasName("set_current_seed")))).bind("seed"), this);
    f.addMatcher(optimizer_call("step").bind("step"), this);
    f.addMatcher(functionDecl(isMain(), isDefinition()).bind("main"), this);
    // A seeding helper this file cannot see into (`utils::set_seed(42)` from another TU).
    f.addMatcher(callExpr(callee(functionDecl(unless(hasBody(stmt())), matchesName("[Ss]eed")))).bind("seed"), this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    if (r.Nodes.getNodeAs<CallExpr>("seed")) seeded_ = true;
    if (r.Nodes.getNodeAs<CallExpr>("step")) trains_ = true;
    if (auto* m = r.Nodes.getNodeAs<FunctionDecl>("main")) main_ = m;
  }
  void finish() override {
    if (!main_ || !trains_ || seeded_) return;
    ctx_.report("TL101", main_->getLocation(),
                "this training program never seeds LibTorch: weight initialisation and shuffling differ on every run; "
                "call `torch::manual_seed(seed)` at the start of `main` (and `torch::cuda::manual_seed_all(seed)` on GPU)");
  }

 private:
  bool seeded_ = false, trains_ = false;
  const FunctionDecl* main_ = nullptr;
};

}  // namespace tl101
std::unique_ptr<Rule> make_missing_seed(Context& c) { return std::make_unique<tl101::MissingSeed>(c); }
}  // namespace torchlint::cpp
