#include "dataloader_workers.h"

#include "python/api_tables.h"

namespace torchlint::python::dataloader_workers {

namespace {

// Comments that only talk to tools (`# noqa`, `# type: ignore`, test marks) explain nothing.
bool is_tool_directive(std::string_view comment) {
  size_t i = comment.find_first_not_of("# \t");
  if (i == std::string_view::npos) return true;
  std::string_view body = comment.substr(i);
  for (std::string_view d :
       {"noqa", "NOQA", "type:", "pylint:", "pragma", "fmt:", "torchlint:", "expect:", "nosec", "isort:"}) {
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

bool is_text_collator(std::string_view q) {
  return q.starts_with("transformers.") &&
         (q.find("DataCollator") != std::string_view::npos || q.ends_with("default_data_collator"));
}

}  // namespace

void NumWorkersCheck::on_call(const CallEvent& call, RuleContext& ctx) {
  if (call.qualname != api::kDataLoaderClass || call.has_kwargs_splat || call.has_args_splat) return;
  TSNode workers = TrainingLoaderTracker::argument(call, ctx, "num_workers", 5);
  bool missing = ts_node_is_null(workers);
  bool zero = !missing && Syntax::get().kind(workers) == Kind::kInteger && ctx.text(workers) == "0" &&
              !explained(call, ctx.model());
  if (!missing && !zero) return;
  std::vector<ProjectCondition> conditions;
  if (in_memory(call, ctx, conditions)) return;
  std::string message;
  if (training_) {
    message = missing ? "training DataLoader has no `num_workers`: batches load in the main process and the GPU "
                        "waits for them; set `num_workers` (e.g. min(8, os.cpu_count()))"
                      : "training DataLoader has `num_workers=0`: batches load in the main process and the GPU "
                        "waits for them; use worker processes (e.g. min(8, os.cpu_count()))";
  } else {
    message = std::string(missing ? "DataLoader has no `num_workers`" : "DataLoader has `num_workers=0`") +
              ": batches load in the main process, one at a time between the steps that use them; worker "
              "processes would prepare the next ones in parallel";
  }
  tracker_.consider(call, ctx, std::move(message), std::move(conditions));
}

void NumWorkersCheck::on_assign(const AssignEvent& event, RuleContext& ctx) {
  const Syntax& syn = Syntax::get();
  if (ts_node_is_null(event.value) || syn.kind(event.target) != Kind::kIdentifier) return;
  std::string name(ctx.text(event.target));
  if (syn.kind(event.value) == Kind::kCall) {
    auto q = ctx.model().resolve_qualified_name(field(event.value, syn.fields().function));
    if (q && is_text_collator(*q)) {
      collators_.insert(std::move(name));
      return;
    }
  }
  collators_.erase(name);
}

void NumWorkersCheck::on_loop_end(const LoopState& loop, RuleContext& ctx) { tracker_.on_loop_end(loop, ctx); }

void NumWorkersCheck::on_module_end(RuleContext& ctx) {
  if (training_)
    tracker_.report(ctx);
  else
    tracker_.report_not_training(ctx);
}

bool NumWorkersCheck::in_memory(const CallEvent& call, RuleContext& ctx,
                                std::vector<ProjectCondition>& conditions) const {
  // Pre-tokenized text batched by a transformers data collator: an item is a row of an
  // Arrow table already in memory, and the collator only pads and stacks.
  TSNode collate = TrainingLoaderTracker::argument(call, ctx, "collate_fn", 7);
  if (!ts_node_is_null(collate)) {
    const Syntax& syn = Syntax::get();
    TSNode fn = syn.kind(collate) == Kind::kCall ? field(collate, syn.fields().function) : collate;
    auto q = ctx.model().resolve_qualified_name(fn);
    if (syn.kind(collate) == Kind::kIdentifier && collators_.contains(std::string(ctx.text(collate)))) return true;
    if (q && is_text_collator(*q)) return true;
    if (q && !ctx.model().is_external_package(std::string_view(*q).substr(0, q->find('.')))) {
      conditions.push_back({ProjectCondition::Kind::kReachableLacks, {*q}, kPadsTokensFact, ""});
    }
  }
  TSNode dataset = TrainingLoaderTracker::argument(call, ctx, "dataset", 0);
  if (ts_node_is_null(dataset)) return false;
  ValueInfo v = ctx.model().infer_value(dataset);
  if (v.kind == ValueKind::kInMemoryDataset) return true;
  if (v.kind == ValueKind::kInstance && !v.type.empty()) {
    conditions.push_back({ProjectCondition::Kind::kReachableLacks, {v.type + ".__getitem__"}, kItemsInMemoryFact, ""});
  }
  return false;
}

}  // namespace torchlint::python::dataloader_workers
