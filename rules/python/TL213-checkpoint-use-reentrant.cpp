// TL213 checkpoint-use-reentrant: activation checkpointing without an explicit use_reentrant.
#include <vector>

#include "catalog.h"
#include "python/rule.h"
#include "python/shared/call_edit.h"

namespace torchlint {
namespace python {
namespace {

// torch warns from 2.1 that the default of `use_reentrant` will change.
constexpr TorchVersion kWarnsFrom{2, 1};

bool is_checkpoint(std::string_view q) {
  return q == "torch.utils.checkpoint.checkpoint" || q == "torch.utils.checkpoint.checkpoint_sequential";
}

class CheckpointUseReentrant final : public Rule {
 public:
  static constexpr std::string_view kTriggers[] = {"checkpoint", "checkpoint_sequential"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (!call.qualname || ctx.options().target_torch < kWarnsFrom) return;
    if (call.has_kwargs_splat || !ts_node_is_null(call.keyword("use_reentrant"))) return;
    if (is_checkpoint(*call.qualname)) {
      report(call, ctx);
    } else if (ctx.model().in_function() && ts_node_is_null(call.receiver) &&
               *call.qualname == ctx.model().module_name() + "." + std::string(ctx.text(call.callee))) {
      // A function body calling a name the module binds only further down (`from
      // torch.utils.checkpoint import checkpoint` after the def): decided at module end.
      pending_.push_back({call.node, std::string(ctx.text(call.callee)), add_reentrant(call)});
    }
  }

  void on_module_end(RuleContext& ctx) override {
    for (auto& p : pending_) {
      const Binding* b = ctx.model().lookup(p.name);
      if (b && b->kind == BindingKind::kImport && is_checkpoint(b->qualified_name)) {
        ctx.report(p.node, message(p.name), std::move(p.fix));
      }
    }
    pending_.clear();
  }

 private:
  static std::string message(std::string_view name) {
    return "`" + std::string(name) +
           "` without an explicit `use_reentrant`: torch warns that its default will "
           "change; pass `use_reentrant=False` (recommended) or `use_reentrant=True` to keep today's behaviour";
  }
  // The default torch uses today, spelled out: the same behaviour, without the warning.
  static std::optional<Fix> add_reentrant(const CallEvent& call) {
    return append_argument(call, "use_reentrant=True", "Pass `use_reentrant=True` (today's default)");
  }
  static void report(const CallEvent& call, RuleContext& ctx) {
    std::string_view q = *call.qualname;
    ctx.report(call.node, message(q.substr(q.rfind('.') + 1)), add_reentrant(call));
  }

  struct Pending {
    TSNode node;
    std::string name;
    std::optional<Fix> fix;
  };
  std::vector<Pending> pending_;
};

}  // namespace
}  // namespace python

python::RuleEntry checkpoint_use_reentrant_rule() {
  return python::rule_entry<python::CheckpointUseReentrant>(catalog_entry("TL213"));
}

}  // namespace torchlint
