#pragma once
#include <string_view>

namespace torchlint {
// The Markdown doc of a rule, embedded at build time from rules/*/<CODE>-<name>.md.
std::string_view rule_doc(std::string_view code);
}  // namespace torchlint
