#pragma once
// The human summary `torchlint ckpt` prints for a checkpoint: what is inside (format,
// torch version hints, the top-level key tree, tensors, parameters, bytes by dtype, the
// largest tensors), whether training can resume from it, and whether loading it is safe.
#include <string>

#include "checkpoint.h"
#include "training_state.h"

namespace torchlint::ckpt {

enum class SafetyLevel {
  kSafe,        // torch.load(weights_only=True) loads it; nothing in it runs code
  kNoCode,      // a format without pickles (safetensors, numeric .npy)
  kNeedsTrust,  // outside the weights_only allowlist, but only reviewed reconstructors: no code found
  kDangerous,   // loading without weights_only runs code, or a callable not known to be safe
  kIncomplete,  // could not be read completely: no verdict
};

struct Safety {
  SafetyLevel level = SafetyLevel::kSafe;
  std::string text;  // one line
};

// `run_torchscript_code`: the caller is about to run the archive's TorchScript code on
// purpose (the audit's --probe); only what else the file holds decides then.
Safety assess_file_safety(const CheckpointFile& file, bool run_torchscript_code = false);
Safety assess_checkpoint_safety(const Checkpoint& checkpoint);

struct SummaryOptions {
  bool color = false;
  size_t max_keys = 24;  // top-level keys shown
  size_t largest = 5;    // largest tensors shown
};

std::string render_summary(const Checkpoint& checkpoint, const TrainingState& training, const SummaryOptions& options);

// "1.5 MB", "512 B"
std::string human_bytes(uint64_t bytes);
// "1,234,567"
std::string grouped(uint64_t n);
// "[2, 3]"
std::string shape_string(std::span<const int64_t> shape);

}  // namespace torchlint::ckpt
