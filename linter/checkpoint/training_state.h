#pragma once
// What training state a checkpoint holds, recognised by the key conventions of
// pytorch/examples, the PyTorch tutorials, timm, nanoGPT, Lightning, the DDP tutorials
// and the Hugging Face Trainer, and by structure (an optimizer state has `state` and
// `param_groups`; a scheduler state has `last_epoch`/`base_lrs`; weights map names to
// tensors). Used by TL801-TL803, TL821, TL823 and the summary.
#include <optional>
#include <string>
#include <vector>

#include "checkpoint.h"

namespace torchlint::ckpt {

struct WeightsInfo {
  std::string where;  // "model_state_dict", "(file)", "model.safetensors"
  const CheckpointFile* file = nullptr;
  std::vector<uint32_t> tensors;  // indices into file->tensors
  std::vector<std::string> keys;  // parameter names, in order
  uint64_t elements = 0;
  uint64_t bytes = 0;
  std::string pickled_class;  // a whole nn.Module object (torch.save(model))
};

struct OptimizerInfo {
  std::string where;
  const CheckpointFile* file = nullptr;
  std::string kind;  // "Adam/AdamW", "SGD with momentum", ...
  size_t groups = 0;
  size_t params = 0;        // ids listed in param_groups
  size_t states = 0;        // entries of `state`
  bool initial_lr = false;  // a scheduler was attached to it
  std::optional<double> lr;
};

struct SchedulerInfo {
  std::string where;
  std::optional<int64_t> last_epoch;
};

struct NamedValue {
  std::string key;
  std::string value;
};

struct TrainingState {
  std::vector<WeightsInfo> weights;
  std::vector<OptimizerInfo> optimizers;
  std::vector<SchedulerInfo> schedulers;
  std::vector<NamedValue> counters;  // epoch / step counters
  std::vector<NamedValue> metrics;
  std::vector<std::string> scalers;  // AMP GradScaler states
  std::vector<std::string> rng;      // RNG states
  std::string producer;              // "PyTorch Lightning", "timm", "nanoGPT", ...
  bool training = false;             // a training checkpoint (not a weights export)
  std::string training_reason;
  bool schedule_hint = false;  // some sign that an LR schedule was in use
  std::string schedule_hint_where;

  bool resumable() const {
    return !weights.empty() && !optimizers.empty() && !counters.empty() && (!schedule_hint || !schedulers.empty());
  }
};

TrainingState analyze_training_state(const Checkpoint& checkpoint);

// A mapping whose values are all tensors (a state_dict), at least one of them.
bool is_state_dict(const CheckpointFile& file, ValueRef v);
bool is_optimizer_state(ValueRef v);
bool is_scheduler_state(ValueRef v);

}  // namespace torchlint::ckpt
