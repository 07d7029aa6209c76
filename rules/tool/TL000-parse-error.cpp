// TL000 is reported by the front-ends themselves (they know when parsing failed); this
// file only declares the rule.
#include "python/rule.h"

namespace torchlint {

python::RuleEntry parse_error_rule() {
  return {RuleInfo{
      .code = "TL000",
      .name = "parse-error",
      .severity = Severity::kError,
      .checklist_items = {"TOOL"},
      .languages = {Language::kPython, Language::kCpp, Language::kCheckpoint},
  }, nullptr};
}

}  // namespace torchlint
