// TL823 wrapper-prefix-keys: every key of a state dict carries a wrapper's prefix.
#include <algorithm>

#include "catalog.h"
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class WrapperPrefixKeys final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    for (const WeightsInfo& w : ctx.training().weights) {
      if (w.keys.empty() || !w.pickled_class.empty()) continue;
      for (const auto& [prefix, wrapper] :
           {std::pair<const char*, const char*>{"module.", "DataParallel/DistributedDataParallel"},
            {"_orig_mod.", "torch.compile"}}) {
        std::string_view p = prefix;
        if (!std::all_of(w.keys.begin(), w.keys.end(), [&](std::string_view k) { return k.starts_with(p); })) continue;
        std::string where = w.where == "(file)" ? std::string("the state dict") : "`" + w.where + "`";
        std::string path = checkpoint.directory ? w.file->display : checkpoint.display;
        ctx.report(path,
                   "all " + std::to_string(w.keys.size()) + " keys of " + where + " start with `" + prefix +
                       "` (saved from a " + wrapper +
                       " wrapper): `load_state_dict` on the plain model fails with "
                       "missing keys; save the unwrapped model's state_dict (`model.module` / `model._orig_mod`)");
        break;
      }
    }
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry wrapper_prefix_keys_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::WrapperPrefixKeys>(catalog_entry("TL823"));
}

}  // namespace torchlint
