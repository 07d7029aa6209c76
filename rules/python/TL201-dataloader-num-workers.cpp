// TL201 dataloader-num-workers: a training DataLoader that loads in the main process.
#include <cstring>

#include "python/rule.h"
#include "python/training_dataloader.h"

namespace torchlint {
namespace python {
namespace {

// The user left a note next to a deliberate `num_workers=0` (IterableDataset, debugging).
bool commented(TSNode call, const SemanticModel& model) {
  uint32_t first = ts_node_start_point(call).row, last = ts_node_end_point(call).row;
  std::string_view src = model.source();
  size_t line_start = ts_node_start_byte(call) - ts_node_start_point(call).column;
  size_t pos = line_start;
  for (uint32_t row = first; row <= last && pos < src.size(); ++row) {
    size_t eol = src.find('\n', pos);
    if (eol == std::string_view::npos) eol = src.size();
    if (src.substr(pos, eol - pos).find('#') != std::string_view::npos) return true;
    pos = eol + 1;
  }
  return false;
}

class DataloaderNumWorkers final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (call.qualname != api::kDataLoaderClass || call.has_kwargs_splat || call.has_args_splat) return;
    TSNode workers = TrainingLoaderTracker::argument(call, ctx, "num_workers", 5);
    if (ts_node_is_null(workers)) {
      tracker_.consider(call, ctx,
                        "training DataLoader has no `num_workers`: batches load in the main process and the "
                        "GPU waits for them; set `num_workers` (e.g. min(8, os.cpu_count()))");
      return;
    }
    if (Syntax::get().kind(workers) == Kind::kInteger && ctx.text(workers) == "0" && !commented(call.node, ctx.model())) {
      tracker_.consider(call, ctx,
                        "training DataLoader has `num_workers=0`: batches load in the main process and the GPU "
                        "waits for them; use worker processes (e.g. min(8, os.cpu_count()))");
    }
  }
  void on_loop_end(const LoopState& loop, RuleContext& ctx) override { tracker_.on_loop_end(loop, ctx); }
  void on_module_end(RuleContext& ctx) override { tracker_.report(ctx); }

 private:
  TrainingLoaderTracker tracker_;
};

}  // namespace
}  // namespace python

python::RuleEntry dataloader_num_workers_rule() {
  RuleInfo info;
  info.code = "TL201";
  info.name = "dataloader-num-workers";
  info.severity = Severity::kWarning;
  info.checklist_items = {"A2"};
  info.languages = {Language::kPython, Language::kCpp};
  return {std::move(info), []() -> std::unique_ptr<python::Rule> { return std::make_unique<python::DataloaderNumWorkers>(); }};
}

}  // namespace torchlint
