#pragma once
// What a file given to the probe is, decided from its bytes by the checkpoint inspector
// (nothing is unpickled), and why the probe cannot run it when it cannot.
#include <string>

namespace torchlint::probe {

enum class ArtifactKind {
  kTorchScript,      // torch.jit.save: the probe's model input
  kLiteInterpreter,  // _save_for_mobile (bytecode.pkl or flatbuffer)
  kTorchExport,      // torch.export / AOTInductor .pt2 package
  kPickledModel,     // torch.save(model): a whole nn.Module
  kTorchSave,        // torch.save of a state dict or training checkpoint
  kOther,            // legacy formats, safetensors, anything else
  kUnreadable,
};

struct Artifact {
  ArtifactKind kind = ArtifactKind::kOther;
  std::string format;       // the inspector's description: "TorchScript archive (torch.jit.save)"
  std::string detail;       // "records under `mlp/`, format version 3"
  std::string unsupported;  // non-empty: why the probe cannot load it as a model
};

Artifact identify_model_file(const std::string& path);

}  // namespace torchlint::probe
