// TL810 unsafe-pickle-global: a pickle imports or calls something known to run code, or
// uses a construct that can run anything whatever the names.
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class UnsafePickleGlobal final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    for (const CheckpointFile* file : checkpoint.files) {
      for (const auto& scan : file->pickles) {
        std::string where = "pickle `" + scan->where + "`";
        std::string consequence = scan->loaded_by_torch ? "torch.load(weights_only=False) runs it when loading this file"
                                                        : "any loader that unpickles it runs it";
        for (const auto& g : scan->safety.globals) {
          if (g.verdict != Verdict::kDangerous) continue;
          ctx.report(file->display, where + " " + (g.calls ? "calls " : "imports ") + g.display() + ", which " +
                                        g.reason + " (byte " + std::to_string(g.first_offset) + "): " + consequence);
        }
        for (const auto& h : scan->safety.hazards) {
          if (!hazard_is_dangerous(h.kind)) continue;
          ctx.report(file->display, where + ": " + h.detail + " (byte " + std::to_string(h.offset) +
                                        "), which can run arbitrary code whatever the names involved: " + consequence);
        }
      }
    }
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry unsafe_pickle_global_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::UnsafePickleGlobal>({
      .code = "TL810",
      .name = "unsafe-pickle-global",
      .severity = Severity::kError,
      .checklist_items = {"E1"},
      .languages = {Language::kCheckpoint},
  });
}

}  // namespace torchlint
