// `torchlint audit`: its options.
#include <fstream>
#include <iostream>

#include "audit_checkpoints.h"
#include "commands.h"
#include "core/exit_code.h"
#include "work_units.h"

namespace torchlint::cli {

AuditCommand::AuditCommand(CLI::App& app) {
  command_ = app.add_subcommand("audit", "Score a repository against the best-practice checklist");
  command_->add_option("repo", repo_, "Repository to audit (default: .)");
  command_->add_option("--output-format,--format", audit_.format, "markdown, html, json or sarif")
      ->check(CLI::IsMember({"markdown", "html", "json", "sarif"}));
  command_->add_option("-o,--output-file,--output", output_,
                       "Write the report to this file (default: standard output)");
  command_->add_option("--select", select_, "Rules to enable: codes, prefixes (TL1), names, ALL")->delimiter('\0');
  command_->add_option("--extend-select", extend_select_, "Rules to enable in addition");
  command_->add_option("--ignore", ignore_, "Rules to disable");
  command_->add_option("--config", config_file_,
                       "Configuration file (default: nearest torchlint.toml or pyproject.toml)");
  command_
      ->add_option("--fail-on", fail_on_,
                   "Lowest severity that fails a checklist item: error, warning (default) or info")
      ->check(CLI::IsMember({"error", "warning", "info"}));
  command_
      ->add_option("--fail-under", fail_under_,
                   "Exit 1 when the score is below this (0-100) instead of when any item fails")
      ->check(CLI::Range(0, 100));
  command_->add_flag("--exit-zero", audit_.exit_zero, "Exit 0 whatever the score (errors still exit 2)");
  command_->add_flag(
      "--summary", audit_.summary,
      "Markdown summary for a pull-request comment: score, next steps, failed items (always under 60,000 characters)");
  command_->add_option("--report-url", report_url_, "Where the full report is published (linked from --summary)");
  command_->add_option("--checklist", checklist_, "A checklist TOML file to score against instead of the built-in one");
  command_->add_option("-j,--jobs", audit_.check.jobs, "Threads (default: all cores)");
  command_->add_flag("--no-cache", no_cache_, "Do not read or write the result cache");
  command_->add_option("--cache-dir", cache_dir_,
                       "Where the result cache lives (default: <project root>/.torchlint_cache)");
  command_->add_option(
      "--repos-from", repos_from_,
      "Audit the repositories listed in FILE (one a line; - for standard input) and write one JSON line per "
      "repository (schema torchlint-unit/1, see the README)");
  command_->add_option("--checkpoints", audit_.checkpoint_paths,
                       "Also inspect the checkpoints in this file or directory (repeatable); the repository's own are "
                       "found by their bytes");
  command_->add_flag("--no-checkpoints", no_checkpoints_, "Do not look for checkpoint files");
  command_->add_option("--max-checkpoint-size", max_checkpoint_size_,
                       "Leave out checkpoint files larger than this (default 32GiB)");
  command_->add_flag("--probe", audit_.probe, "Run torchlint-probe on the TorchScript models found");
  command_->add_option(
      "--probe-input", audit_.probe_inputs,
      "Probe input NAME:SHAPE[:DTYPE[:LOW..HIGH]] (repeatable; default: [tool.torchlint.probe] inputs)");
  command_->add_option("--probe-binary", probe_binary_,
                       "The torchlint-probe executable (default: beside torchlint, then PATH)");
  command_
      ->add_option("--probe-timeout", audit_.probe_timeout_seconds,
                   "Seconds per model before the probe is stopped (default 600)")
      ->check(CLI::PositiveNumber);
}

int AuditCommand::run() {
  audit_.check.paths = {repo_.empty() ? std::string(".") : repo_};
  audit_.check.selection = command_line_selection(*command_, select_, extend_select_, ignore_);
  if (!config_file_.empty()) audit_.check.config_file = config_file_;
  audit_.fail_on = fail_on_ == "error" ? Severity::kError : fail_on_ == "info" ? Severity::kInfo : Severity::kWarning;
  if (fail_under_ >= 0) audit_.fail_under = fail_under_;
  if (!report_url_.empty()) audit_.report_url = report_url_;
  if (audit_.summary && audit_.format != "markdown") {
    std::cerr << "torchlint: error: --summary is a Markdown report; it cannot be combined with --output-format "
              << audit_.format << '\n';
    return kExitError;
  }
  audit_.check.use_cache = !no_cache_;
  if (!cache_dir_.empty()) audit_.check.cache_dir = cache_dir_;
  if (!output_.empty()) audit_.output = output_;
  if (!checklist_.empty()) audit_.checklist_file = checklist_;
  audit_.scan_checkpoints = !no_checkpoints_;
  if (!probe_binary_.empty()) audit_.probe_binary = probe_binary_;
  if (!max_checkpoint_size_.empty()) {
    auto size = parse_size(max_checkpoint_size_);
    if (!size) {
      std::cerr << "torchlint: error: --max-checkpoint-size: expected a size such as 2GiB, got `"
                << max_checkpoint_size_ << "`\n";
      return kExitError;
    }
    audit_.max_checkpoint_bytes = *size;
  }
  if (!repos_from_.empty()) return run_units();
  try {
    return run_audit(audit_);
  } catch (const std::exception& e) {
    std::cerr << "torchlint: internal error: " << e.what() << '\n';
    return kExitError;
  }
}

int AuditCommand::run_units() {
  // A work unit's output is its JSON line: the options that choose another output conflict.
  for (const char* option : {"repo", "--output-format", "--summary", "--report-url"}) {
    if (command_->count(option)) {
      std::cerr << "torchlint: error: --repos-from writes torchlint-unit/1 JSON lines; "
                << (std::string(option) == "repo" ? std::string("do not name a repository as well")
                                                  : std::string(option) + " does not apply")
                << '\n';
      return kExitError;
    }
  }
  // Stateless unless asked: a batch worker keeps no cache unless --cache-dir names one.
  audit_.check.use_cache = !cache_dir_.empty() && !no_cache_;
  std::string error;
  auto repos = read_work_list(repos_from_, error);
  if (!repos) {
    std::cerr << "torchlint: error: --repos-from: " << error << '\n';
    return kExitError;
  }
  std::ofstream file;
  std::ostream* out = open_output(output_, file);
  if (!out) return kExitError;
  try {
    return run_audit_units(audit_, *repos, *out);
  } catch (const std::exception& e) {
    std::cerr << "torchlint: internal error: " << e.what() << '\n';
    return kExitError;
  }
}

}  // namespace torchlint::cli
