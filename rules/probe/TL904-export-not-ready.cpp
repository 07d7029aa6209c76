// TL904 export-not-ready: reported by torchlint-probe (runtime_probe/), which runs the model;
// this file only declares the rule, so `torchlint rules` and `torchlint rule TL904` know it.
#include "python/rule.h"

namespace torchlint {

python::RuleEntry export_not_ready_rule() {
  return {RuleInfo{
      .code = "TL904",
      .name = "export-not-ready",
      .severity = Severity::kWarning,
      .checklist_items = {"D2", "E1"},
      .languages = {Language::kProbe},
  }, nullptr};
}

}  // namespace torchlint
