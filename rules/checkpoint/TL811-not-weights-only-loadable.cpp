// TL811 not-weights-only-loadable: torch.load(weights_only=True) refuses the file (a
// reviewed global outside torch's allowlist, an opcode outside its subset), though no code
// was found in it.
#include <algorithm>

#include "catalog.h"
#include "checkpoint/pickle_ops.h"
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class NotWeightsOnlyLoadable final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    for (const CheckpointFile* file : checkpoint.files) {
      for (const auto& scan : file->pickles) {
        std::string where = "pickle `" + scan->where + "`";
        std::vector<std::string> names;
        uint64_t first = 0;
        for (const auto& g : scan->safety.globals) {
          if (g.verdict != Verdict::kReviewed) continue;
          if (names.empty()) first = g.first_offset;
          names.push_back(g.display());
        }
        if (!names.empty()) {
          std::string list;
          for (size_t i = 0; i < names.size() && i < 5; ++i) list += (i ? ", " : "") + names[i];
          if (names.size() > 5) list += " and " + std::to_string(names.size() - 5) + " more";
          ctx.report(file->display,
                     where + " references " + list + " (first at byte " + std::to_string(first) +
                         "), outside torch's weights_only allowlist but reviewed to run no code: "
                         "torch.load(weights_only=True) refuses the file; load it only if you trust it, or "
                         "allowlist the names with torch.serialization.add_safe_globals");
        }
        for (const auto& h : scan->safety.hazards) {
          if (hazard_is_dangerous(h.kind)) continue;
          ctx.report(file->display,
                     where + ": " + h.detail + h.where() + ", which torch's weights_only unpickler refuses");
        }
        if (!scan->safety.outside_subset.empty() && scan->run.complete()) {
          std::string ops;
          for (size_t i = 0; i < scan->safety.outside_subset.size() && i < 6; ++i) {
            ops += (i ? ", " : "") + std::string(op::name(scan->safety.outside_subset[i].first));
          }
          ctx.report(file->display,
                     where +
                         " uses opcodes outside the subset torch.save writes and torch's weights_only "
                         "unpickler accepts (" +
                         ops + ", first at byte " + std::to_string(scan->safety.outside_subset.front().second) +
                         "): it was not written by torch.save, and torch.load(weights_only=True) may refuse it");
        }
      }
    }
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry not_weights_only_loadable_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::NotWeightsOnlyLoadable>(catalog_entry("TL811"));
}

}  // namespace torchlint
