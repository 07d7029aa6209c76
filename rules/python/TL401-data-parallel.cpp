// TL401 data-parallel: nn.DataParallel instead of DistributedDataParallel.
#include "catalog.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

class DataParallel final : public Rule {
 public:
  // Only DataParallel is judged.
  static constexpr std::string_view kTriggers[] = {"DataParallel", "data_parallel"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    // Test code builds these on purpose (loading what the test wrote, wrapping to test
    // unwrapping, GPU tests gated by markers).
    if (ctx.model().is_pytest_file()) return;
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

python::RuleEntry data_parallel_rule() { return python::rule_entry<python::DataParallel>(catalog_entry("TL401")); }

}  // namespace torchlint
