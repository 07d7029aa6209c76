#pragma once
// `--checkpoint`: the weights of a state dict or a training checkpoint, put into the
// TorchScript model. The checkpoint inspector reads the file (its pickle runs in torchlint's
// own VM, which builds no objects and imports nothing) and the tensors are copied out of the
// storage records with torch::from_blob; LibTorch's unpickler never sees the file (1.13's
// pickle_load cannot read an ordinary state_dict anyway, and nothing falls back to a full
// unpickle).
#include <torch/script.h>

#include <string>

#include "probe.h"

namespace torchlint::probe {

// Copies every parameter and buffer of `model` from the checkpoint, like
// load_state_dict(strict=True): a missing, unexpected or mis-shaped entry is an error
// (std::runtime_error with the names). A DDP `module.` prefix and the usual wrappers
// (`model_state_dict`, `state_dict`, `model`) are found by the inspector. Returns what was
// loaded, for the report.
Json apply_checkpoint(torch::jit::Module& model, const std::string& path);

}  // namespace torchlint::probe
