// TL702 model-loaded-per-request: a request handler loads model weights on every call.
#include <unordered_set>

#include "catalog.h"
#include "core/text.h"
#include "python/api_tables.h"
#include "python/shared/serving.h"
#include "python/training_checkpoint.h"

namespace torchlint {
namespace python {
namespace {

// What a call loads, or empty when it loads no model.
std::string loaded_by(const CallEvent& call, RuleContext& ctx) {
  if (!call.qualname) return {};
  const std::string& q = *call.qualname;
  if (api::model_loaders().contains(q)) return std::string(q == api::kTorchLoad ? "torch.load" : q);
  if (q.ends_with(".from_pretrained")) {
    size_t dot = q.rfind('.', q.size() - 17);
    return dot == std::string::npos ? q : q.substr(dot + 1);
  }
  if (q == "timm.create_model") {
    TSNode pretrained = call.keyword("pretrained", ctx.model().source());
    if (!ts_node_is_null(pretrained) && Syntax::get().kind(pretrained) == Kind::kTrue)
      return "timm.create_model(pretrained=True)";
  }
  return {};
}

bool is_cache_decorator(std::string_view q) { return api::cache_decorators().contains(q); }

class ModelLoadedPerRequest final : public Rule {
 public:
  void on_start(RuleContext& ctx) override { handlers_ = &ctx.analysis<RequestHandlers>(); }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    const FunctionState& fn = model.function();
    // Loading under a condition is a lazy, load-once cache (`if model is None:`).
    bool conditional = !model.enclosing_conditions().empty();
    std::string loaded = loaded_by(call, ctx);
    if (!loaded.empty() && !conditional) loads_.insert(fn.qualname);
    if (!handlers_->current_is_handler(ctx) || conditional) return;
    if (!loaded.empty()) {
      ctx.report(call.node, "request handler `" + fn.name + "` calls `" + loaded +
                                "` on every request: the weights are read and the model rebuilt each time, "
                                "adding seconds of latency and memory churn; load once at start-up (module "
                                "level, a startup/lifespan hook, or an `@lru_cache` loader)");
      return;
    }
    // A project helper called per request, or a FastAPI dependency resolved per request.
    std::string callee;
    if ((call.qualname == "fastapi.Depends" || call.qualname == "fastapi.params.Depends") &&
        !ts_node_is_null(call.positional(0))) {
      if (auto q = model.resolve_qualified_name(call.positional(0))) callee = *q;
    } else if (call.qualname) {
      callee = *call.qualname;
    }
    if (callee.empty() || is_library_name(callee)) return;
    if (!reported_helpers_.insert(fn.qualname + "|" + callee).second) return;
    using K = ProjectCondition::Kind;
    ctx.report(call.node,
               "request handler `" + fn.name + "` calls `" + std::string(last_dotted_part(callee)) +
                   "`, which loads a model every time it runs: the weights are read and the model rebuilt per "
                   "request; load once at start-up or cache the loader with `@functools.lru_cache`",
               std::nullopt,
               {{K::kReachableHas, {callee}, "loads-model-per-call", ""},
                {K::kReachableLacks, {callee}, "cached-loader", ""}});
  }

  void on_function_end(const FunctionState& fn, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    const Syntax& syn = Syntax::get();
    bool cached = false;
    if (!ts_node_is_null(fn.decorated)) {
      for (TSNode dec : named_children(fn.decorated)) {
        if (cached) break;
        if (syn.kind(dec) != Kind::kDecorator) continue;
        TSNode expr = ts_node_named_child(dec, 0);
        TSNode callee = syn.kind(expr) == Kind::kCall ? field(expr, syn.fields().function) : expr;
        auto q = model.resolve_qualified_name(callee);
        cached = q && is_cache_decorator(*q);
      }
    }
    if (cached) {
      ctx.add_fact("cached-loader");
    } else if (loads_.contains(fn.qualname)) {
      ctx.add_fact("loads-model-per-call");
    }
  }

 private:
  RequestHandlers* handlers_ = nullptr;  // shared
  std::unordered_set<std::string> loads_;
  std::unordered_set<std::string> reported_helpers_;
};

}  // namespace
}  // namespace python

python::RuleEntry model_loaded_per_request_rule() {
  return python::rule_entry<python::ModelLoadedPerRequest>(catalog_entry("TL702"));
}

}  // namespace torchlint
