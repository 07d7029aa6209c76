// TL402 hardcoded-cuda (C++): torch::kCUDA / .cuda() / Device("cuda") in a program that
// never asks whether CUDA is available.
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl402 {
using namespace api;

class HardcodedCuda final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    f.addMatcher(declRefExpr(to(varDecl(hasName("::c10::kCUDA")))).bind("use"), this);
    f.addMatcher(declRefExpr(to(enumConstantDecl(hasName("::c10::DeviceType::CUDA")))).bind("use"), this);
    f.addMatcher(member_call("cuda", tensor_class()).bind("use"), this);
    f.addMatcher(cxxConstructExpr(hasDeclaration(cxxConstructorDecl(ofClass(hasName("::c10::Device")))),
                                  hasArgument(0, hasDescendant(stringLiteral().bind("str"))))
                     .bind("use"),
                 this);
    f.addMatcher(callExpr(callee(functionDecl(hasAnyName("::torch::cuda::is_available", "::torch::cuda::device_count",
                                                         "::torch::cuda::cudnn_is_available", "::at::hasCUDA",
                                                         "::at::cuda::is_available", "::at::cuda::device_count",
                                                         "::c10::cuda::device_count"))))
                     .bind("check"),
                 this);
    f.addMatcher(functionDecl(isMain(), isDefinition()).bind("main"), this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    if (r.Nodes.getNodeAs<CallExpr>("check")) checked_ = true;
    if (auto* m = r.Nodes.getNodeAs<FunctionDecl>("main")) main_ = m;
    if (auto* use = r.Nodes.getNodeAs<Expr>("use")) {
      if (auto* str = r.Nodes.getNodeAs<StringLiteral>("str");
          str && !llvm::StringRef(str->getString()).startswith("cuda"))
        return;
      if (!ctx_.in_main_file(use->getBeginLoc())) return;
      uses_.insert({ctx_.offset(use->getBeginLoc()), use});
    }
  }
  void finish() override {
    // The program is what this translation unit's main() runs; a file without main() is
    // part of a program torchlint-cpp cannot see whole, so it stays silent.
    if (checked_ || !main_ || uses_.empty()) return;
    // `torch::Device(torch::kCUDA)` is one use, not two.
    std::set<unsigned> lines;
    for (const auto& [offset, e] : uses_) lines.insert(ctx_.sm().getExpansionLineNumber(e->getBeginLoc()));
    size_t others = lines.size() - 1;
    ctx_.report("TL402", uses_.begin()->second,
                "CUDA is hard-coded but the program never checks `torch::cuda::is_available()`: it fails on machines "
                "without a GPU; pick the device with `torch::cuda::is_available() ? torch::kCUDA : torch::kCPU`" +
                    (others ? " (" + std::to_string(others) + " more hard-coded CUDA use" + (others == 1 ? "" : "s") +
                                  " in this file)"
                            : std::string()));
  }

 private:
  bool checked_ = false;
  const FunctionDecl* main_ = nullptr;
  std::map<unsigned, const Expr*> uses_;
};

}  // namespace tl402
std::unique_ptr<Rule> make_hardcoded_cuda(Context& c) { return std::make_unique<tl402::HardcodedCuda>(c); }
}  // namespace torchlint::cpp
