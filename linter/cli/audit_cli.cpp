// `torchlint audit`: its options.
#include <iostream>

#include "audit_checkpoints.h"
#include "commands.h"
#include "core/exit_code.h"

namespace torchlint::cli {

AuditCommand::AuditCommand(CLI::App& app) {
  command_ = app.add_subcommand("audit", "Score a repository against the best-practice checklist");
  command_->add_option("repo", repo_, "Repository to audit (default: .)");
  command_->add_option("--format", audit_.format, "markdown, html, json or sarif")
      ->check(CLI::IsMember({"markdown", "html", "json", "sarif"}));
  command_->add_option("-o,--output", output_, "Write the report to this file (default: standard output)");
  command_->add_option("--checklist", checklist_, "A checklist TOML file to score against instead of the built-in one");
  command_->add_option("-j,--jobs", audit_.check.jobs, "Threads (default: all cores)");
  command_->add_flag("--no-cache", no_cache_, "Do not read or write the result cache");
  command_->add_option("--checkpoints", audit_.checkpoint_paths,
                        "Also inspect the checkpoints in this file or directory (repeatable); the repository's own are found by their bytes");
  command_->add_flag("--no-checkpoints", no_checkpoints_, "Do not look for checkpoint files");
  command_->add_option("--max-checkpoint-size", max_checkpoint_size_,
                        "Leave out checkpoint files larger than this (default 32GiB)");
  command_->add_flag("--probe", audit_.probe, "Run torchlint-probe on the TorchScript models found");
  command_->add_option("--probe-input", audit_.probe_inputs,
                        "Probe input NAME:SHAPE[:DTYPE[:LOW..HIGH]] (repeatable; default: [tool.torchlint.probe] inputs)");
  command_->add_option("--probe-binary", probe_binary_, "The torchlint-probe executable (default: beside torchlint, then PATH)");
  command_->add_option("--probe-timeout", audit_.probe_timeout_seconds, "Seconds per model before the probe is stopped (default 600)")
      ->check(CLI::PositiveNumber);

}

int AuditCommand::run() {
    audit_.check.paths = {repo_.empty() ? std::string(".") : repo_};
    audit_.check.use_cache = !no_cache_;
    if (!output_.empty()) audit_.output = output_;
    if (!checklist_.empty()) audit_.checklist_file = checklist_;
    audit_.scan_checkpoints = !no_checkpoints_;
    if (!probe_binary_.empty()) audit_.probe_binary = probe_binary_;
    if (!max_checkpoint_size_.empty()) {
      auto size = parse_size(max_checkpoint_size_);
      if (!size) {
        std::cerr << "torchlint: error: --max-checkpoint-size: expected a size such as 2GiB, got `" << max_checkpoint_size_
                  << "`\n";
        return kExitError;
      }
      audit_.max_checkpoint_bytes = *size;
    }
    try {
      return run_audit(audit_);
    } catch (const std::exception& e) {
      std::cerr << "torchlint: internal error: " << e.what() << '\n';
      return kExitError;
    }
  }

}  // namespace torchlint::cli
