// TL202 dataloader-pin-memory: a training DataLoader feeding a CUDA model from pageable memory.
#include "catalog.h"
#include "python/shared/device.h"
#include "python/rule.h"
#include "python/training_dataloader.h"

namespace torchlint {
namespace python {
namespace {

class DataloaderPinMemory final : public Rule {
 public:
  // Its findings are DataLoader calls.
  static constexpr std::string_view kTriggers[] = {"DataLoader"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (call.qualname != api::kDataLoaderClass || call.has_kwargs_splat || call.has_args_splat) return;
    TSNode pin = TrainingLoaderTracker::argument(call, ctx, "pin_memory", 7);
    if (!ts_node_is_null(pin) && Syntax::get().kind(pin) != Kind::kFalse) return;  // True, or decided at run time
    tracker_.consider(call, ctx,
                      "training DataLoader without `pin_memory=True` in code that trains on CUDA: host-to-GPU "
                      "copies come from pageable memory and cannot overlap compute");
  }
  void on_loop_end(const LoopState& loop, RuleContext& ctx) override { tracker_.on_loop_end(loop, ctx); }
  void on_module_end(RuleContext& ctx) override {
    // CUDA named in this file, or anywhere in the program that builds the loader.
    tracker_.report(ctx, device_util::gpu_program_condition(ctx.model()));
  }

 private:
  TrainingLoaderTracker tracker_;
};

}  // namespace
}  // namespace python

python::RuleEntry dataloader_pin_memory_rule() {
  return python::rule_entry<python::DataloaderPinMemory>(catalog_entry("TL202"));
}

}  // namespace torchlint
