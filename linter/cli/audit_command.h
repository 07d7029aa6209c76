#pragma once
// `torchlint audit`: lint a repository, inspect the checkpoints it holds, optionally run the
// runtime probe on its TorchScript models, and score it all against the checklist.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "check_command.h"

namespace torchlint::cli {

struct AuditRequest {
  CheckRequest check;               // paths = {repo}
  std::string format = "markdown";  // markdown, html, json, sarif
  std::optional<std::string> output;
  std::optional<std::string> checklist_file;
  // Checkpoints: found in the repository by their bytes; `--checkpoints` adds files or
  // directories from elsewhere (a shared model store, a build tree).
  std::vector<std::string> checkpoint_paths;
  bool scan_checkpoints = true;                 // --no-checkpoints turns the pass off
  uint64_t max_checkpoint_bytes = 32ull << 30;  // --max-checkpoint-size
  // The runtime probe (--probe) on the TorchScript models found.
  bool probe = false;
  std::vector<std::string> probe_inputs;    // --probe-input, overrides the configuration
  std::optional<std::string> probe_binary;  // --probe-binary
  int probe_timeout_seconds = 600;          // per model
  // The gate. Findings below `fail_on` never fail an item; with `fail_under` the run fails
  // when the score is below it (else when any item failed); `exit_zero` reports only.
  Severity fail_on = Severity::kWarning;
  std::optional<int> fail_under;
  bool exit_zero = false;
  // Markdown for a pull-request comment: the score, what to do next and the failed items,
  // always under GitHub's comment limit, linking to the full report at `report_url`.
  bool summary = false;
  std::optional<std::string> report_url;
};

// Writes the report; returns the exit code: 2 on errors; else 0 with `exit_zero`; else 1
// when the score is below `fail_under` (or, without it, when an item failed); else 0.
int run_audit(const AuditRequest& request);

// `audit --repos-from`: audits each of `repos` (paths from the working directory) and writes
// one torchlint-unit/1 JSON line per repository to `out`, as each finishes; a repository
// that cannot be audited is an error record and the batch goes on. Returns 2 when a
// repository failed, else 1 when one failed its gate (as `run_audit` decides), else 0.
int run_audit_units(const AuditRequest& request, const std::vector<std::string>& repos, std::ostream& out);

}  // namespace torchlint::cli
