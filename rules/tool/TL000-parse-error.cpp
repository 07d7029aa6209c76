// TL000 is reported by the front-ends themselves (they know when parsing failed); this
// file only declares the rule.
#include "python/rule.h"

namespace torchlint {

python::RuleEntry parse_error_rule() {
  RuleInfo info;
  info.code = "TL000";
  info.name = "parse-error";
  info.severity = Severity::kError;
  info.checklist_items = {"TOOL"};
  info.languages = {Language::kPython, Language::kCpp, Language::kCheckpoint};
  return {std::move(info), nullptr};
}

}  // namespace torchlint
