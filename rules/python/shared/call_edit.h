#pragma once
// Edits of a call's argument list shared by the rules' fixes (TL213, TL304).
#include <optional>
#include <string>

#include "python/rule.h"

namespace torchlint::python {

// `, <text>` after the call's last argument (before a trailing comma's newline); nullopt
// for a call with no argument or no argument list.
std::optional<Fix> append_argument(const CallEvent& call, std::string text, std::string message);

}  // namespace torchlint::python
