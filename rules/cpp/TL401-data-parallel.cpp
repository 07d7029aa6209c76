// TL401 data-parallel (C++): torch::nn::parallel::data_parallel instead of DDP.
#include "cpp/torch_api.h"

namespace torchlint::cpp {
namespace tl401 {
using namespace api;

class DataParallel final : public Rule {
 public:
  using Rule::Rule;
  void register_matchers(MatchFinder& f) override {
    f.addMatcher(callExpr(callee(functionDecl(hasName("::torch::nn::parallel::data_parallel")))).bind("call"), this);
  }
  void run(const MatchFinder::MatchResult& r) override {
    ctx_.report("TL401", r.Nodes.getNodeAs<CallExpr>("call"),
                "`torch::nn::parallel::data_parallel` replicates the module to every GPU on each call from one "
                "process; use DistributedDataParallel-style training (one process per GPU, c10d ProcessGroupNCCL)");
  }
};

}  // namespace tl401
std::unique_ptr<Rule> make_data_parallel(Context& c) { return std::make_unique<tl401::DataParallel>(c); }
}  // namespace torchlint::cpp
