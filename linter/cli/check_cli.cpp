// `torchlint check`: its options and what it does with a run (fixes, baseline, report).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "audit_checkpoints.h"
#include "check_command.h"
#include "ckpt_command.h"
#include "commands.h"
#include "core/exit_code.h"
#include "core/fixes.h"
#include "core/rule_selection.h"
#include "registry/all_rules.h"
#include "report/report.h"

namespace torchlint::cli {

namespace {

// Replaces a file's contents atomically (temp file, then rename), and only if the file
// still holds what was linted: an editor may have saved it in between.
bool write_fixed_file(const std::string& path, std::string_view linted, const std::string& fixed) {
  std::string error;
  auto current = SourceFile::read(path, error);
  if (!current || current->text() != linted) {
    std::cerr << "torchlint: warning: " << path << " changed while it was being linted; not fixed\n";
    return true;
  }
  std::filesystem::path target(path), tmp = target;
  tmp += ".torchlint-fix.tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << fixed;
    if (!out) {
      std::cerr << "torchlint: error: cannot write " << tmp.string() << '\n';
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::permissions(tmp, std::filesystem::status(target, ec).permissions(), ec);
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    std::cerr << "torchlint: error: cannot write " << path << ": " << ec.message() << '\n';
    return false;
  }
  return true;
}

// What --fix did: the number of fixes applied per file and rule (for --show-fixes), and the
// fixed text of a file read from standard input (which is printed, not written).
struct FixesApplied {
  long total = 0;
  std::map<std::string, std::map<std::string, long>> per_file_code;
  std::optional<std::string> stdin_text;
};

// Applies (or prints as a diff) every fix; nullopt on a write error. The file named
// `stdin_path` came from standard input: its fixed text is returned, not written.
std::optional<FixesApplied> apply_or_show_fixes(const CheckRun& run, bool diff_only, bool unsafe,
                                                const std::string& stdin_path) {
  std::map<std::string, std::vector<const Diagnostic*>> by_file;
  for (const auto& d : run.outcome.diagnostics) {
    if (d.fix && (unsafe || !d.fix->unsafe)) by_file[d.path].push_back(&d);
  }
  FixesApplied applied;
  for (const auto& [path, diagnostics] : by_file) {
    auto source = run.outcome.sources.find(path);
    if (source == run.outcome.sources.end()) continue;
    std::string_view before = source->second->text();
    FixResult result = apply_fixes(before, diagnostics);
    applied.total += static_cast<long>(result.applied);
    for (const Diagnostic* d : result.applied_from) ++applied.per_file_code[path][d->code];
    if (diff_only) {
      std::cout << unified_diff(path, before, result.text);
    } else if (path == stdin_path) {
      applied.stdin_text = std::move(result.text);
    } else if (!write_fixed_file(path, before, result.text)) {
      return std::nullopt;
    }
  }
  return applied;
}

// --show-fixes: "Fixed 3 findings:" then, per file, how many of each rule.
void print_fixes(std::ostream& out, const FixesApplied& applied) {
  out << "Fixed " << applied.total << (applied.total == 1 ? " finding" : " findings") << ":\n";
  for (const auto& [path, codes] : applied.per_file_code) {
    out << "- " << path << ":\n";
    for (const auto& [code, n] : codes) {
      const RuleInfo* rule = registry().find(code);
      out << "    " << n << " × " << code << (rule ? " (" + rule->name + ")" : "") << '\n';
    }
  }
}

// Standard input, whole (the `-` path: an editor piping its buffer).
std::string read_stdin() {
  std::ostringstream text;
  text << std::cin.rdbuf();
  return text.str();
}

}  // namespace

bool use_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && !(no_color && *no_color) && !(term && std::string(term) == "dumb");
}

const report::Format* find_output_format(const std::string& name) {
  const report::Format* format = report::find_format(name);
  if (!format) std::cerr << "torchlint: error: unknown output format `" << name << "`\n";
  return format;
}

SelectionLayer command_line_selection(const CLI::App& command, const std::vector<std::string>& select,
                                      const std::vector<std::string>& extend_select,
                                      const std::vector<std::string>& ignore) {
  SelectionLayer layer;
  if (command.count("--select")) layer.select = split_selector_list(select);
  layer.extend_select = split_selector_list(extend_select);
  layer.ignore = split_selector_list(ignore);
  return layer;
}

std::ostream* open_output(const std::string& path, std::ofstream& file) {
  if (path.empty()) return &std::cout;
  file.open(path);
  if (!file) {
    std::cerr << "torchlint: error: cannot write " << path << '\n';
    return nullptr;
  }
  return &file;
}

CheckCommand::CheckCommand(CLI::App& app) {
  command_ = app.add_subcommand("check", "Lint Python files and directories");
  command_->add_option("paths", paths_, "Files or directories (default: .); `-` reads one file from standard input");
  command_->add_option("--select", select_, "Rules to enable: codes, prefixes (TL1), names, ALL")->delimiter('\0');
  command_->add_option("--extend-select", extend_select_, "Rules to enable in addition");
  command_->add_option("--ignore", ignore_, "Rules to disable");
  std::string formats_help = "Output format:";
  for (const auto& f : report::formats()) formats_help += " " + std::string(f.name);
  command_->add_option("--output-format", output_format_, formats_help)->envname("TORCHLINT_OUTPUT_FORMAT");
  command_->add_option("-o,--output-file", output_file_, "Write the report to this file");
  command_
      ->add_option("--exclude", exclude_,
                   "Paths to leave out, replacing the configuration's `exclude` (globs, comma lists)")
      ->delimiter(',');
  command_->add_option("--extend-exclude", extend_exclude_, "Paths to leave out in addition to the configuration's")
      ->delimiter(',');
  command_->add_option(
      "--stdin-filename", stdin_filename_,
      "Name of the file read from standard input (`-`), for configuration, context and output (default: stdin.py)");
  command_->add_flag("-q,--quiet", quiet_, "Print the findings and errors only: no summary line or progress notes");
  command_->add_flag("--show-fixes", show_fixes_, "With --fix, list the fixes applied per file and rule");
  command_->add_option("--config", config_file_,
                       "Configuration file (default: nearest torchlint.toml or pyproject.toml)");
  command_->add_option("--target-torch", target_torch_, "Lowest torch version the code must support, e.g. 2.4");
  command_->add_option(
      "--target-torchvision", target_torchvision_,
      "Lowest torchvision version the code must support, e.g. 0.19 (default: the release paired with target-torch)");
  command_->add_option("-j,--jobs", jobs_, "Threads (default: all cores)");
  command_->add_option("--color", color_, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));
  command_->add_flag("--exit-zero", exit_zero_, "Exit 0 even when there are findings (errors still exit 2)");
  command_->add_flag("--statistics", statistics_, "Show counts per rule instead of the findings");
  command_->add_option("--baseline", baseline_, "Report only findings not recorded in this baseline file");
  command_->add_option("--write-baseline", write_baseline_file_, "Record every current finding in this baseline file");
  command_->add_flag("--baseline-strict", baseline_strict_, "Fail when baseline entries no longer match (stale debt)");
  command_->add_option("--diff-base", diff_base_, "Report only findings on lines changed since this git revision");
  command_->add_flag("--no-cache", no_cache_, "Do not read or write the result cache")->envname("TORCHLINT_NO_CACHE");
  command_->add_option("--cache-dir", cache_dir_,
                       "Result cache directory (default: .torchlint_cache in the project root)");
  command_->add_flag("--fix", fix_, "Apply the safe fixes ([*]) to the files, then report what is left");
  command_->add_flag("--unsafe-fixes", unsafe_fixes_, "Also apply (or show) fixes that may change behaviour");
  command_->add_flag("--diff", diff_,
                     "Print the safe fixes as a unified diff instead of applying them (exit 1 if any)");
  command_->add_option(
      "-p,--build-path", build_path_,
      "C++: directory of compile_commands.json for torchlint-cpp (default: [tool.torchlint.cpp] build-path, "
      "else found beside the files)");
  command_
      ->add_option("--extra-arg", extra_args_,
                   "C++: argument appended to every compile command, after the configuration's extra-args "
                   "(one per occurrence: --extra-arg=-Ithird_party/include)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command_->add_flag("--include-checkpoints", include_checkpoints_,
                     "Also inspect the checkpoint files (.pt, .ckpt, .safetensors, ...) in the paths");
}

int CheckCommand::run() const {
  const report::Format* format = find_output_format(output_format_);
  if (!format) return kExitError;
  CheckRequest request;
  request.paths = paths_;
  // `-`: one Python file from standard input, linted as if it were `--stdin-filename`
  // (which need not exist): its configuration, project context and path in the output.
  std::unordered_map<std::string, std::string> stdin_overlay;
  std::string stdin_path;
  if (std::count(paths_.begin(), paths_.end(), "-")) {
    if (paths_.size() > 1) {
      std::cerr << "torchlint: error: `-` (standard input) cannot be combined with other paths\n";
      return kExitError;
    }
    stdin_path = stdin_filename_.empty() ? "stdin.py" : stdin_filename_;
    if (std::filesystem::path(stdin_path).extension() != ".py" &&
        std::filesystem::path(stdin_path).extension() != ".pyi") {
      std::cerr << "torchlint: error: --stdin-filename: standard input is linted as Python; `" << stdin_path
                << "` is not a .py or .pyi file\n";
      return kExitError;
    }
    std::error_code ec;
    stdin_overlay[std::filesystem::absolute(stdin_path, ec).lexically_normal().string()] = read_stdin();
    request.paths = {stdin_path};
    request.overlay = &stdin_overlay;
  } else if (!stdin_filename_.empty()) {
    std::cerr << "torchlint: error: --stdin-filename needs `-` among the paths\n";
    return kExitError;
  }
  request.selection = command_line_selection(*command_, select_, extend_select_, ignore_);
  if (command_->count("--exclude")) request.exclude = exclude_;
  request.extend_exclude = extend_exclude_;
  if (!config_file_.empty()) request.config_file = config_file_;
  if (!target_torch_.empty()) {
    request.target_torch = TorchVersion::parse(target_torch_);
    if (!request.target_torch) {
      std::cerr << "torchlint: error: --target-torch: expected a version such as 2.4, got `" << target_torch_ << "`\n";
      return kExitError;
    }
  }
  if (!target_torchvision_.empty()) {
    request.target_torchvision = TorchVersion::parse(target_torchvision_);
    if (!request.target_torchvision) {
      std::cerr << "torchlint: error: --target-torchvision: expected a version such as 0.19, got `"
                << target_torchvision_ << "`\n";
      return kExitError;
    }
  }
  request.jobs = jobs_;
  if (!baseline_.empty()) request.baseline = baseline_;
  if (!diff_base_.empty()) request.diff_base = diff_base_;
  request.use_cache = !no_cache_;
  if (!cache_dir_.empty()) request.cache_dir = cache_dir_;
  if (!build_path_.empty()) request.cpp_build_path = build_path_;
  request.cpp_extra_args = extra_args_;

  std::string error;
  std::optional<CheckRun> run;
  try {
    run = run_check(request, error);
  } catch (const std::exception& e) {
    std::cerr << "torchlint: internal error: " << e.what() << '\n';
    return kExitError;
  }
  if (!run) {
    std::cerr << "torchlint: error: " << error << '\n';
    return kExitError;
  }

  if (!write_baseline_file_.empty()) {
    auto written = write_baseline(*run, write_baseline_file_, error);
    if (!written) {
      std::cerr << "torchlint: error: " << error << '\n';
      return kExitError;
    }
    if (!quiet_) {
      std::cerr << "Wrote " << *written << (*written == 1 ? " finding" : " findings") << " to " << write_baseline_file_
                << ".\n";
    }
    return run->outcome.errors.empty() ? kExitClean : kExitError;
  }

  // The report goes where the fixed text of standard input does not: with `- --fix` the
  // fixed file is the output (an editor replaces its buffer with it), the findings left
  // go to standard error.
  bool fixed_stdin = fix_ && !diff_ && !stdin_path.empty();
  if (fix_ || diff_) {
    auto fixed = apply_or_show_fixes(*run, diff_, unsafe_fixes_, stdin_path);
    if (!fixed) return kExitError;
    if (diff_) {
      return fixed->total > 0 && !exit_zero_ ? kExitFindings : (run->outcome.errors.empty() ? kExitClean : kExitError);
    }
    if (fixed_stdin) {
      std::string_view text =
          fixed->stdin_text ? std::string_view(*fixed->stdin_text) : std::string_view(stdin_overlay.begin()->second);
      std::cout << text;
      std::cout.flush();
    }
    if (fixed->total > 0) {
      if (show_fixes_) {
        print_fixes(std::cerr, *fixed);
      } else if (!quiet_) {
        std::cerr << "Fixed " << fixed->total << (fixed->total == 1 ? " finding" : " findings") << ".\n";
      }
      if (fixed->stdin_text) stdin_overlay.begin()->second = std::move(*fixed->stdin_text);
      run = run_check(request, error);  // report what is left, at its new positions
      if (!run) {
        std::cerr << "torchlint: error: " << error << '\n';
        return kExitError;
      }
    }
  }

  if (include_checkpoints_)
    add_checkpoint_findings(paths_.empty() ? std::vector<std::string>{"."} : paths_, run->enabled, run->outcome);

  std::ofstream file_out;
  std::ostream* out = fixed_stdin && output_file_.empty() ? &std::cerr : open_output(output_file_, file_out);
  if (!out) return kExitError;
  int exit_code = kExitClean;
  size_t stale = 0;
  for (const auto& e : run->stale_baseline) stale += e.count;
  if (stale) {
    std::cerr << "torchlint: " << stale << " baseline " << (stale == 1 ? "entry matches" : "entries match")
              << " no finding any more (fixed or changed); regenerate with --write-baseline\n";
  }
  if (!run->outcome.errors.empty()) {
    exit_code = kExitError;
  } else if ((!run->outcome.diagnostics.empty() || (baseline_strict_ && stale)) && !exit_zero_) {
    exit_code = kExitFindings;
  }
  bool to_terminal = output_file_.empty() && !fixed_stdin;
  report::ReportContext ctx{run->outcome, registry(), to_terminal && !format->machine_readable && use_color(color_)};
  ctx.enabled = &run->enabled;
  ctx.checklist = builtin_checklist;
  std::error_code cwd_error;
  ctx.source_root = std::filesystem::current_path(cwd_error).generic_string();
  if (!ctx.source_root.ends_with('/')) ctx.source_root += '/';
  ctx.exit_code = exit_code;
  ctx.baseline_active = !baseline_.empty();
  ctx.summary = !quiet_;
  if (statistics_) {
    report::write_statistics(*out, ctx);
  } else {
    format->write(*out, ctx);
  }
  // File errors go to stderr in every format so machine-readable output stays parseable.
  for (const auto& e : run->outcome.errors) std::cerr << "torchlint: error: " << e.path << ": " << e.message << '\n';
  // The full format ends with its own summary; the other text formats get one on a
  // terminal only (a pipe into grep or an editor wants the findings alone).
  if (!quiet_ && !format->machine_readable && !statistics_ && format->write != report::write_full &&
      isatty(STDERR_FILENO)) {
    if (std::string line = report::summary_line(ctx); !line.empty()) std::cerr << line << '\n';
  }
  if (!quiet_ && run->outcome.files_linted == 0 && run->outcome.errors.empty()) {
    std::cerr << "torchlint: warning: no Python, notebook or C++ files found in the given paths\n";
  }
  out->flush();
  return exit_code;
}

}  // namespace torchlint::cli
