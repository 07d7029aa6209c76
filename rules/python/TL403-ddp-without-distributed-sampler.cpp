// TL403 ddp-without-distributed-sampler: a DDP script whose training loader gives every
// rank the whole dataset.
#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "catalog.h"
#include "core/text.h"
#include "python/api_tables.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

bool is_ddp(std::string_view q) {
  return q == api::kDistributedDataParallel || q == "torch.distributed.fsdp.FullyShardedDataParallel" ||
         q == "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel";
}

bool is_iterable_base(std::string_view q) { return api::iterable_dataset_bases().contains(q); }

bool is_map_base(std::string_view q) { return api::map_dataset_bases().contains(q); }

enum class Style { kUnknown, kMap, kIterable };

// Map-style or iterable, through the classes of this file.
Style class_style(std::string_view q, const SemanticModel& model, int depth = 0) {
  if (is_iterable_base(q)) return Style::kIterable;
  if (is_map_base(q)) return Style::kMap;
  const ClassInfo* local = model.class_info(q);
  if (!local || depth > 8) return Style::kUnknown;
  Style found = Style::kUnknown;
  for (const auto& b : local->bases) {
    Style s = class_style(b, model, depth + 1);
    if (s == Style::kIterable) return s;  // an iterable dataset shards itself (or should)
    if (s == Style::kMap) found = s;
  }
  return found;
}

Style dataset_style(TSNode dataset, const SemanticModel& model) {
  if (ts_node_is_null(dataset)) return Style::kUnknown;
  const Syntax& syn = Syntax::get();
  std::optional<std::string> type;
  if (syn.kind(dataset) == Kind::kCall) {
    type = model.resolve_qualified_name(field(dataset, syn.fields().function));
  } else {
    ValueInfo v = model.infer_value(dataset);
    if (!v.type.empty()) type = v.type;
  }
  if (!type) return Style::kUnknown;
  if (*type == "torch.utils.data.TensorDataset" || *type == "torch.utils.data.dataset.TensorDataset")
    return Style::kMap;
  // torchvision's datasets are map-style, except the few video/iterable ones nobody shards by hand.
  if (type->starts_with("torchvision.datasets.") && type->find("Iterable") == std::string::npos) return Style::kMap;
  return class_style(*type, model);
}

bool contains_train(std::string_view name) { return ascii_lower(name).find("train") != std::string::npos; }

// Code that talks about ranks: a dataset split per rank, or a branch taken only when
// (not) distributed.
bool mentions_ranks(std::string_view text) {
  std::string t = ascii_lower(text);
  for (std::string_view w : {"rank", "world", "distributed", "ddp", "shard", "replica", "dist."}) {
    if (t.find(w) != std::string::npos) return true;
  }
  return false;
}

// `enumerate(loader)`, `tqdm(loader)`, `self.loader`: the loader name a loop iterates.
std::string_view iterated_name(TSNode iter, const SemanticModel& model) {
  const Syntax& syn = Syntax::get();
  for (int depth = 0; depth < 4 && !ts_node_is_null(iter); ++depth) {
    Kind k = syn.kind(iter);
    if (k == Kind::kIdentifier) return model.text(iter);
    if (k == Kind::kAttribute) return model.text(field(iter, syn.fields().attribute));
    if (k != Kind::kCall) return {};
    TSNode args = field(iter, syn.fields().arguments);
    if (ts_node_is_null(args) || ts_node_named_child_count(args) == 0) return {};
    iter = ts_node_named_child(args, 0);
  }
  return {};
}

struct Loader {
  TSNode call{};
  std::string name;
  bool training = false;
  bool shuffled = false;
  bool conditional = false;
};

class DdpWithoutDistributedSampler final : public Rule {
 public:
  // Its findings are DataLoader calls.
  static constexpr std::string_view kTriggers[] = {"DataLoader"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    if (call.qualname && is_ddp(*call.qualname) && ts_node_is_null(ddp_)) ddp_ = call.node;
    // Frameworks that shard loaders themselves: accelerate, Lightning Fabric.
    if (call.method == "prepare" || call.method == "setup_dataloaders" ||
        (call.qualname && call.qualname->ends_with("prepare_data_loader"))) {
      framework_ = true;
    }
    if (call.qualname == "torch.utils.data.DistributedSampler" ||
        call.qualname == "torch.utils.data.distributed.DistributedSampler") {
      distributed_sampler_ = true;
    }
    if (call.qualname != api::kDataLoaderClass || call.has_args_splat || call.has_kwargs_splat) return;
    std::string_view src = model.source();
    auto arg = [&](std::string_view name, size_t position) {
      TSNode v = call.keyword(name, src);
      return ts_node_is_null(v) ? call.positional(position) : v;
    };
    if (!ts_node_is_null(arg("sampler", 3)) || !ts_node_is_null(arg("batch_sampler", 4))) return;
    TSNode shuffle = arg("shuffle", 2);
    bool shuffled = !ts_node_is_null(shuffle) && Syntax::get().kind(shuffle) == Kind::kTrue;
    TSNode dataset = arg("dataset", 0);
    Style style = dataset_style(dataset, model);
    if (style == Style::kIterable) return;
    if (sharded(dataset, model)) return;
    Loader l;
    for (TSNode c : model.enclosing_conditions()) {
      if (mentions_ranks(model.text(c))) return;
      l.conditional = true;
    }
    // shuffle=True only works on map-style datasets; otherwise the dataset must be known.
    if (!shuffled && style != Style::kMap) return;
    l.call = call.node;
    l.shuffled = shuffled;
    const Syntax& syn = Syntax::get();
    if (!ts_node_is_null(call.assigned_to)) {
      TSNode target = call.assigned_to;
      if (syn.kind(target) == Kind::kAttribute) target = field(target, syn.fields().attribute);
      if (syn.kind(target) == Kind::kIdentifier) l.name = std::string(ctx.text(target));
    }
    l.training = shuffled || contains_train(l.name);
    loaders_.push_back(std::move(l));
  }

  void on_loop_end(const LoopState& loop, RuleContext& ctx) override {
    if (!loop.is_for || !loop.trains()) return;
    std::string_view name = iterated_name(loop.iter, ctx.model());
    if (name.empty()) return;
    for (auto& l : loaders_) {
      if (l.name == name) l.training = true;
    }
  }

  void on_module_end(RuleContext& ctx) override {
    if (!ts_node_is_null(ddp_) && !framework_) {
      std::string ddp_line = std::to_string(ts_node_start_point(ddp_).row + 1);
      for (const auto& l : loaders_) {
        if (!l.training) continue;
        // A loader built under a condition in a file that does use DistributedSampler is
        // the single-process branch.
        if (l.conditional && distributed_sampler_) continue;
        std::string who = l.name.empty() ? "training DataLoader" : "training DataLoader `" + l.name + "`";
        ctx.report(l.call,
                   who + " has no `sampler` while the model is wrapped for distributed training (line " + ddp_line +
                       "): every rank iterates the whole dataset, so each GPU repeats the others' batches "
                       "and an epoch does world-size times the work; pass "
                       "`sampler=DistributedSampler(dataset)`" +
                       (l.shuffled ? " instead of `shuffle=True`" : "") + " and call `sampler.set_epoch(epoch)`");
      }
    }
    loaders_.clear();
    ddp_ = {};
    framework_ = false;
    distributed_sampler_ = false;
    sharded_.clear();
  }

  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    // `train_set = Subset(full, indices[rank::world])`, `ShardedDataset(..., rank=rank)`.
    const Syntax& syn = Syntax::get();
    if (event.op != "=" || ts_node_is_null(event.value) || syn.kind(event.target) != Kind::kIdentifier) return;
    if (syn.kind(event.value) == Kind::kCall && splits(event.value, ctx.model())) {
      sharded_.insert(std::string(ctx.text(event.target)));
    }
  }

 private:
  // A dataset built with rank arguments (`Subset(full, idx[rank::world])`) is sharded by hand.
  static bool splits(TSNode call, const SemanticModel& model) {
    return mentions_ranks(model.text(field(call, Syntax::get().fields().arguments)));
  }

  bool sharded(TSNode dataset, const SemanticModel& model) const {
    if (ts_node_is_null(dataset)) return false;
    Kind k = Syntax::get().kind(dataset);
    if (k == Kind::kCall) return splits(dataset, model);
    return k == Kind::kIdentifier && sharded_.contains(std::string(model.text(dataset)));
  }

  std::vector<Loader> loaders_;
  std::unordered_set<std::string> sharded_;
  TSNode ddp_{};
  bool framework_ = false;
  bool distributed_sampler_ = false;
};

}  // namespace
}  // namespace python

python::RuleEntry ddp_without_distributed_sampler_rule() {
  return python::rule_entry<python::DdpWithoutDistributedSampler>(catalog_entry("TL403"));
}

}  // namespace torchlint
