#include "call_edit.h"

namespace torchlint::python {

std::optional<Fix> append_argument(const CallEvent& call, std::string text, std::string message) {
  const Syntax& syn = Syntax::get();
  if (ts_node_is_null(call.arguments)) return std::nullopt;
  TSNode last{};
  for (TSNode arg : named_children(call.arguments)) {
    if (syn.kind(arg) != Kind::kComment) last = arg;
  }
  if (ts_node_is_null(last)) return std::nullopt;
  Fix fix;
  fix.message = std::move(message);
  fix.edits.push_back({ts_node_end_byte(last), ts_node_end_byte(last), ", " + text});
  return fix;
}

}  // namespace torchlint::python
