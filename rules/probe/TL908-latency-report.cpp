// TL908 latency-report: reported by torchlint-probe (runtime_probe/), which runs the model;
// this file only declares the rule, so `torchlint rules` and `torchlint rule TL908` know it.
#include "python/rule.h"

namespace torchlint {

python::RuleEntry latency_report_rule() {
  return {RuleInfo{
      .code = "TL908",
      .name = "latency-report",
      .severity = Severity::kInfo,
      .checklist_items = {"D5"},
      .languages = {Language::kProbe},
  }, nullptr};
}

}  // namespace torchlint
