// TL822 saved-on-cuda: storages saved with a CUDA location.
#include "catalog.h"
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class SavedOnCuda final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    for (const CheckpointFile* file : checkpoint.files) {
      size_t cuda = 0;
      std::string location;
      for (const StorageInfo& s : file->storages) {
        if (!s.location.starts_with("cuda")) continue;
        if (++cuda == 1) location = s.location;
      }
      if (!cuda) continue;
      ctx.report(file->display, std::to_string(cuda) + " of " + std::to_string(file->storages.size()) +
                                    " storages were saved on `" + location +
                                    "`: loading needs that GPU or `map_location=\"cpu\"`; save `.cpu()` tensors or "
                                    "document the map_location");
    }
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry saved_on_cuda_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::SavedOnCuda>(catalog_entry("TL822"));
}

}  // namespace torchlint
