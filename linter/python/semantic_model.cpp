#include "semantic_model.h"

#include <algorithm>

#include "core/discovery.h"
#include "core/name_table.h"
#include "core/text.h"

namespace torchlint::python {

namespace {

bool is_builtin(std::string_view name) { return api::python_builtins().contains(name); }

bool is_module_method_returning_self(std::string_view method) {
  return api::module_methods_returning_self().contains(method);
}

// `(1, 3, 32, 32)`, `((1, 3, 32, 32))`, `([2, 8], dtype=...)`: every size is an integer
// literal (keyword arguments such as dtype or device do not count as sizes).
bool has_literal_shape(TSNode arguments) {
  const Syntax& syn = Syntax::get();
  if (ts_node_is_null(arguments)) return false;
  bool any = false;
  std::vector<TSNode> pending{arguments};
  while (!pending.empty()) {
    TSNode node = pending.back();
    pending.pop_back();
    for (uint32_t i = 0; i < ts_node_named_child_count(node); ++i) {
      TSNode child = ts_node_named_child(node, i);
      switch (syn.kind(child)) {
        case Kind::kKeywordArgument:
        case Kind::kComment:
        case Kind::kFloat:  // the fill value of torch.full
          break;
        case Kind::kInteger:
          any = true;
          break;
        case Kind::kTuple:
        case Kind::kParenthesizedExpression:
          pending.push_back(child);
          break;
        default:
          if (!is_type(child, "list")) return false;
          pending.push_back(child);
      }
    }
  }
  return any;
}

}  // namespace

SemanticModel::SemanticModel(std::string_view source, std::string module_name)
    : source_(source), module_(std::move(module_name)) {
  auto dot = module_.rfind('.');
  package_ = dot == std::string::npos ? std::string() : module_.substr(0, dot);
  // The top-level package this file belongs to, as its own imports name it (`src/lightning/
  // pytorch/x.py` imports `lightning.pytorch`): inside that package's repository, it is
  // project code, not an installed library.
  own_package_ = std::string(top_level_package(module_));
  std::string_view last =
      dot == std::string::npos ? std::string_view(module_) : std::string_view(module_).substr(dot + 1);
  pytest_file_ = last.starts_with("test_") || last.ends_with("_test") || last == "conftest" ||
                 ("." + module_ + ".").find(".tests.") != std::string::npos ||
                 ("." + module_ + ".").find(".test_utils.") != std::string::npos ||
                 ("." + module_ + ".").find(".testing.") != std::string::npos;
  Scope module_scope;
  module_scope.kind = ScopeKind::kModule;
  module_scope.qualname = module_;
  scopes_.push_back(std::move(module_scope));
  scope_stack_.push_back(0);
  auto top = std::make_unique<FunctionState>();
  top->name = kModuleFunction;
  top->qualname = module_ + "." + kModuleFunction;
  top->is_module_level = true;
  top->facts.qualname = top->qualname;
  functions_.push_back(std::move(top));
}

Binding* SemanticModel::bind(std::string_view name, Binding binding) {
  Scope& scope = scopes_[scope_stack_.back()];
  auto [it, inserted] = scope.bindings.insert_or_assign(name, std::move(binding));
  (void)inserted;
  return &it->second;
}

const Binding* SemanticModel::lookup(std::string_view name) const {
  // Innermost scope first; class scopes are visible only from their own body.
  for (size_t i = scope_stack_.size(); i-- > 0;) {
    const Scope& scope = scopes_[scope_stack_[i]];
    if (scope.kind == ScopeKind::kClass && i + 1 != scope_stack_.size()) continue;
    auto it = scope.bindings.find(name);
    if (it != scope.bindings.end()) return &it->second;
  }
  return nullptr;
}

std::string SemanticModel::qualify(std::string_view name) const {
  const Scope& scope = scopes_[scope_stack_.back()];
  return scope.qualname + "." + std::string(name);
}

const ClassInfo* SemanticModel::class_info(std::string_view qualname) const {
  auto it = class_by_qualname_.find(qualname);
  return it == class_by_qualname_.end() ? nullptr : classes_[it->second].get();
}

const ClassInfo* SemanticModel::enclosing_class() const {
  for (size_t i = functions_.size(); i-- > 1;) {
    if (functions_[i]->enclosing_class >= 0) return classes_[static_cast<size_t>(functions_[i]->enclosing_class)].get();
  }
  return nullptr;
}

void SemanticModel::begin_event() const {
  memo_active_ = true;
  resolved_.clear();
  inferred_.clear();
}

std::optional<std::string> SemanticModel::resolve_qualified_name(TSNode expr) const {
  return resolved_.get(memo_active_, expr, [this](TSNode e) { return resolve_uncached(e); });
}

ValueInfo SemanticModel::infer_value(TSNode expr) const {
  return inferred_.get(memo_active_, expr, [this](TSNode e) { return infer_uncached(e); });
}

std::optional<std::string> SemanticModel::resolve_uncached(TSNode expr) const {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  // Attribute names, innermost last: no heap allocation, and a plain struct so that the
  // array is not zeroed on every call (string_view's constructor would be run 66 times).
  struct Part {
    const char* data;
    size_t size;
    operator std::string_view() const { return {data, size}; }
  };
  Part parts[66];
  size_t part_count = 0;
  TSNode n = expr;
  for (int guard = 0;; ++guard) {
    if (ts_node_is_null(n) || guard > 64) return std::nullopt;
    Kind k = syn.kind(n);
    if (k == Kind::kIdentifier) break;
    if (k != Kind::kAttribute) return std::nullopt;
    std::string_view name = text(field(n, f.attribute));
    parts[part_count++] = {name.data(), name.size()};
    n = field(n, f.object);
  }
  std::string_view base = text(n);
  if (base == "self" && part_count > 0) {
    const ClassInfo* cls = enclosing_class();
    if (!cls) return std::nullopt;
    // self.method -> the class's method; self.attr.x is a value, not a name.
    if (part_count != 1) return std::nullopt;
    std::string out;
    out.reserve(cls->qualname.size() + 1 + parts[0].size);
    out += cls->qualname;
    out += '.';
    out += parts[0];
    return out;
  }
  // The name is head + parts, built in one allocation.
  std::string_view head[3];
  if (const Binding* b = lookup(base)) {
    switch (b->kind) {
      case BindingKind::kImport:
      case BindingKind::kFunction:
      case BindingKind::kClass:
        head[0] = b->qualified_name;
        break;
      case BindingKind::kAssign:
        if (b->qualified_name.empty()) return std::nullopt;
        head[0] = b->qualified_name;
        break;
      default:
        return std::nullopt;
    }
  } else if (is_builtin(base)) {
    head[0] = "builtins.";
    head[1] = base;
  } else if (has_star_import()) {
    return std::nullopt;  // could come from `from x import *`: torchlint cannot know
  } else {
    head[0] = module_;  // defined later in this module
    head[1] = ".";
    head[2] = base;
  }
  size_t size = head[0].size() + head[1].size() + head[2].size();
  for (size_t i = 0; i < part_count; ++i) size += 1 + parts[i].size;
  std::string result;
  result.reserve(size);
  for (std::string_view h : head) result += h;
  for (size_t i = part_count; i-- > 0;) {
    result += '.';
    result += parts[i];
  }
  return api::canonical_name(std::move(result));
}

ValueInfo SemanticModel::infer_uncached(TSNode expr) const {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  for (int depth = 0; depth < 32 && !ts_node_is_null(expr); ++depth) {
    switch (syn.kind(expr)) {
      case Kind::kIdentifier: {
        const Binding* b = lookup(text(expr));
        return b ? b->value : ValueInfo{};
      }
      case Kind::kParenthesizedExpression:
        expr = ts_node_named_child(expr, 0);
        continue;
      case Kind::kAttribute: {
        TSNode object = field(expr, f.object);
        if (syn.kind(object) == Kind::kIdentifier && text(object) == "self") {
          if (const ClassInfo* cls = enclosing_class()) {
            auto it = cls->attributes.find(std::string(text(field(expr, f.attribute))));
            if (it != cls->attributes.end()) return it->second.value;
          }
        } else if (syn.kind(object) == Kind::kIdentifier && !cuda_options_.empty()) {
          // `args.device` whose argparse default is "cuda".
          std::string_view attr = text(field(expr, f.attribute));
          if (std::find(cuda_options_.begin(), cuda_options_.end(), attr) != cuda_options_.end()) {
            return ValueInfo{ValueKind::kDevice, "str", true};
          }
        }
        return {};
      }
      case Kind::kString: {
        std::string_view value;
        if (string_literal_value(expr, source_, value) && value.starts_with("cuda")) {
          return ValueInfo{ValueKind::kDevice, "str", true};
        }
        // f"cuda:{rank}": the literal text before the first interpolation.
        std::string_view t = text(expr);
        size_t q = t.find_first_of("'\"");
        if (q != std::string_view::npos && q <= 2 && t.substr(q + 1).starts_with("cuda")) {
          return ValueInfo{ValueKind::kDevice, "str", true};
        }
        return {};
      }
      case Kind::kBinaryOperator: {
        // "cuda:" + str(rank)
        ValueInfo left = infer_value(ts_node_named_child(expr, 0));
        if (left.kind == ValueKind::kDevice && left.cuda) return left;
        return {};
      }
      case Kind::kConditionalExpression: {
        // `"cuda" if torch.cuda.is_available() else "cpu"`: a device that may be CUDA.
        ValueInfo a = infer_value(ts_node_named_child(expr, 0));
        ValueInfo b = infer_value(ts_node_named_child(expr, 2));
        if (a.kind == ValueKind::kDevice || b.kind == ValueKind::kDevice) {
          return ValueInfo{ValueKind::kDevice, "", a.cuda || b.cuda};
        }
        return a.kind == b.kind ? a : ValueInfo{};
      }
      case Kind::kCall: {
        TSNode callee = field(expr, f.function);
        if (syn.kind(callee) == Kind::kAttribute) {
          std::string_view method = text(field(callee, f.attribute));
          // "cuda:{}".format(gpu)
          if (method == "format") {
            ValueInfo s = infer_value(field(callee, f.object));
            if (s.kind == ValueKind::kDevice && s.cuda) return s;
          }
          if (is_module_method_returning_self(method)) {
            ValueInfo receiver = infer_value(field(callee, f.object));
            if (receiver.kind == ValueKind::kModel || receiver.kind == ValueKind::kLoss) return receiver;
          }
        }
        auto q = resolve_qualified_name(callee);
        if (!q) return {};
        if (api::returns_gpu_device(*q)) return ValueInfo{ValueKind::kDevice, *q, true};
        ValueKind kind = api::classify_call(*q);
        if (kind == ValueKind::kDevice) {
          // torch.device("cuda:0"), torch.device("cuda" if available else "cpu"), torch.device(dev)
          TSNode args = field(expr, f.arguments);
          TSNode first = ts_node_is_null(args) ? TSNode{} : ts_node_named_child(args, 0);
          bool cuda = !ts_node_is_null(first) && syn.kind(first) != Kind::kKeywordArgument && infer_value(first).cuda;
          return ValueInfo{kind, *q, cuda};
        }
        if (kind == ValueKind::kTensor && api::makes_synthetic_tensor(*q)) {
          ValueInfo made_up{kind, *q, false};
          made_up.literal_shape = has_literal_shape(field(expr, f.arguments));
          return made_up;
        }
        if (kind != ValueKind::kUnknown) return ValueInfo{kind, *q, false};
        if (const ClassInfo* cls = class_info(*q)) {
          return ValueInfo{cls->is_module ? ValueKind::kModel : ValueKind::kInstance, cls->qualname, false};
        }
        // A class imported from elsewhere in the project (by naming convention): its
        // methods become call edges for the project pass.
        std::string_view top = std::string_view(*q).substr(0, q->find('.'));
        std::string_view last = std::string_view(*q).substr(q->rfind('.') + 1);
        if (!is_external_package(top) && !last.empty() && last[0] >= 'A' && last[0] <= 'Z') {
          return ValueInfo{ValueKind::kInstance, *q, false};
        }
        return {};
      }
      default:
        return {};
    }
  }
  return {};
}

bool SemanticModel::in_context(GradContext kind) const {
  for (size_t i = contexts_.size(); i-- > function().context_base;) {
    if (contexts_[i].first == kind) return true;
  }
  return false;
}

bool SemanticModel::in_no_grad() const {
  // The innermost grad-mode context decides (enable_grad inside no_grad re-enables).
  for (size_t i = contexts_.size(); i-- > function().context_base;) {
    auto [kind, disables] = contexts_[i];
    if (kind == GradContext::kNoGrad) return true;
    if (kind == GradContext::kEnableGrad) return false;
  }
  return function().grad_disabled_decorator || function().grad_disabled_statement;
}

std::span<const TSNode> SemanticModel::enclosing_conditions() const {
  return std::span<const TSNode>(conditions_).subspan(function().condition_base);
}

namespace {

// Names that hold a model in practice when nothing better is known (function parameters).
bool names_model(std::string_view name) {
  char buf[32];  // identifiers are short: lower-case them without a heap allocation
  std::string heap;
  std::string_view n;
  if (name.size() <= sizeof(buf)) {
    for (size_t i = 0; i < name.size(); ++i) buf[i] = ascii_lower_char(name[i]);
    n = std::string_view(buf, name.size());
  } else {
    heap = ascii_lower(name);
    n = heap;
  }
  static const NameSet exact = {
      "model", "net",  "network",  "classifier", "encoder",   "decoder", "generator", "discriminator",
      "netg",  "netd", "backbone", "policy",     "ema_model", "teacher", "student",
  };
  return exact.contains(n) || n.ends_with("_model") || n.starts_with("model_") || n.ends_with("_net");
}

}  // namespace

std::string_view SemanticModel::forward_pass_target(TSNode call, bool by_name) const {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  TSNode callee = field(call, f.function);
  if (ts_node_is_null(callee)) return {};
  Kind k = syn.kind(callee);
  if (k == Kind::kAttribute) {
    // Only `self.model(x)`: other attribute calls are methods, not forward passes.
    TSNode object = field(callee, f.object);
    if (syn.kind(object) != Kind::kIdentifier || text(object) != "self") return {};
  } else if (k != Kind::kIdentifier) {
    return {};
  }
  std::string_view name = text(callee);
  if (is_in_eval_mode(name)) return name;
  ValueInfo value = infer_value(callee);
  if (value.kind == ValueKind::kModel) return name;
  if (!by_name) return {};
  // Calling an instance of a project class is its __call__: in training code, a Module.
  if (value.kind == ValueKind::kInstance) return name;
  if (value.kind != ValueKind::kUnknown) return {};
  if (k == Kind::kIdentifier) {
    const Binding* b = lookup(name);
    bool plain = b && (b->kind == BindingKind::kParameter || b->kind == BindingKind::kAssign);
    return plain && names_model(name) ? name : std::string_view();
  }
  return names_model(text(field(callee, f.attribute))) ? name : std::string_view();
}

bool SemanticModel::is_in_eval_mode(std::string_view receiver) const {
  const auto& modes = function().eval_mode;
  return std::find(modes.begin(), modes.end(), receiver) != modes.end();
}

}  // namespace torchlint::python
