// TL906 saved-in-train-mode: reported by torchlint-probe (runtime_probe/), which runs the model;
// this file only declares the rule, so `torchlint rules` and `torchlint rule TL906` know it.
#include "python/rule.h"

namespace torchlint {

python::RuleEntry saved_in_train_mode_rule() {
  return {RuleInfo{
      .code = "TL906",
      .name = "saved-in-train-mode",
      .severity = Severity::kWarning,
      .checklist_items = {"E1"},
      .languages = {Language::kProbe},
  }, nullptr};
}

}  // namespace torchlint
