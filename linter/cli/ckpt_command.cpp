#include "ckpt_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <iostream>

#include "registry/all_rules.h"
#include "audit_checkpoints.h"
#include "check_command.h"
#include "commands.h"
#include "checkpoint/diff.h"
#include "checkpoint/discovery.h"
#include "checkpoint/inspector.h"
#include "checkpoint/policy.h"
#include "checkpoint/summary.h"
#include "registry/checkpoint_rules.h"
#include "core/config.h"
#include "core/exit_code.h"
#include "core/rule_selection.h"
#include "report/report.h"
#include "work_units.h"

namespace torchlint::cli {

namespace fs = std::filesystem;

namespace {

bool color_for(const std::string& mode, bool to_terminal) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return to_terminal && isatty(STDOUT_FILENO) && !(no_color && *no_color) && !(term && std::string(term) == "dumb");
}

// A progress line on stderr while values are scanned (only on a terminal).
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled) {}
  ~Progress() {
    if (shown_) std::cerr << "\r\x1b[K" << std::flush;
  }
  void operator()(uint64_t done, uint64_t total) {
    if (!enabled_ || total < (64u << 20)) return;
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(100) && done < total) return;
    last_ = now;
    shown_ = true;
    std::cerr << "\rscanning values: " << ckpt::human_bytes(done) << " of " << ckpt::human_bytes(total) << " ("
              << (total ? done * 100 / total : 100) << "%)\x1b[K" << std::flush;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

struct Selection {
  RuleSet enabled;
  std::string error;
};

Selection select_rules(const std::vector<std::string>& paths, const std::string& config_file,
                       const SelectionLayer& command_line) {
  Selection s;
  std::vector<SelectionLayer> layers;
  std::optional<fs::path> config_path;
  if (!config_file.empty()) {
    config_path = fs::path(config_file);
  } else {
    config_path = find_config_file(paths.empty() ? fs::path(".") : fs::path(paths.front()));
  }
  if (config_path) {
    auto config = load_config(*config_path, s.error);
    if (!config) return s;
    layers.push_back(config->selection);
  }
  layers.push_back(command_line);
  std::vector<std::string> unknown;
  s.enabled = resolve_selection(registry(), layers, unknown);
  if (!unknown.empty()) s.error = unknown_selector_message(registry(), unknown.front());
  return s;
}

struct CheckpointFindings {
  std::vector<Diagnostic> diagnostics;
  std::vector<FileError> errors;
};

CheckpointFindings findings_for(const ckpt::Inspection& inspection, const ckpt::Checkpoint& cp,
                                const RuleSet& enabled) {
  CheckpointFindings out;
  const RuleRegistry& rules = registry();
  out.diagnostics = ckpt::run_checkpoint_rules(cp, checkpoint_rules(), [&](const std::string& code) {
    auto index = rules.index_of(code);
    return index && enabled.contains(*index);
  });
  std::sort(out.diagnostics.begin(), out.diagnostics.end(), diagnostic_less);
  for (const ckpt::CheckpointFile* f : cp.files) {
    for (const auto& issue : f->issues) {
      if (issue.fatal) {
        out.errors.push_back({f->display, "cannot be read completely: " + issue.message});
        break;
      }
    }
  }
  (void)inspection;
  return out;
}

ckpt::InspectOptions inspect_options(const std::vector<std::string>& allow_globals, bool scan_values) {
  ckpt::InspectOptions options;
  options.reader.policy.extra_allowed = allow_globals;
  options.scan_values = scan_values;
  return options;
}

}  // namespace

CkptCommand::CkptCommand(CLI::App& app) {
  command_ = app.add_subcommand("ckpt", "Inspect checkpoint files without executing them (or `ckpt diff A B`)");
  command_->add_option("paths", paths_, "Checkpoint files or directories (default: .)");
  command_->add_option("--select", select_, "Rules to enable: codes, prefixes (TL8), names, ALL");
  command_->add_option("--extend-select", extend_select_, "Rules to enable in addition");
  command_->add_option("--ignore", ignore_, "Rules to disable");
  std::string formats_help = "Output format:";
  for (const auto& f : report::formats()) formats_help += " " + std::string(f.name);
  command_->add_option("--output-format", output_format_, formats_help);
  command_->add_option("-o,--output-file", output_file_, "Write the report to this file");
  command_->add_option("--config", config_file_,
                       "Configuration file (default: nearest torchlint.toml or pyproject.toml)");
  command_->add_option("--allow-global", allow_globals_,
                       "Trust a pickle global, as torch.serialization.add_safe_globals (module.Name)");
  command_->add_option("--color", color_, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));
  command_->add_flag("--scan-values", scan_values_, "Read tensor values: NaN/Inf counts, min/max/mean (TL820)");
  command_->add_option(
      "--max-inflate", max_inflate_,
      "Largest compressed zip member inflated into memory, e.g. 512MiB (default 1GiB); larger ones are TL813");
  command_->add_flag("--exit-zero", exit_zero_, "Exit 0 even when there are findings (errors still exit 2)");
  command_->add_flag("--no-summary", no_summary_, "Print only the findings, not the summary of each checkpoint");
  command_->add_flag(
      "--skip-non-checkpoints", skip_non_checkpoints_,
      "Skip named files whose bytes are no checkpoint, with a note (the pre-commit hook passes every staged binary)");
  command_->add_option(
      "--files-from", files_from_,
      "Inspect the paths listed in FILE (one a line; - for standard input) and write one JSON line per path "
      "(schema torchlint-unit/1, see the README)");
  command_->require_subcommand(0, 1);
  diff_ = command_->add_subcommand("diff", "Compare two checkpoints: added, removed and changed keys and tensors");
  diff_->add_option("checkpoints", diff_paths_, "The checkpoint before and the one after")->required()->expected(2);
  diff_->add_flag("--scan-values", diff_scan_values_, "Also compare tensor values (max absolute difference)");
  diff_->add_option("--color", color_, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));
}

int CkptCommand::run() const {
  try {
    return diff_->parsed() ? run_diff() : run_inspect();
  } catch (const std::exception& e) {
    std::cerr << "torchlint: internal error: " << e.what() << '\n';
    return kExitError;
  }
}

int CkptCommand::run_inspect() const {
  const report::Format* format = find_output_format(output_format_);
  if (!format) return kExitError;
  SelectionLayer command_line = command_line_selection(*command_, select_, extend_select_, ignore_);
  for (const auto& name : allow_globals_) {
    std::string why;
    if (!ckpt::Policy::may_allow(name, why)) {
      std::cerr << "torchlint: error: --allow-global " << name << ": refused, " << why
                << "; trusting it would let any checkpoint run code\n";
      return kExitError;
    }
  }
  if (!files_from_.empty()) {
    // A work unit's output is its JSON line, whatever the other options say.
    if (!paths_.empty()) {
      std::cerr << "torchlint: error: --files-from lists the paths; do not name paths as well\n";
      return kExitError;
    }
    if (command_->count("--output-format")) {
      std::cerr
          << "torchlint: error: --files-from writes torchlint-unit/1 JSON lines; --output-format does not apply\n";
      return kExitError;
    }
  }
  // With --files-from the configuration is the working directory's: the same for every unit.
  std::vector<std::string> paths = paths_.empty() ? std::vector<std::string>{"."} : paths_;
  Selection selection = select_rules(paths, config_file_, command_line);
  if (!selection.error.empty()) {
    std::cerr << "torchlint: error: " << selection.error << '\n';
    return kExitError;
  }

  std::ofstream file_out;
  std::ostream* out = open_output(output_file_, file_out);
  if (!out) return kExitError;
  bool color = output_file_.empty() && !format->machine_readable && color_for(color_, true);
  Progress progress(scan_values_ && isatty(STDERR_FILENO));
  ckpt::InspectOptions options = inspect_options(allow_globals_, scan_values_);
  options.skip_unrecognised_files = skip_non_checkpoints_;
  if (!max_inflate_.empty()) {
    auto size = parse_size(max_inflate_);
    if (!size) {
      std::cerr << "torchlint: error: --max-inflate: expected a size such as 512MiB, got `" << max_inflate_ << "`\n";
      return kExitError;
    }
    options.reader.max_inflated_member = *size;
  }
  options.progress = [&progress](uint64_t done, uint64_t total) { progress(done, total); };
  if (!files_from_.empty()) return run_units(options, selection.enabled, *out);
  ckpt::Inspection inspection = ckpt::inspect_paths(paths, options);

  LintOutcome outcome;
  std::vector<CheckpointFindings> per_checkpoint;
  for (const auto& e : inspection.errors) outcome.errors.push_back({e.path, e.message});
  for (const auto& cp : inspection.checkpoints) {
    per_checkpoint.push_back(findings_for(inspection, cp, selection.enabled));
    outcome.files_linted += cp.files.size();
    for (const auto& d : per_checkpoint.back().diagnostics) outcome.diagnostics.push_back(d);
    for (const auto& e : per_checkpoint.back().errors) outcome.errors.push_back(e);
  }
  int exit_code =
      !outcome.errors.empty() ? kExitError : (!outcome.diagnostics.empty() && !exit_zero_ ? kExitFindings : kExitClean);

  auto context = [&](const LintOutcome& o) {
    report::ReportContext ctx{o, registry(), color};
    ctx.enabled = &selection.enabled;
    ctx.checklist = builtin_checklist;
    std::error_code ec;
    ctx.source_root = fs::current_path(ec).generic_string();
    if (!ctx.source_root.ends_with('/')) ctx.source_root += '/';
    ctx.exit_code = exit_code;
    ctx.automation_id = "torchlint/checkpoint/";
    return ctx;
  };
  if (format->machine_readable) {
    std::sort(outcome.diagnostics.begin(), outcome.diagnostics.end(), diagnostic_less);
    format->write(*out, context(outcome));
  } else {
    // Each checkpoint's summary, then its findings.
    ckpt::SummaryOptions summary_options;
    summary_options.color = color;
    for (size_t i = 0; i < inspection.checkpoints.size(); ++i) {
      const auto& cp = inspection.checkpoints[i];
      if (!no_summary_) {
        ckpt::TrainingState training = ckpt::analyze_training_state(cp);
        *out << ckpt::render_summary(cp, training, summary_options);
        if (!per_checkpoint[i].diagnostics.empty()) *out << '\n';
      }
      LintOutcome one;
      one.diagnostics = per_checkpoint[i].diagnostics;
      format->write(*out, context(one));
      if (!no_summary_ && format->name != "full") *out << '\n';
    }
    if (inspection.skipped)
      *out << inspection.skipped << (inspection.skipped == 1 ? " file" : " files") << " skipped: not a checkpoint\n";
  }
  for (const auto& e : outcome.errors) std::cerr << "torchlint: error: " << e.path << ": " << e.message << '\n';
  if (!format->machine_readable && isatty(STDERR_FILENO)) {
    size_t n = outcome.diagnostics.size();
    std::cerr << (n ? "Found " + std::to_string(n) + (n == 1 ? " finding" : " findings")
                    : std::string("All checks passed"))
              << " in " << inspection.checkpoints.size()
              << (inspection.checkpoints.size() == 1 ? " checkpoint" : " checkpoints") << ".\n";
  }
  out->flush();
  return exit_code;
}

namespace {

// How bad a verdict word is (checkpoint_rows' words), to report a directory's worst.
int verdict_rank(const std::string& safety) {
  static const std::map<std::string, int> rank = {
      {"safe", 0}, {"no code", 1}, {"needs trust", 2}, {"unknown", 3}, {"dangerous", 4}};
  auto it = rank.find(safety);
  return it == rank.end() ? 3 : it->second;
}

// The record of one listed path: one checkpoint (a file, or a Trainer directory), or the
// worst of the checkpoints a directory holds.
void inspect_unit(const std::string& path, const ckpt::InspectOptions& options, const RuleSet& enabled,
                  nlohmann::ordered_json& record, bool& has_findings) {
  ckpt::Inspection inspection = ckpt::inspect_paths({path}, options);
  std::vector<std::string> errors;
  auto add_error = [&](const std::string& where, const std::string& message) {
    errors.push_back(where == path ? message : where + ": " + message);
  };
  for (const auto& e : inspection.errors) add_error(e.path, e.message);
  std::vector<Diagnostic> diagnostics;
  for (const auto& cp : inspection.checkpoints) {
    CheckpointFindings f = findings_for(inspection, cp, enabled);
    for (auto& d : f.diagnostics) diagnostics.push_back(std::move(d));
    for (const auto& e : f.errors) add_error(e.path, e.message);
  }
  std::vector<report::CheckpointRow> rows = checkpoint_rows(inspection.checkpoints, diagnostics);
  const report::CheckpointRow* worst = nullptr;
  uint64_t bytes = 0;
  size_t files = 0;
  bool torchscript = false;
  for (const auto& row : rows) {
    if (!worst || verdict_rank(row.safety) > verdict_rank(worst->safety)) worst = &row;
    bytes += row.bytes;
    files += row.files;
    torchscript = torchscript || row.torchscript;
  }
  record["checkpoints"] = rows.size();
  record["files"] = files;
  record["bytes"] = bytes;
  record["format"] = worst ? nlohmann::ordered_json(worst->format) : nlohmann::ordered_json(nullptr);
  record["training_state"] = worst ? nlohmann::ordered_json(worst->training_state) : nlohmann::ordered_json(nullptr);
  record["safety"] = worst ? worst->safety : std::string("unknown");
  record["safety_detail"] = worst ? worst->safety_detail : std::string("no checkpoint was read");
  record["torchscript"] = torchscript;
  record["findings"] = findings_by_code(diagnostics);
  has_findings = !diagnostics.empty();
  if (rows.empty() && errors.empty()) errors.push_back("no checkpoint file found");
  if (!errors.empty()) {
    std::string message;
    for (size_t i = 0; i < errors.size(); ++i) message += (i ? "; " : "") + errors[i];
    fail_unit(record, message);
  }
}

}  // namespace

int CkptCommand::run_units(const ckpt::InspectOptions& options, const RuleSet& enabled, std::ostream& out) const {
  std::string error;
  auto units = read_work_list(files_from_, error);
  if (!units) {
    std::cerr << "torchlint: error: --files-from: " << error << '\n';
    return kExitError;
  }
  UnitStream stream(out, exit_zero_);
  for (const auto& path : *units) {
    nlohmann::ordered_json record = unit_record("checkpoint", path);
    bool has_findings = false;
    auto start = std::chrono::steady_clock::now();
    // One unit's failure, whatever it is, is that unit's record: the batch goes on.
    try {
      inspect_unit(path, options, enabled, record, has_findings);
    } catch (const std::exception& e) {
      fail_unit(record, std::string("internal error: ") + e.what());
    }
    record["elapsed_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    stream.write(record, has_findings);
  }
  return stream.exit_code();
}

namespace {

// One side of a diff: a file, or every checkpoint file of a directory (a Trainer
// `checkpoint-N/`), keyed by its path inside the directory.
struct DiffSide {
  ckpt::Inspection inspection;
  std::map<std::string, const ckpt::CheckpointFile*> files;
  std::string safety;  // the verdict line, worst file first
};

bool read_diff_side(const std::string& path, const ckpt::InspectOptions& options, DiffSide& side) {
  side.inspection = ckpt::inspect_paths({path}, options);
  bool ok = side.inspection.errors.empty();
  for (const auto& e : side.inspection.errors) std::cerr << "torchlint: error: " << e.path << ": " << e.message << '\n';
  std::error_code ec;
  const bool directory = fs::is_directory(path, ec);
  for (const auto& file : side.inspection.files) {
    if (file->fatal()) {
      for (const auto& issue : file->issues) {
        if (issue.fatal)
          std::cerr << "torchlint: error: " << file->display << ": cannot be read completely: " << issue.message
                    << '\n';
      }
      ok = false;
      continue;
    }
    std::string key = directory ? fs::path(file->path).lexically_relative(path).generic_string() : std::string();
    side.files[key] = file.get();
  }
  if (side.files.empty() && ok) {
    std::cerr << "torchlint: error: " << path << ": no checkpoint file\n";
    ok = false;
  }
  ckpt::Safety worst;
  bool first = true;
  for (const auto& cp : side.inspection.checkpoints) {
    ckpt::Safety s = ckpt::assess_checkpoint_safety(cp);
    if (first || s.level > worst.level) worst = s;
    first = false;
  }
  side.safety = worst.text;
  return ok;
}

}  // namespace

int CkptCommand::run_diff() const {
  ckpt::InspectOptions options = inspect_options({}, false);
  DiffSide sides[2];
  for (int i = 0; i < 2; ++i) {
    if (!read_diff_side(diff_paths_[i], options, sides[i])) return kExitError;
  }
  // What loading each side would do comes before what changed in it.
  std::cout << "safety of " << diff_paths_[0] << ": " << sides[0].safety << '\n'
            << "safety of " << diff_paths_[1] << ": " << sides[1].safety << '\n';
  bool identical = true;
  const bool values = diff_scan_values_ || scan_values_;
  const bool color = color_for(color_, true);
  // Single files are compared whatever their names; directories file by file.
  if (sides[0].files.size() == 1 && sides[1].files.size() == 1 && sides[0].files.begin()->first.empty() &&
      sides[1].files.begin()->first.empty()) {
    ckpt::CheckpointDiff diff =
        ckpt::diff_checkpoints(*sides[0].files.begin()->second, *sides[1].files.begin()->second, values);
    std::cout << ckpt::render_diff(diff, diff_paths_[0], diff_paths_[1], color);
    return diff.identical() ? kExitClean : kExitFindings;
  }
  for (const auto& [key, file] : sides[0].files) {
    auto other = sides[1].files.find(key);
    if (other == sides[1].files.end()) {
      std::cout << "- " << key << "  (only in " << diff_paths_[0] << ")\n";
      identical = false;
      continue;
    }
    ckpt::CheckpointDiff diff = ckpt::diff_checkpoints(*file, *other->second, values);
    identical = identical && diff.identical();
    std::cout << ckpt::render_diff(diff, file->display, other->second->display, color);
  }
  for (const auto& [key, file] : sides[1].files) {
    if (sides[0].files.contains(key)) continue;
    std::cout << "+ " << key << "  (only in " << diff_paths_[1] << ")\n";
    identical = false;
  }
  return identical ? kExitClean : kExitFindings;
}

void add_checkpoint_findings(const std::vector<std::string>& paths, const RuleSet& enabled, LintOutcome& outcome) {
  std::vector<std::string> roots;
  for (const auto& p : paths) {
    std::error_code ec;
    // Named paths are checkpoints by their bytes, as in a directory walk.
    if (fs::is_directory(p, ec) || ckpt::is_checkpoint_candidate(p)) roots.push_back(p);
  }
  if (roots.empty()) return;
  ckpt::InspectOptions options = inspect_options({}, false);
  options.skip_unrecognised_files = true;  // named sources are not checkpoints that failed to read
  ckpt::Inspection inspection = ckpt::inspect_paths(roots, options);
  for (const auto& e : inspection.errors) outcome.errors.push_back({e.path, e.message});
  for (const auto& cp : inspection.checkpoints) {
    CheckpointFindings f = findings_for(inspection, cp, enabled);
    outcome.files_linted += cp.files.size();
    for (auto& d : f.diagnostics) outcome.diagnostics.push_back(std::move(d));
    for (auto& e : f.errors) outcome.errors.push_back(std::move(e));
  }
  std::sort(outcome.diagnostics.begin(), outcome.diagnostics.end(), diagnostic_less);
  std::sort(outcome.errors.begin(), outcome.errors.end(),
            [](const FileError& a, const FileError& b) { return a.path < b.path; });
}

}  // namespace torchlint::cli
