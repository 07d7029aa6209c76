// TL810 unsafe-pickle-global: a pickle imports or calls something that is not known to be
// safe (outside torch's allowlist and the reviewed list; named when it is known to run
// code), or uses a construct that can run anything whatever the names.
#include "catalog.h"
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class UnsafePickleGlobal final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    for (const CheckpointFile* file : checkpoint.files) {
      if (file->is_torchscript()) {
        // Its code is the model: nothing vouches for it.
        ctx.report(file->display,
                   "TorchScript archive: loading it runs its TorchScript code (torch.jit.load, and torch.load hands it "
                   "there: weights_only=True gave no protection before torch 2.6, CVE-2025-32434), which is not known "
                   "to be safe; load it only if you trust its source, or ship a state_dict or safetensors file");
      }
      for (const auto& scan : file->pickles) {
        std::string where = "pickle `" + scan->where + "`";
        std::string consequence = scan->loaded_by_torch
                                      ? "torch.load(weights_only=False) runs it when loading this file"
                                      : "any loader that unpickles it runs it";
        // Known-dangerous globals one by one, each with what it does; the globals that are
        // merely not known to be safe (a pickled model's classes) in one finding.
        std::vector<const GlobalReport*> unreviewed;
        for (const auto& g : scan->safety.globals) {
          if (g.verdict == Verdict::kUnreviewed) unreviewed.push_back(&g);
          if (g.verdict != Verdict::kDangerous) continue;
          ctx.report(file->display, where + " " + (g.calls ? "calls " : "imports ") + g.display() + ", which " +
                                        g.reason + " (byte " + std::to_string(g.first_offset) + "): " + consequence);
        }
        if (!unreviewed.empty()) {
          std::string list;
          for (size_t i = 0; i < unreviewed.size() && i < 5; ++i) list += (i ? ", " : "") + unreviewed[i]->display();
          if (unreviewed.size() > 5) list += " and " + std::to_string(unreviewed.size() - 5) + " more";
          ctx.report(
              file->display,
              where + " runs " + list + " (first at byte " + std::to_string(unreviewed.front()->first_offset) +
                  "), not known to be safe: on neither torch's weights_only allowlist nor torchlint's reviewed "
                  "list of reconstructors that run no code, and unpickling imports their modules and runs them: " +
                  consequence + "; load it only if you trust its source, or save a state_dict instead");
        }
        for (const auto& h : scan->safety.hazards) {
          if (!hazard_is_dangerous(h.kind)) continue;
          ctx.report(file->display, where + ": " + h.detail + h.where() +
                                        ", which can run arbitrary code whatever the names involved: " + consequence);
        }
      }
    }
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry unsafe_pickle_global_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::UnsafePickleGlobal>(catalog_entry("TL810"));
}

}  // namespace torchlint
