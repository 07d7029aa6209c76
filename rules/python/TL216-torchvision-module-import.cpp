// TL216 torchvision-module-import: `import torchvision.models as models` where
// `from torchvision import models` says the same.
#include <string>

#include "catalog.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

class TorchvisionModuleImport final : public Rule {
 public:
  static constexpr std::string_view kTriggers[] = {"torchvision"};

  void on_import(const ImportEvent& event, RuleContext& ctx) override {
    const std::string& q = event.qualified_name;
    if (event.is_from || event.alias.empty() || !q.starts_with("torchvision.")) return;
    size_t dot = q.rfind('.');
    std::string_view parent = std::string_view(q).substr(0, dot), last = std::string_view(q).substr(dot + 1);
    if (last != event.alias) return;  // `import torchvision.models as tvm` names it differently on purpose
    std::string replacement = "from " + std::string(parent) + " import " + std::string(last);
    std::optional<Fix> fix;
    // One name in the statement: the statement becomes the from-import.
    if (ts_node_named_child_count(event.statement) == 1) {
      fix = Fix{"Use `" + replacement + "`",
                {{ts_node_start_byte(event.statement), ts_node_end_byte(event.statement), replacement}},
                false};
    }
    ctx.report(event.name,
               "`import " + q + " as " + std::string(last) + "` repeats the module's name; write `" + replacement + "`",
               std::move(fix));
  }
};

}  // namespace
}  // namespace python

python::RuleEntry torchvision_module_import_rule() {
  return python::rule_entry<python::TorchvisionModuleImport>(catalog_entry("TL216"));
}

}  // namespace torchlint
