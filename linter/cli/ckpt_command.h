#pragma once
// `torchlint ckpt FILE|DIR...`: inspects checkpoints without executing them, prints a
// summary of each (what is inside, whether training can resume, whether loading is safe)
// and the TL8xx findings; `torchlint ckpt diff A B` compares two checkpoints. Also the
// hook `torchlint check --include-checkpoints` uses.
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "checkpoint/inspector.h"
#include "core/lint_session.h"
#include "core/rule_selection.h"

namespace torchlint::cli {

class CkptCommand {
 public:
  // Registers `ckpt` (and `ckpt diff`) on `app`.
  explicit CkptCommand(CLI::App& app);
  bool selected() const { return command_->parsed(); }
  // Runs the parsed command; returns the exit code (0 clean, 1 findings, 2 errors).
  int run() const;

 private:
  int run_inspect() const;
  int run_diff() const;
  // --files-from: one torchlint-unit/1 record per listed path.
  int run_units(const ckpt::InspectOptions& options, const RuleSet& enabled, std::ostream& out) const;

  CLI::App* command_ = nullptr;
  CLI::App* diff_ = nullptr;
  std::vector<std::string> paths_, select_, extend_select_, ignore_, allow_globals_, diff_paths_;
  std::string output_format_ = "full", color_ = "auto", output_file_, config_file_;
  bool scan_values_ = false, exit_zero_ = false, no_summary_ = false, diff_scan_values_ = false,
       skip_non_checkpoints_ = false;
  std::string max_inflate_, files_from_;
};

// Inspects the checkpoint files under `paths` (directories walked; explicit files only
// when they have a checkpoint extension) with the rules `enabled` selects, and adds their
// findings and errors to `outcome`.
void add_checkpoint_findings(const std::vector<std::string>& paths, const RuleSet& enabled, LintOutcome& outcome);

}  // namespace torchlint::cli
