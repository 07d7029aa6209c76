// TL001 is reported by the lint session after the project pass (only then is it known
// whether a suppression matched anything); this file only declares the rule.
#include "python/rule.h"

namespace torchlint {

python::RuleEntry unused_suppression_rule() {
  RuleInfo info;
  info.code = "TL001";
  info.name = "unused-suppression";
  info.severity = Severity::kInfo;
  info.default_enabled = false;
  info.checklist_items = {"TOOL"};
  info.languages = {Language::kPython, Language::kCpp};
  return {std::move(info), nullptr};
}

}  // namespace torchlint
