// TL506 missing-super-init: an nn.Module subclass whose __init__ never runs
// nn.Module.__init__.
#include "catalog.h"
#include "python/shared/nn_stack.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

using nn_stack::child_by;

std::string module_class_fact(std::string_view qualname) { return "torch-module-class:" + std::string(qualname); }

// Whether `body` calls some `__init__` (`super().__init__()`, `Base.__init__(self)`) or,
// in `calls_self`, a method of self that may do so. Nested definitions do not run here.
void scan(TSNode body, const SemanticModel& m, bool& calls_init, bool& calls_self) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  walk_named(body, [&](TSNode node, uint32_t depth) {
    if (calls_init) return false;
    if (depth > 200) {
      calls_init = true;  // too deep to be sure: assume the call is in there
      return false;
    }
    Kind k = syn.kind(node);
    if ((k == Kind::kFunctionDefinition || k == Kind::kClassDefinition || k == Kind::kLambda) && depth > 0)
      return false;
    // `super().__init__(...)`, `Base.__init__(self)`, and `init = super().__init__`.
    if (k == Kind::kAttribute && m.text(field(node, f.attribute)) == "__init__") {
      calls_init = true;
      return false;
    }
    if (k == Kind::kCall) {
      TSNode callee = field(node, f.function);
      if (syn.kind(callee) == Kind::kAttribute) {
        TSNode obj = field(callee, f.object);
        if (syn.kind(obj) == Kind::kIdentifier && m.text(obj) == "self") calls_self = true;
      }
    }
    return true;
  });
}

// A stub body: docstring, `...`, `pass`-free placeholders and `raise`.
bool is_stub(TSNode body) {
  for (TSNode s : named_children(body)) {
    if (is_type(s, "comment") || is_type(s, "raise_statement")) continue;
    if (is_type(s, "expression_statement")) {
      TSNode e = ts_node_named_child(s, 0);
      if (is_type(e, "string") || is_type(e, "ellipsis")) continue;
    }
    return false;
  }
  return true;
}

class MissingSuperInit final : public Rule {
 public:
  void on_class_end(const ClassInfo& cls, TSNode node, RuleContext& ctx) override {
    const SemanticModel& m = ctx.model();
    if (cls.is_module) ctx.add_fact(module_class_fact(cls.qualname));
    // A decorated class (@dataclass and friends) may have its __init__ written for it.
    TSNode parent = ts_node_parent(node);
    if (is_type(parent, "decorated_definition")) return;

    std::vector<ProjectCondition> conditions;
    std::string base_name;
    if (!cls.is_module) {
      // A base class from another project file: a module if the project pass finds it is one.
      if (cls.bases.size() != 1) return;
      const std::string& base = cls.bases.front();
      if (m.class_info(base)) return;  // a local class that is not a module
      std::string_view top = std::string_view(base).substr(0, base.find('.'));
      std::string_view last = std::string_view(base).substr(base.rfind('.') + 1);
      if (ctx.model().is_external_package(top) || last.empty() || last[0] < 'A' || last[0] > 'Z') return;
      conditions.push_back({ProjectCondition::Kind::kProjectHas, {}, module_class_fact(base), ""});
      base_name = std::string(last);
    }

    TSNode body = child_by(node, "body");
    TSNode init{};
    std::vector<TSNode> other_methods;  // scanned only if __init__ delegates to self
    for (TSNode c : named_children(body)) {
      bool decorated = is_type(c, "decorated_definition");
      if (decorated) c = child_by(c, "definition");
      if (!is_type(c, "function_definition")) {
        // `__init__ = other_init`, or a definition under an `if`: not followed.
        if (is_type(c, "expression_statement") && m.text(c).find("__init__") != std::string_view::npos) return;
        if (is_type(c, "if_statement") || is_type(c, "try_statement")) {
          if (m.text(c).find("__init__") != std::string_view::npos) return;
        }
        continue;
      }
      std::string_view name = m.text(child_by(c, "name"));
      if (name == "__init__") {
        if (decorated) return;  // @overload stubs and wrapped initialisers
        init = c;
      } else {
        other_methods.push_back(c);
      }
    }
    if (ts_node_is_null(init) || is_stub(child_by(init, "body"))) return;
    bool calls_init = false, calls_self = false;
    scan(child_by(init, "body"), m, calls_init, calls_self);
    if (calls_init) return;
    // __init__ delegating to a helper method that runs the base initialiser.
    if (calls_self) {
      for (TSNode method : other_methods) {
        bool method_inits = false, method_calls_self = false;
        scan(child_by(method, "body"), m, method_inits, method_calls_self);
        if (method_inits) return;
      }
    }
    std::string cls_name(m.text(child_by(node, "name")));
    std::string base = base_name.empty() ? "nn.Module" : "`" + base_name + "` (an nn.Module)";
    ctx.report(child_by(init, "name"),
               "`" + cls_name + ".__init__` never calls `super().__init__()`: " + base +
                   " is never initialised, so assigning a submodule or parameter raises `AttributeError: cannot "
                   "assign module before Module.__init__() call` and calling the module fails; call "
                   "`super().__init__()` first",
               std::nullopt, std::move(conditions));
  }
};

}  // namespace
}  // namespace python

python::RuleEntry missing_super_init_rule() {
  return python::rule_entry<python::MissingSuperInit>(catalog_entry("TL506"));
}

}  // namespace torchlint
