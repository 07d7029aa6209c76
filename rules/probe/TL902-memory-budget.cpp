// TL902 memory-budget: reported by torchlint-probe (runtime_probe/), which runs the model;
// this file only declares the rule, so `torchlint rules` and `torchlint rule TL902` know it.
#include "python/rule.h"

namespace torchlint {

python::RuleEntry memory_budget_rule() {
  return {RuleInfo{
      .code = "TL902",
      .name = "memory-budget",
      .severity = Severity::kWarning,
      .checklist_items = {"A9"},
      .languages = {Language::kProbe},
  }, nullptr};
}

}  // namespace torchlint
