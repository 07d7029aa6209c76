#pragma once
// Inspecting checkpoint paths: files by their bytes, directories by walking them, and a
// training-checkpoint directory (Hugging Face Trainer's `checkpoint-N/`: model weights,
// optimizer.pt, scheduler.pt, trainer_state.json, ...) as one checkpoint across its files.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "readers.h"

namespace torchlint::ckpt {

struct InspectOptions {
  ReaderOptions reader;
  bool scan_values = false;
  // A file named on the command line whose bytes match no checkpoint format is skipped
  // (counted in `skipped`) instead of reported: the pre-commit hook passes every staged
  // binary file, and a `vocab.bin` is not an error.
  bool skip_unrecognised_files = false;
  // Called during a value scan with bytes done and total (for a progress line).
  std::function<void(uint64_t, uint64_t)> progress;
};

struct InspectError {
  std::string path;
  std::string message;
};

struct Inspection {
  std::vector<std::unique_ptr<CheckpointFile>> files;
  std::vector<Checkpoint> checkpoints;  // in path order
  std::vector<InspectError> errors;     // paths that could not be read at all
  size_t skipped = 0;                   // files in directories that are no checkpoint
};

// Inspects one file. Never throws on the file's content; an unreadable file sets `error`
// and returns nullptr.
std::unique_ptr<CheckpointFile> inspect_file(const std::string& path, const std::string& display,
                                             const InspectOptions& options, std::string& error);
// Inspects bytes already in memory (tests, fuzzing).
std::unique_ptr<CheckpointFile> inspect_bytes(std::string bytes, const std::string& display,
                                              const InspectOptions& options);

// Files and directories, in the order given; directories are walked in sorted order.
Inspection inspect_paths(const std::vector<std::string>& paths, const InspectOptions& options);

// Extensions a directory walk treats as checkpoint candidates.
bool has_checkpoint_extension(const std::string& filename);

// The role a file plays in a checkpoint directory, from its name: "weights",
// "optimizer", "scheduler", "scaler", "rng", "args", or "".
std::string role_from_filename(const std::string& filename);

}  // namespace torchlint::ckpt
