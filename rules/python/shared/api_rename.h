#pragma once
// Rewrites a call or a from-import of one API to another API that takes the same
// arguments (a rename): shared by the rules that offer such fixes (TL210, TL214).
#include <functional>
#include <optional>
#include <string>
#include <string_view>

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
std::optional<Fix> callee_fix(TSNode callee, std::string_view replacement, const SemanticModel& model);

// `from old.module import a, b` -> `from new.module import a, b` when every name the
// statement imports has a replacement of the same name in one new module (`from functorch
// import vmap, grad` -> `from torch.func import vmap, grad`); a statement importing one
// name is rewritten whole, keeping the name the file uses (`from torch import ger` ->
// `from torch import outer as ger`). `replacement_of` answers for one imported qualified
// name; the statement's first name carries the fix.
std::optional<Fix> from_import_fix(const ImportEvent& event, const SemanticModel& model,
                                   const std::function<std::optional<std::string>(const std::string&)>& replacement_of);

}  // namespace torchlint::python::rename
