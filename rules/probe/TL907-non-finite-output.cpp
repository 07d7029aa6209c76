// TL907 non-finite-output: reported by torchlint-probe (runtime_probe/), which runs the model;
// this file only declares the rule, so `torchlint rules` and `torchlint rule TL907` know it.
#include "python/rule.h"

namespace torchlint {

python::RuleEntry non_finite_output_rule() {
  return {RuleInfo{
      .code = "TL907",
      .name = "non-finite-output",
      .severity = Severity::kError,
      .checklist_items = {"C4"},
      .languages = {Language::kProbe},
  }, nullptr};
}

}  // namespace torchlint
