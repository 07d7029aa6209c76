// TL201 dataloader-num-workers: a training DataLoader that loads in the main process.
#include "python/rule.h"
#include "python/training_dataloader.h"

namespace torchlint {
namespace python {
namespace {

// Comments that only talk to tools (`# noqa`, `# type: ignore`, test marks) explain nothing.
bool is_tool_directive(std::string_view comment) {
  size_t i = comment.find_first_not_of("# \t");
  if (i == std::string_view::npos) return true;
  std::string_view body = comment.substr(i);
  for (std::string_view d : {"noqa", "NOQA", "type:", "pylint:", "pragma", "fmt:", "torchlint:", "expect:", "nosec", "isort:"}) {
    if (body.starts_with(d)) return true;
  }
  return false;
}

// The user explained a deliberate `num_workers=0` (IterableDataset, debugging) in a
// comment on the call's own lines (a section comment above is not about the call).
bool explained(const CallEvent& call, const SemanticModel& model) {
  std::string_view src = model.source();
  size_t begin = ts_node_start_byte(call.node) - ts_node_start_point(call.node).column;
  size_t end = src.find('\n', ts_node_end_byte(call.node));
  if (end == std::string_view::npos) end = src.size();
  // Scan the lines for comments; '#' inside string literals is rare enough in a
  // DataLoader call to ignore.
  for (size_t pos = begin; pos < end;) {
    size_t eol = src.find('\n', pos);
    if (eol == std::string_view::npos || eol > end) eol = end;
    std::string_view line = src.substr(pos, eol - pos);
    size_t hash = line.find('#');
    if (hash != std::string_view::npos) {
      std::string_view comment = line.substr(hash);
      // Several comments can share a line: "# IterableDataset  # noqa".
      for (size_t h = 0; h != std::string_view::npos; h = comment.find('#', h + 1)) {
        if (!is_tool_directive(comment.substr(h))) return true;
      }
    }
    pos = eol + 1;
  }
  return false;
}

class DataloaderNumWorkers final : public Rule {
 public:
  // Its findings are DataLoader calls.
  static constexpr std::string_view kTriggers[] = {"DataLoader"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (call.qualname != api::kDataLoaderClass || call.has_kwargs_splat || call.has_args_splat) return;
    TSNode workers = TrainingLoaderTracker::argument(call, ctx, "num_workers", 5);
    if (ts_node_is_null(workers)) {
      tracker_.consider(call, ctx,
                        "training DataLoader has no `num_workers`: batches load in the main process and the "
                        "GPU waits for them; set `num_workers` (e.g. min(8, os.cpu_count()))");
      return;
    }
    if (Syntax::get().kind(workers) == Kind::kInteger && ctx.text(workers) == "0" && !explained(call, ctx.model())) {
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
  return python::rule_entry<python::DataloaderNumWorkers>({
      .code = "TL201",
      .name = "dataloader-num-workers",
      .severity = Severity::kWarning,
      .checklist_items = {"A2"},
      .languages = {Language::kPython, Language::kCpp},
  });
}

}  // namespace torchlint
