// The request-handler analysis of the serving rules (TL701-TL703): the apps and routers a
// file builds, the decorators that route requests to its functions, and a cheap look at
// the file's imports that rules most files out before any of that.
#include "serving.h"

#include <algorithm>
#include <cstring>

#include "core/name_table.h"
#include "core/text.h"
#include "python/api_tables.h"

namespace torchlint::python {

namespace {

bool is_app_constructor(std::string_view q) { return api::web_app_constructors().contains(q); }

bool is_route_verb(std::string_view verb) { return api::route_decorator_methods().contains(verb); }

bool names_app(std::string_view name) {
  std::string n = ascii_lower(last_dotted_part(name));
  static const NameSet exact = {
      "app", "application", "api", "router", "bp", "blueprint", "server", "routes", "api_router", "web_app",
  };
  return exact.contains(n) || n.ends_with("_app") || n.ends_with("_router") || n.ends_with("_bp") ||
         n.ends_with("_blueprint") || n.ends_with("_api") || n.ends_with("_routes");
}

// Libraries whose callables are not torch models run by forward (they handle grad mode
// and eval themselves, or are not torch at all).
bool is_non_torch_model_library(std::string_view q) {
  return api::non_torch_model_packages().contains(q.substr(0, q.find('.')));
}

}  // namespace

void RequestHandlers::on_assign(const AssignEvent& event, RuleContext& ctx) {
  if (event.op != "=" || ts_node_is_null(event.value)) return;
  const SemanticModel& model = ctx.model();
  const Syntax& syn = Syntax::get();
  Kind tk = syn.kind(event.target);
  if (tk != Kind::kIdentifier && tk != Kind::kAttribute) return;
  if (syn.kind(event.value) != Kind::kCall) return;
  auto q = model.resolve_qualified_name(field(event.value, syn.fields().function));
  if (!q) return;
  std::string_view target = model.text(event.target);
  if (is_app_constructor(*q)) apps_.emplace(target);
  if (*q == "bentoml.Service") services_.emplace(target);
  if (is_non_torch_model_library(*q) && model.infer_value(event.value).kind == ValueKind::kUnknown) {
    library_callables_.emplace(target);
  }
}

bool RequestHandlers::is_library_callable(std::string_view name, RuleContext&) const {
  return !library_callables_.empty() && library_callables_.contains(std::string(name));
}

bool RequestHandlers::may_have_handlers(RuleContext& ctx) {
  if (!may_have_handlers_) {
    // A framework is imported before its app or decorators exist, so its name is on a
    // line that imports (`from fastapi import`, `import flask`, `importlib.import_module(...)`):
    // one search for "import" and a look at each such line costs a tenth of searching the
    // whole text for every name. These are the frameworks of is_app_constructor and
    // is_handler (flask covers flask_restx and flask_smorest; Ray Serve comes as
    // `ray.serve`, `from ray import serve`, or `import ray` and `ray.serve.deployment`).
    static constexpr std::string_view kWords[] = {"fastapi",  "flask",   "quart",   "sanic",      "starlette",
                                                  "litestar", "aiohttp", "bentoml", "import ray", "import serve"};
    std::string_view text = ctx.model().source();
    auto imports_framework = [&] {
      constexpr std::string_view kImport = "import";
      const char* begin = text.data();
      const char* end = begin + text.size();
      for (const char* p = begin; p < end;) {
        // memmem, not string_view::find: find stops at every occurrence of the first letter.
        p = static_cast<const char*>(memmem(p, static_cast<size_t>(end - p), kImport.data(), kImport.size()));
        if (!p) return false;
        size_t at = static_cast<size_t>(p - begin);
        size_t line_start = text.rfind('\n', at);
        line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
        size_t line_end = std::min(text.find('\n', at), text.size());
        std::string_view line = text.substr(line_start, line_end - line_start);
        for (std::string_view word : kWords) {
          if (line.find(word) != std::string_view::npos) return true;
        }
        p = begin + line_end;
      }
      return false;
    };
    // A route path opens a string: `"/` or `'/`, for a router imported from elsewhere.
    // Slashes are rarer than quotes.
    auto has_route_path = [&] {
      const char* end = text.data() + text.size();
      for (const char* p = text.data(); (p = static_cast<const char*>(std::memchr(p, '/', end - p))); ++p) {
        if (p > text.data() && (p[-1] == '"' || p[-1] == '\'')) return true;
      }
      return false;
    };
    may_have_handlers_ = imports_framework() || has_route_path();
  }
  return *may_have_handlers_;
}

bool RequestHandlers::current_is_handler(RuleContext& ctx) {
  const FunctionState& fn = ctx.model().function();
  if (fn.is_module_level || !may_have_handlers(ctx)) return false;
  auto [it, inserted] = cache_.try_emplace(fn.node.id, false);
  if (inserted) it->second = is_handler(fn, ctx.model());
  return it->second;
}

bool RequestHandlers::is_handler(const FunctionState& fn, const SemanticModel& model) const {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  // `decorated`: the decorated_definition of a function or class, or null.
  auto decorators = [&](TSNode decorated, auto&& visit) {
    if (ts_node_is_null(decorated) || syn.kind(decorated) != Kind::kDecoratedDefinition) return false;
    for (TSNode dec : named_children(decorated)) {
      if (syn.kind(dec) != Kind::kDecorator) continue;
      if (visit(ts_node_named_child(dec, 0))) return true;
    }
    return false;
  };
  bool routed = decorators(fn.decorated, [&](TSNode expr) {
    if (ts_node_is_null(expr)) return false;
    bool is_call = syn.kind(expr) == Kind::kCall;
    TSNode callee = is_call ? field(expr, f.function) : expr;
    if (auto q = model.resolve_qualified_name(callee)) {
      if (*q == "bentoml.api") return true;
      if (q->starts_with("litestar.") && is_route_verb(last_dotted_part(*q))) return true;
    }
    if (!is_call || syn.kind(callee) != Kind::kAttribute) return false;
    std::string_view verb = model.text(field(callee, f.attribute));
    std::string object(model.text(field(callee, f.object)));
    if (verb == "api") return services_.contains(object);
    if (!is_route_verb(verb)) return false;
    if (apps_.contains(object)) return true;
    // An app from another module (`from .app import router`): a route path says it.
    if (!names_app(object)) return false;
    TSNode args = field(expr, f.arguments);
    TSNode first =
        ts_node_is_null(args) || ts_node_named_child_count(args) == 0 ? TSNode{} : ts_node_named_child(args, 0);
    std::string_view path;
    return !ts_node_is_null(first) && string_literal_value(first, model.source(), path) && path.starts_with("/");
  });
  if (routed) return true;
  // Ray Serve: a deployment class answers requests in __call__.
  if (fn.name != "__call__" || fn.enclosing_class < 0) return false;
  TSNode cls = ts_node_parent(fn.node);
  if (!ts_node_is_null(cls) && syn.kind(cls) == Kind::kDecoratedDefinition) cls = ts_node_parent(cls);
  if (!ts_node_is_null(cls)) cls = ts_node_parent(cls);  // block -> class_definition
  if (ts_node_is_null(cls) || syn.kind(cls) != Kind::kClassDefinition) return false;
  return decorators(ts_node_parent(cls), [&](TSNode expr) {
    if (ts_node_is_null(expr)) return false;
    TSNode callee = syn.kind(expr) == Kind::kCall ? field(expr, f.function) : expr;
    auto q = model.resolve_qualified_name(callee);
    return q && q->starts_with("ray.serve") && q->ends_with("deployment");
  });
}

}  // namespace torchlint::python
