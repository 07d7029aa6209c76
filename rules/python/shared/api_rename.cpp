#include "api_rename.h"

#include "core/text.h"

namespace torchlint::python::rename {

std::optional<Fix> callee_fix(TSNode callee, std::string_view replacement, const SemanticModel& model) {
  const Syntax& syn = Syntax::get();
  if (syn.kind(callee) != Kind::kAttribute) return std::nullopt;
  TSNode object = field(callee, syn.fields().object);
  TSNode attribute = field(callee, syn.fields().attribute);
  Fix fix;
  fix.message = "Use `" + std::string(replacement) + "`";
  auto module = model.resolve_qualified_name(object);
  if (module && *module == parent_of(replacement)) {
    fix.edits.push_back(
        {ts_node_start_byte(attribute), ts_node_end_byte(attribute), std::string(last_dotted_part(replacement))});
    return fix;
  }
  const Binding* torch = model.lookup("torch");
  if (replacement.starts_with("torch.") && torch && torch->kind == BindingKind::kImport &&
      torch->qualified_name == "torch") {
    fix.edits.push_back({ts_node_start_byte(callee), ts_node_end_byte(callee), std::string(replacement)});
    return fix;
  }
  return std::nullopt;
}

std::optional<Fix> from_import_fix(
    const ImportEvent& event, const SemanticModel& model,
    const std::function<std::optional<std::string>(const std::string&)>& replacement_of) {
  const Syntax& syn = Syntax::get();
  if (!event.is_from || ts_node_is_null(event.module) || syn.kind(event.module) != Kind::kDottedName)
    return std::nullopt;
  std::string module(model.text(event.module));
  std::string new_module, single;
  TSNode first{};
  size_t names = 0;
  bool same_names = true;
  for (TSNode child : named_children(event.statement)) {
    if (ts_node_eq(child, event.module) || syn.kind(child) == Kind::kComment) continue;
    if (ts_node_is_null(first)) first = child;
    ++names;
    bool aliased = syn.kind(child) == Kind::kAliasedImport;
    TSNode name = aliased ? field(child, syn.fields().name) : child;
    if (syn.kind(name) != Kind::kDottedName) return std::nullopt;  // a wildcard
    std::string imported(model.text(name));
    auto replacement = replacement_of(module + "." + imported);
    if (!replacement) return std::nullopt;
    std::string_view parent = parent_of(*replacement), last = last_dotted_part(*replacement);
    std::string bound = aliased ? std::string(model.text(field(child, syn.fields().alias))) : imported;
    single = "from " + std::string(parent) + " import " + std::string(last) + (last == bound ? "" : " as " + bound);
    same_names &= last == imported;
    if (!new_module.empty() && new_module != parent) return std::nullopt;
    new_module = std::string(parent);
  }
  if (!ts_node_eq(first, event.name) || new_module.empty()) return std::nullopt;
  Fix fix;
  if (names == 1) {
    fix.message = "Use `" + single + "`";
    fix.edits.push_back({ts_node_start_byte(event.statement), ts_node_end_byte(event.statement), single});
    return fix;
  }
  if (!same_names || new_module == module) return std::nullopt;
  fix.message = "Import from `" + new_module + "`";
  fix.edits.push_back({ts_node_start_byte(event.module), ts_node_end_byte(event.module), new_module});
  return fix;
}

}  // namespace torchlint::python::rename
