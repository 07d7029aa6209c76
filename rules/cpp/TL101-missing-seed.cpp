// TL101 missing-seed (C++): a program (main() and what it reaches in the TUs of its
// executable, see linter/cpp/program.h) that trains and never seeds LibTorch's generator.
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
    // Calls to functions with a name: the program pass follows them into other TUs.
    f.addMatcher(callExpr(callee(functionDecl(unless(isMain())).bind("callee"))).bind("call"), this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    const SourceManager& sm = *r.SourceManager;
    if (auto* c = r.Nodes.getNodeAs<CallExpr>("seed")) {
      seeded_ = true;
      fact(c, "seeds", *r.Context);
    }
    if (auto* c = r.Nodes.getNodeAs<CallExpr>("step")) {
      trains_ = true;
      fact(c, "steps", *r.Context);
    }
    if (auto* m = r.Nodes.getNodeAs<FunctionDecl>("main")) main_ = m;
    if (auto* c = r.Nodes.getNodeAs<CallExpr>("call")) {
      auto* callee = r.Nodes.getNodeAs<FunctionDecl>("callee");
      // LibTorch's and the standard library's functions are no part of the program.
      if (sm.isInSystemHeader(callee->getLocation()) || is_torch_decl(callee)) return;
      if (const FunctionDecl* from = named_function(c, *r.Context)) {
        ctx_.summary()[program_name(from, sm)].calls.insert(program_name(callee, sm));
      }
    }
  }
  void finish() override {
    if (!main_) return;
    // What this TU sees anywhere counts for its main() (a step inside a lambda handed to
    // a thread, a seed in a helper this TU defines but calls through a pointer).
    FunctionSummary& m = ctx_.summary()["main"];
    if (trains_) m.facts.insert("steps");
    if (seeded_ || unresolved_seed_call()) return;
    ctx_.report_in_program("TL101", main_->getLocation(),
                           "this training program never seeds LibTorch: weight initialisation and shuffling differ on "
                           "every run; call `torch::manual_seed(seed)` at the start of `main` (and "
                           "`torch::cuda::manual_seed_all(seed)` on GPU)",
                           {{"steps"}, {"seeds"}});
  }

 private:
  void fact(const CallExpr* c, const char* what, ASTContext& ast) {
    if (const FunctionDecl* from = named_function(c, ast))
      ctx_.summary()[program_name(from, ast.getSourceManager())].facts.insert(what);
  }
  // A header Clang could not find (replaced by an empty stand-in) may declare the seeding
  // helper: when the TU has errors, a call whose name says seed (`set_seed(42)`,
  // `utils::seed_all(0)`) that Clang could not resolve decides, so stay silent.
  bool unresolved_seed_call() const {
    if (!ctx_.ast().getDiagnostics().hasErrorOccurred()) return false;
    const SourceManager& sm = ctx_.sm();
    std::string text = ascii_lower(std::string(sm.getBufferData(sm.getMainFileID())));
    for (size_t at = text.find("seed"); at != std::string::npos; at = text.find("seed", at + 4)) {
      size_t end = at + 4;
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
      while (end < text.size() && text[end] == ' ') ++end;
      if (end < text.size() && text[end] == '(') return true;
    }
    return false;
  }
  bool seeded_ = false, trains_ = false;
  const FunctionDecl* main_ = nullptr;
};

}  // namespace tl101
std::unique_ptr<Rule> make_missing_seed(Context& c) { return std::make_unique<tl101::MissingSeed>(c); }
}  // namespace torchlint::cpp
