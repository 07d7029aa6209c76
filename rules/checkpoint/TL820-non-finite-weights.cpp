// TL820 non-finite-weights: NaN or Inf in floating tensors (needs --scan-values).
#include "catalog.h"
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class NonFiniteWeights final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    for (const CheckpointFile* file : checkpoint.files) {
      if (!file->values_scanned) continue;
      std::string list;
      size_t bad = 0, scanned = 0;
      for (size_t i = 0; i < file->tensors.size(); ++i) {
        const ValueStats& s = file->stats[i];
        if (!s.scanned) continue;
        ++scanned;
        if (s.nan == 0 && s.inf == 0) continue;
        if (++bad <= 5) {
          list += (bad > 1 ? ", " : "") + std::string("`") + file->tensors[i].name + "` (";
          if (s.nan) list += std::to_string(s.nan) + " NaN";
          if (s.nan && s.inf) list += ", ";
          if (s.inf) list += std::to_string(s.inf) + " Inf";
          list += ")";
        }
      }
      if (!bad) continue;
      if (bad > 5) list += " and " + std::to_string(bad - 5) + " more";
      ctx.report(file->display, std::to_string(bad) + " of " + std::to_string(scanned) +
                                    " floating tensors hold NaN or Inf: " + list +
                                    "; the run had diverged when this was saved");
    }
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry non_finite_weights_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::NonFiniteWeights>(catalog_entry("TL820"));
}

}  // namespace torchlint
