#pragma once
// Rewrites a call or a from-import of one API to another API that takes the same
// arguments (a rename): shared by the rules that offer such fixes (TL210, TL212).
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/text.h"
#include "python/rule.h"

namespace torchlint::python::rename {

// "torch.linalg.qr" -> "torch.linalg"; "" for a top-level name.
inline std::string_view parent_of(std::string_view q) {
  size_t dot = q.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : q.substr(0, dot);
}

// `<obj>.old(...)` -> a call of `replacement`: the attribute is renamed when `<obj>` is
// already the replacement's module, else the callee is spelled from the file's own `torch`
// import (`functorch.vmap` -> `torch.func.vmap`). A bare name (`qr(...)`, bound by a
// from-import) is left alone: the import is where it is renamed.
inline std::optional<Fix> callee_fix(TSNode callee, std::string_view replacement, const SemanticModel& model) {
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

// `from old.module import a, b` -> `from new.module import a, b` when every name the
// statement imports has a replacement of the same name in one new module (`from functorch
// import vmap, grad` -> `from torch.func import vmap, grad`); a statement importing one
// name is rewritten whole, keeping the name the file uses (`from torch import ger` ->
// `from torch import outer as ger`). `replacement_of` answers for one imported qualified
// name; the statement's first name carries the fix.
inline std::optional<Fix> from_import_fix(
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
