#include "artifact.h"

#include "checkpoint/inspector.h"
#include "checkpoint/training_state.h"
#include "checkpoint/zip_reader.h"

namespace torchlint::probe {

namespace {

// torch.export.save (2.1-2.5: serialized_exported_program.json) and the PT2 archive format
// of later releases (<name>/archive_format = "pt2"). LibTorch has no loader for either.
bool is_torch_export_package(const ckpt::CheckpointFile& file) {
  std::vector<ckpt::Issue> ignored;
  auto zip = ckpt::ZipArchive::read(file.bytes->bytes(), ignored);
  if (!zip) return false;
  for (const auto& e : zip->entries()) {
    if (e.name.ends_with("archive_format") || e.name.ends_with("serialized_exported_program.json")) return true;
  }
  return false;
}

}  // namespace

Artifact identify_model_file(const std::string& path) {
  Artifact a;
  std::string error;
  auto file = ckpt::inspect_file(path, path, ckpt::InspectOptions{}, error);
  if (!file) {
    a.kind = ArtifactKind::kUnreadable;
    a.unsupported = error;
    return a;
  }
  a.format = ckpt::format_name(file->format);
  a.detail = file->format_detail;
  using ckpt::Format;
  if ((file->format == Format::kTorchZip || file->format == Format::kZip) && is_torch_export_package(*file)) {
    a.kind = ArtifactKind::kTorchExport;
    a.format = "torch.export package (.pt2)";
    a.unsupported =
        "a torch.export / AOTInductor package: LibTorch's TorchScript loader cannot run it; export the model with "
        "torch.jit.script or torch.jit.trace and save it with torch.jit.save to probe it";
    return a;
  }
  switch (file->format) {
    case Format::kTorchScript:
      a.kind = ArtifactKind::kTorchScript;
      return a;
    case Format::kTorchMobile:
    case Format::kMobileFlatbuffer:
      a.kind = ArtifactKind::kLiteInterpreter;
      a.unsupported =
          "a lite-interpreter (mobile) model: it keeps bytecode but not the TorchScript the checks need; probe the "
          "torch.jit.save archive it was made from";
      return a;
    case Format::kTorchZip: {
      ckpt::Checkpoint checkpoint;
      checkpoint.display = path;
      checkpoint.files = {file.get()};
      checkpoint.roles = {""};
      const ckpt::TrainingState state = ckpt::analyze_training_state(checkpoint);
      for (const auto& w : state.weights) {
        if (!w.pickled_class.empty()) {
          a.kind = ArtifactKind::kPickledModel;
          a.unsupported = "a pickled whole model (`" + w.pickled_class +
                          "`, torch.save(model)): loading it would run its pickle, which the probe never does; "
                          "save it with torch.jit.script(model).save(path), or pass its state_dict with --checkpoint";
          return a;
        }
      }
      a.kind = ArtifactKind::kTorchSave;
      a.unsupported =
          "a torch.save file (state dict or training checkpoint), not a model: give the TorchScript model as MODEL "
          "and this file as --checkpoint";
      return a;
    }
    default:
      a.kind = ArtifactKind::kOther;
      a.unsupported = "a " + a.format + ", not a TorchScript archive (torch.jit.save)";
      return a;
  }
}

}  // namespace torchlint::probe
