// TL903 cudnn-benchmark-gain: reported by torchlint-probe (runtime_probe/), which runs the model;
// this file only declares the rule, so `torchlint rules` and `torchlint rule TL903` know it.
#include "python/rule.h"

namespace torchlint {

python::RuleEntry cudnn_benchmark_gain_rule() {
  return {RuleInfo{
      .code = "TL903",
      .name = "cudnn-benchmark-gain",
      .severity = Severity::kInfo,
      .checklist_items = {"D4"},
      .languages = {Language::kProbe},
  }, nullptr};
}

}  // namespace torchlint
