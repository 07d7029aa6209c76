#pragma once
// One class per subcommand of `torchlint` (ckpt: ckpt_command.h): each declares its own
// options on the CLI11 app and runs when it was chosen. main() only builds the app,
// parses and dispatches.
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "audit_command.h"
#include "core/rule_selection.h"
#include "report/report.h"

namespace torchlint::cli {

// Whether to color output for `mode` (auto, always, never): NO_COLOR and dumb terminals
// turn `auto` off.
bool use_color(const std::string& mode);

// The output format called `name`; null, after an error line on stderr, when there is none.
const report::Format* find_output_format(const std::string& name);

// The rule selection given on a command line (`--select` only when it was given: its
// absence leaves the configuration's).
SelectionLayer command_line_selection(const CLI::App& command, const std::vector<std::string>& select,
                                      const std::vector<std::string>& extend_select,
                                      const std::vector<std::string>& ignore);

// Where a report goes: standard output, or `path` opened into `file` (-o). Null, after an
// error line on stderr, when the file cannot be written.
std::ostream* open_output(const std::string& path, std::ofstream& file);

class CheckCommand {
 public:
  explicit CheckCommand(CLI::App& app);
  bool selected() const { return command_->parsed(); }
  int run() const;

 private:
  CLI::App* command_ = nullptr;
  std::vector<std::string> paths_, select_, extend_select_, ignore_;
  std::string output_format_ = "full", color_ = "auto", output_file_, config_file_, target_torch_, target_torchvision_;
  std::vector<std::string> exclude_, extend_exclude_;
  bool exit_zero_ = false, statistics_ = false, fix_ = false, diff_ = false, baseline_strict_ = false,
       no_cache_ = false, unsafe_fixes_ = false, include_checkpoints_ = false, quiet_ = false, show_fixes_ = false;
  std::string baseline_, write_baseline_file_, diff_base_, cache_dir_, stdin_filename_, build_path_;
  std::vector<std::string> extra_args_;
  unsigned jobs_ = 0;
};

class AuditCommand {
 public:
  explicit AuditCommand(CLI::App& app);
  bool selected() const { return command_->parsed(); }
  int run();

 private:
  int run_units();  // --repos-from
  CLI::App* command_ = nullptr;
  AuditRequest audit_;
  std::string repo_, output_, checklist_, max_checkpoint_size_, probe_binary_, config_file_,
      fail_on_ = "warning", report_url_, repos_from_, cache_dir_;
  std::vector<std::string> select_, extend_select_, ignore_;
  int fail_under_ = -1;
  bool no_cache_ = false, no_checkpoints_ = false;
};

// `torchlint rules` (the list) and `torchlint rule CODE` (one rule's doc).
class RulesCommand {
 public:
  explicit RulesCommand(CLI::App& app);
  bool selected() const { return list_->parsed() || show_->parsed(); }
  int run() const;

 private:
  CLI::App* list_ = nullptr;
  CLI::App* show_ = nullptr;
  std::string format_ = "text", code_;
};

// `torchlint server`: the language server, on standard input and output.
class ServerCommand {
 public:
  explicit ServerCommand(CLI::App& app);
  bool selected() const { return command_->parsed(); }
  int run() const;

 private:
  CLI::App* command_ = nullptr;
  unsigned debounce_ms_ = 100;
  bool full_reparse_ = false;
};

}  // namespace torchlint::cli
