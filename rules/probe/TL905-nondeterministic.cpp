// TL905 nondeterministic: reported by torchlint-probe (runtime_probe/), which runs the model;
// this file only declares the rule, so `torchlint rules` and `torchlint rule TL905` know it.
#include "python/rule.h"

namespace torchlint {

python::RuleEntry nondeterministic_rule() {
  return {RuleInfo{
      .code = "TL905",
      .name = "nondeterministic",
      .severity = Severity::kWarning,
      .checklist_items = {"A6"},
      .languages = {Language::kProbe},
  }, nullptr};
}

}  // namespace torchlint
