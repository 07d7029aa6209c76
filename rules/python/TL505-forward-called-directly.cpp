// TL505 forward-called-directly: `model.forward(x)` instead of `model(x)`.
#include <unordered_map>

#include "catalog.h"
#include "python/shared/nn_stack.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

using nn_stack::child_by;

std::string module_class_fact(std::string_view qualname) { return "torch-module-class:" + std::string(qualname); }

class ForwardCalledDirectly final : public Rule {
 public:
  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    // `self.act = nn.ReLU()`: parameter-free layers are modules too, though the semantic
    // model does not count them as models.
    const SemanticModel& m = ctx.model();
    if (!is_type(event.target, "attribute")) return;
    TSNode obj = child_by(event.target, "object");
    if (!is_type(obj, "identifier") || m.text(obj) != "self") return;
    const ClassInfo* cls = m.enclosing_class();
    if (!cls) return;
    std::string key = cls->qualname + "." + std::string(m.text(child_by(event.target, "attribute")));
    bool module = false;
    if (is_type(event.value, "call") && event.op == "=") {
      auto q = m.resolve_qualified_name(child_by(event.value, "function"));
      std::string_view n = q ? nn_stack::nn_class(*q) : std::string_view();
      module = !n.empty() && !n.starts_with("Parameter") && n != "Buffer" && !n.ends_with("Loss");
    }
    auto it = module_attrs_.find(key);
    if (it == module_attrs_.end())
      module_attrs_.emplace(key, module);
    else
      it->second = it->second && module;  // assigned something else too: unknown
  }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (call.method != "forward" || ts_node_is_null(call.receiver)) return;
    const SemanticModel& m = ctx.model();
    TSNode recv = call.receiver;
    // self.forward(...) inside the class, super().forward(...), Base.forward(self, x):
    // deliberate calls of an implementation, not of a submodule.
    if (is_type(recv, "identifier") && m.text(recv) == "self") return;
    if (is_type(recv, "call")) return;
    ValueInfo v = m.infer_value(recv);
    std::vector<ProjectCondition> conditions;
    std::string what;
    bool self_attr = is_type(recv, "attribute") && is_type(child_by(recv, "object"), "identifier") &&
                     m.text(child_by(recv, "object")) == "self";
    if (v.kind == ValueKind::kModel) {
      what = self_attr ? "submodule" : "model";
    } else if (v.kind == ValueKind::kInstance && !v.type.empty()) {
      const ClassInfo* cls = m.class_info(v.type);
      if (cls && !cls->is_module) return;
      // A class from another project file: a module if the project pass finds it is one.
      if (!cls) conditions.push_back({ProjectCondition::Kind::kProjectHas, {}, module_class_fact(v.type), ""});
      what = self_attr ? "submodule" : "module";
    } else if (is_self_module_attr(recv, m)) {
      what = "submodule";
    } else {
      return;
    }
    std::string_view text = m.text(recv);
    Fix fix;
    fix.message = "Call `" + std::string(text) + "(...)` instead of `.forward(...)`";
    // Remove `.forward` only: comments and line breaks before the dot stay.
    uint32_t dot = ts_node_end_byte(recv);
    uint32_t count = ts_node_child_count(call.callee);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_child(call.callee, i);
      if (!ts_node_is_named(c) && m.text(c) == ".") dot = ts_node_start_byte(c);
    }
    fix.edits.push_back({dot, ts_node_end_byte(call.callee), ""});
    ctx.report(call.node,
               what + " `" + std::string(text) +
                   "` is called through `.forward(...)`: this skips `__call__`, so "
                   "forward/backward hooks (and the pre-hooks that FSDP, pruning and quantization rely on) never "
                   "run; call `" +
                   std::string(text) + "(...)` instead",
               std::move(fix), std::move(conditions));
  }

  void on_class_end(const ClassInfo& cls, TSNode, RuleContext& ctx) override {
    if (cls.is_module) ctx.add_fact(module_class_fact(cls.qualname));
  }

 private:
  bool is_self_module_attr(TSNode recv, const SemanticModel& m) const {
    if (!is_type(recv, "attribute")) return false;
    TSNode obj = child_by(recv, "object");
    if (!is_type(obj, "identifier") || m.text(obj) != "self") return false;
    const ClassInfo* cls = m.enclosing_class();
    if (!cls) return false;
    auto it = module_attrs_.find(cls->qualname + "." + std::string(m.text(child_by(recv, "attribute"))));
    return it != module_attrs_.end() && it->second;
  }

  std::unordered_map<std::string, bool> module_attrs_;  // "Class.attr" -> holds a torch.nn module
};

}  // namespace
}  // namespace python

python::RuleEntry forward_called_directly_rule() {
  return python::rule_entry<python::ForwardCalledDirectly>(catalog_entry("TL505"));
}

}  // namespace torchlint
