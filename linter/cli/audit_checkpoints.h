#pragma once
// The audit's checkpoint pass: finds the checkpoint files of a repository by their bytes
// (not their names), inspects them with the checkpoint inspector (linter/checkpoint, which
// never executes anything from a file), runs the TL8xx rules and describes each one for
// the report's checkpoint table.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "core/diagnostic.h"
#include "core/registry.h"
#include "core/rule_selection.h"
#include "report/audit.h"

namespace torchlint::cli {

struct CheckpointScanOptions {
  // Extra files or directories (`--checkpoints`): where to open them, how to show them.
  std::vector<std::pair<std::string, std::string>> extra;
  std::vector<std::string> exclude;                  // the configuration's patterns, relative to the repository
  uint64_t max_bytes = 0;                            // larger files are listed as not inspected; 0: no limit
  std::function<void(const std::string&)> progress;  // a status line for a terminal
};

struct CheckpointScan {
  std::vector<std::unique_ptr<ckpt::CheckpointFile>> files;
  std::vector<ckpt::Checkpoint> checkpoints;  // sorted by display path
  std::vector<std::string> notes;             // files left out, and why
  size_t candidates = 0;                      // files whose bytes looked like a checkpoint
};

// Walks the current directory (the repository) and the extra paths. Tool, VCS, virtualenv
// and build folders, node_modules and excluded paths are skipped; each remaining file is
// sniffed (its first 512 bytes) and inspected when it looks like a torch, TorchScript or
// safetensors file, or has a checkpoint extension. Files the inspector does not recognise
// as a checkpoint are left out silently.
CheckpointScan scan_checkpoints(const CheckpointScanOptions& options);

// The TL8xx findings of every checkpoint found, for the rules `enabled` selects.
std::vector<Diagnostic> checkpoint_diagnostics(const CheckpointScan& scan, const RuleSet& enabled,
                                               const RuleRegistry& registry);

// One row per checkpoint: format, size, training state, safety, the codes found on it.
std::vector<report::CheckpointRow> checkpoint_rows(const std::vector<ckpt::Checkpoint>& checkpoints,
                                                   const std::vector<Diagnostic>& findings);

}  // namespace torchlint::cli
