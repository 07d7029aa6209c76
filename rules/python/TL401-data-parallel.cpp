// TL401 data-parallel: nn.DataParallel instead of DistributedDataParallel.
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

class DataParallel final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (call.qualname == api::kDataParallel) {
      ctx.report(call.node,
                 "`nn.DataParallel` drives all GPUs from one process (GIL-bound, replicates the model every "
                 "step, unbalanced memory on GPU 0); use `DistributedDataParallel` with one process per GPU");
    } else if (call.qualname == api::kDataParallelFunction) {
      ctx.report(call.node,
                 "`nn.parallel.data_parallel` replicates the module on every call from one process; use "
                 "`DistributedDataParallel` with one process per GPU");
    }
  }
};

}  // namespace
}  // namespace python

python::RuleEntry data_parallel_rule() {
  RuleInfo info;
  info.code = "TL401";
  info.name = "data-parallel";
  info.severity = Severity::kWarning;
  info.checklist_items = {"A10", "D3"};
  info.languages = {Language::kPython, Language::kCpp};
  return {std::move(info), []() -> std::unique_ptr<python::Rule> { return std::make_unique<python::DataParallel>(); }};
}

}  // namespace torchlint
