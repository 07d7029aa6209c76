// TL001 is reported by the lint session after the project pass (only then is it known
// whether a suppression matched anything); this file only declares the rule.
#include "python/rule.h"

namespace torchlint {

python::RuleEntry unused_suppression_rule() {
  return {RuleInfo{
      .code = "TL001",
      .name = "unused-suppression",
      .severity = Severity::kInfo,
      .default_enabled = false,
      .checklist_items = {"TOOL"},
      .languages = {Language::kPython, Language::kCpp},
  }, nullptr};
}

}  // namespace torchlint
