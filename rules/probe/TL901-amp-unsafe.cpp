// TL901 amp-unsafe: reported by torchlint-probe (runtime_probe/), which runs the model;
// this file only declares the rule, so `torchlint rules` and `torchlint rule TL901` know it.
#include "python/rule.h"

namespace torchlint {

python::RuleEntry amp_unsafe_rule() {
  return {RuleInfo{
      .code = "TL901",
      .name = "amp-unsafe",
      .severity = Severity::kWarning,
      .checklist_items = {"A3"},
      .languages = {Language::kProbe},
  }, nullptr};
}

}  // namespace torchlint
