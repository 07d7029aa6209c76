// TL821 unexpected-dtype: float64 weights, or several floating precisions in one state dict.
#include <map>

#include "catalog.h"
#include "checkpoint/rule.h"
#include "checkpoint/summary.h"

namespace torchlint {
namespace ckpt {
namespace {

class UnexpectedDtype final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    for (const WeightsInfo& w : ctx.training().weights) {
      std::map<DType, std::pair<size_t, uint64_t>> floating;  // dtype -> tensors, bytes
      std::string first_double;
      for (uint32_t i : w.tensors) {
        const TensorInfo& t = w.file->tensors[i];
        if (!dtype_info(t.dtype).floating) continue;
        auto& slot = floating[t.dtype];
        ++slot.first;
        slot.second += t.nbytes();
        if (t.dtype == DType::kFloat64 && first_double.empty()) first_double = t.name;
      }
      std::string where = w.where == "(file)" ? std::string("the state dict") : "`" + w.where + "`";
      std::string path = checkpoint.directory ? w.file->display : checkpoint.display;
      if (auto it = floating.find(DType::kFloat64); it != floating.end()) {
        ctx.report(
            path, where + " holds " + std::to_string(it->second.first) + " float64 tensor" +
                      (it->second.first == 1 ? "" : "s") + " (" + human_bytes(it->second.second) + ", e.g. `" +
                      first_double +
                      "`): models train in float32 or lower, so this doubles size and memory (a `.double()` left in?)");
      } else if (floating.size() > 1) {
        std::string mix;
        for (const auto& [dtype, count] : floating) {
          mix += (mix.empty() ? "" : ", ") + std::string(dtype_info(dtype).name) + " (" + std::to_string(count.first) +
                 ")";
        }
        ctx.report(path, where + " mixes floating precisions: " + mix +
                             "; a partial `.half()`/`.to(dtype)` or mixed sources, check that this is intended");
      }
    }
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry unexpected_dtype_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::UnexpectedDtype>(catalog_entry("TL821"));
}

}  // namespace torchlint
