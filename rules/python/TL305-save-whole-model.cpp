// TL305 save-whole-model: torch.save of a module object pickles its class by import path.
#include <unordered_set>

#include "catalog.h"
#include "core/text.h"
#include "python/api_tables.h"
#include "python/training_checkpoint.h"

namespace torchlint {
namespace python {
namespace {

// Methods only an nn.Module has (optimizers also have state_dict and load_state_dict).
bool is_module_method(std::string_view method) { return api::module_only_methods().contains(method); }

class SaveWholeModel final : public Rule {
 public:
  // Only `torch.save` is judged.
  static constexpr std::string_view kTriggers[] = {"save"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    if (!ts_node_is_null(call.receiver) && is_module_method(call.method)) {
      std::string root = receiver_root(call.receiver, model);
      if (!root.empty()) modules_.insert(root);
    }
    if (call.qualname != api::kTorchSave) return;
    TSNode obj = call.keyword("obj", model.source());
    if (ts_node_is_null(obj)) obj = call.positional(0);
    if (ts_node_is_null(obj)) return;
    Kind k = Syntax::get().kind(obj);
    if (k != Kind::kIdentifier && k != Kind::kAttribute) return;
    ValueInfo value = model.infer_value(obj);
    // TorchScript modules carry their code and are saved with `.save()` / torch.jit.save.
    if (value.type.starts_with("torch.jit.")) return;
    if (value.kind == ValueKind::kModel) {
      report(call.node, obj, value, ctx);
    } else if (value.kind == ValueKind::kInstance || value.kind == ValueKind::kUnknown) {
      // A project class from another file, or a factory's result: a module if this file uses
      // it as one (`net.parameters()` handed to an optimizer, `net.eval()`).
      pending_.push_back({call.node, obj, value});
    }
  }

  void on_module_end(RuleContext& ctx) override {
    for (const auto& p : pending_) {
      if (modules_.contains(std::string(ctx.text(p.obj)))) report(p.call, p.obj, p.value, ctx);
    }
    pending_.clear();
  }

 private:
  struct Pending {
    TSNode call{};
    TSNode obj{};
    ValueInfo value;
  };

  static void report(TSNode call, TSNode obj, const ValueInfo& value, RuleContext& ctx) {
    std::string name(ctx.text(obj));
    std::string_view last = last_dotted_part(value.type);
    bool is_class = !last.empty() && last[0] >= 'A' && last[0] <= 'Z';
    std::string type = is_class ? "`" + std::string(last) + "`" : std::string("module");
    ctx.report(call, "`torch.save(" + name + ", ...)` pickles the whole " + type +
                         " object: loading it needs the same class at the same import path and "
                         "`torch.load(weights_only=False)`, which runs arbitrary code; save `" +
                         name + ".state_dict()` and rebuild the model before `load_state_dict`");
  }

  std::unordered_set<std::string> modules_;
  std::vector<Pending> pending_;
};

}  // namespace
}  // namespace python

python::RuleEntry save_whole_model_rule() { return python::rule_entry<python::SaveWholeModel>(catalog_entry("TL305")); }

}  // namespace torchlint
