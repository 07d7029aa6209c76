#include "training_dataloader.h"

#include <algorithm>

#include "core/text.h"

namespace torchlint::python {

namespace {

bool contains_train(std::string_view name) { return ascii_ifind(name, "train") != std::string_view::npos; }

bool names_evaluation(std::string_view name) {
  std::string lower = ascii_lower(name);
  return lower.find("val") != std::string::npos || lower.find("test") != std::string::npos ||
         lower.find("eval") != std::string::npos;
}

// `enumerate(loader)`, `tqdm(loader, ...)`, `iter(loader)`: the loader being iterated.
TSNode iterated_name(TSNode iter, const SemanticModel& model) {
  const Syntax& syn = Syntax::get();
  for (int depth = 0; depth < 4 && !ts_node_is_null(iter); ++depth) {
    Kind k = syn.kind(iter);
    if (k == Kind::kIdentifier) return iter;
    // `self.loader`: matched by the attribute name the loader was assigned to.
    if (k == Kind::kAttribute) return field(iter, syn.fields().attribute);
    if (k != Kind::kCall) return {};
    TSNode args = field(iter, syn.fields().arguments);
    if (ts_node_is_null(args) || ts_node_named_child_count(args) == 0) return {};
    iter = ts_node_named_child(args, 0);
    (void)model;
  }
  return {};
}

}  // namespace

TSNode TrainingLoaderTracker::argument(const CallEvent& call, RuleContext& ctx, std::string_view keyword,
                                       size_t position) {
  TSNode value = call.keyword(keyword, ctx.model().source());
  if (ts_node_is_null(value)) value = call.positional(position);
  return value;
}

void TrainingLoaderTracker::consider(const CallEvent& call, RuleContext& ctx, std::string message,
                                     std::vector<ProjectCondition> conditions) {
  // Test code builds small loaders in the main process on purpose.
  if (ctx.model().is_pytest_file()) return;
  LoaderCandidate c;
  c.call = call.node;
  c.message = std::move(message);
  c.conditions = std::move(conditions);
  const Syntax& syn = Syntax::get();
  if (!ts_node_is_null(call.assigned_to)) {
    TSNode target = call.assigned_to;
    if (syn.kind(target) == Kind::kAttribute) target = field(target, syn.fields().attribute);
    if (syn.kind(target) == Kind::kIdentifier) c.name = std::string(ctx.text(target));
  }
  const SemanticModel& model = ctx.model();
  TSNode parent = ts_node_parent(call.node);
  if (model.in_function() && !ts_node_is_null(parent) && syn.kind(parent) == Kind::kReturnStatement) {
    c.returned_by = model.function().qualname;
    // `def train_dataloader(self): return DataLoader(...)` (a Lightning hook),
    // `get_train_loader()`: the function's name says what the loader is for.
    if (contains_train(model.function().name)) c.training = true;
  }
  TSNode shuffle = argument(call, ctx, "shuffle", 2);
  // A shuffled loader is for training, unless its name says otherwise (`valid_loader`
  // shuffled to sample a few batches for display).
  if (!ts_node_is_null(shuffle) && syn.kind(shuffle) == Kind::kTrue && !names_evaluation(c.name)) c.training = true;
  if (contains_train(c.name)) c.training = true;
  candidates_.push_back(std::move(c));
}

void TrainingLoaderTracker::on_loop_end(const LoopState& loop, RuleContext& ctx) {
  if (!loop.is_for) return;
  bool trains = loop.steps_optimizer || loop.calls_backward;
  if (!trains && loop.direct_callees.empty()) return;
  TSNode name = iterated_name(loop.iter, ctx.model());
  if (ts_node_is_null(name)) return;
  std::string_view text = ctx.text(name);
  for (auto& c : candidates_) {
    if (c.name != text) continue;
    if (trains) {
      c.training = true;
    } else if (c.step_helpers.empty()) {
      c.step_helpers = loop.direct_callees;
    }
  }
}

void TrainingLoaderTracker::report(RuleContext& ctx, const std::vector<ProjectCondition>& conditions) {
  using K = ProjectCondition::Kind;
  for (auto& c : candidates_) {
    auto all = conditions;
    all.insert(all.end(), c.conditions.begin(), c.conditions.end());
    if (c.training) {
      ctx.report(c.call, c.message, c.fix, std::move(all));
    } else if (!c.step_helpers.empty()) {
      all.push_back({K::kReachableOnceHas, c.step_helpers, kTrainsStepFact, ""});
      ctx.report(c.call, c.message, c.fix, std::move(all));
    } else if (!c.returned_by.empty()) {
      all.push_back({K::kSomeCallIn, {c.returned_by}, kTrainDataContext, ""});
      ctx.report(c.call, c.message, c.fix, std::move(all));
    }
  }
  candidates_.clear();
}

void TrainingLoaderTracker::report_not_training(RuleContext& ctx) {
  for (auto& c : candidates_) {
    if (!c.training && c.step_helpers.empty() && c.returned_by.empty()) {
      ctx.report(c.call, c.message, c.fix, std::move(c.conditions));
    }
  }
  candidates_.clear();
}

}  // namespace torchlint::python
