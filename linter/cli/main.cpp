// torchlint's command line: check, rules, rule.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "registry/all_rules.h"
#include "audit_checkpoints.h"
#include "audit_command.h"
#include "check_command.h"
#include "ckpt_command.h"
#include "core/exit_code.h"
#include "core/fixes.h"
#include "core/rule_selection.h"
#include "parse_errors.h"
#include "report/report.h"

#if TORCHLINT_WITH_MIMALLOC
#include <mimalloc.h>
#endif

namespace {

using namespace torchlint;

bool use_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && !(no_color && *no_color) && !(term && std::string(term) == "dumb");
}

int list_rules(const std::string& format) {
  const auto& rules = cli::registry().rules();
  if (format == "json") {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& r : rules) {
      out.push_back({{"code", r.code}, {"name", r.name}, {"severity", severity_name(r.severity)},
                     {"default", r.default_enabled}, {"fixable", r.fixable}, {"checklist", r.checklist_items},
                     {"summary", r.summary()}});
    }
    std::cout << out.dump(2) << '\n';
    return kExitClean;
  }
  for (const auto& r : rules) {
    std::cout << r.code << "  " << r.name << std::string(r.name.size() < 30 ? 30 - r.name.size() : 1, ' ')
              << (r.fixable ? "[*] " : "    ") << (r.default_enabled ? "" : "(opt-in) ") << r.summary() << '\n';
  }
  return kExitClean;
}

int show_rule(const std::string& code) {
  const RuleInfo* rule = cli::registry().find(code);
  if (!rule) {
    std::cerr << "torchlint: error: unknown rule `" << code << "` (see `torchlint rules`)\n";
    return kExitError;
  }
  std::cout << rule->doc;
  if (!rule->doc.empty() && rule->doc.back() != '\n') std::cout << '\n';
  return kExitClean;
}

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

// Applies (or prints as a diff) every fix; returns the number of fixes, or -1 on a write error.
long apply_or_show_fixes(const cli::CheckRun& run, bool diff_only, bool unsafe) {
  std::map<std::string, std::vector<const Diagnostic*>> by_file;
  for (const auto& d : run.outcome.diagnostics) {
    if (d.fix && (unsafe || !d.fix->unsafe)) by_file[d.path].push_back(&d);
  }
  long total = 0;
  for (const auto& [path, diagnostics] : by_file) {
    auto source = run.outcome.sources.find(path);
    if (source == run.outcome.sources.end()) continue;
    std::string_view before = source->second->text();
    FixResult result = apply_fixes(before, diagnostics);
    total += static_cast<long>(result.applied);
    if (diff_only) {
      std::cout << unified_diff(path, before, result.text);
      continue;
    }
    if (!write_fixed_file(path, before, result.text)) return -1;
  }
  return total;
}

}  // namespace

// Which allocator serves this binary (see linter/cli/CMakeLists.txt), for bug reports and
// for telling benchmark figures apart.
static std::string allocator_note() {
#if TORCHLINT_WITH_MIMALLOC
  int v = mi_version();
  return " (allocator: mimalloc " + std::to_string(v / 100) + "." + std::to_string(v % 100 / 10) + "." +
         std::to_string(v % 10) + ")";
#else
  return "";
#endif
}

// A lint run frees each file's tree and analysis right before the next file allocates as
// much again. mimalloc's default hands freed pages back to the kernel (decommit) and then
// faults them in again, zeroed, a page at a time: on the corpus of bench/run.sh that was
// 30 % of all page faults and about 5 % of the time. A lint run is short and its peak memory
// is the same either way, so it keeps its pages. MIMALLOC_ALLOW_DECOMMIT or
// MIMALLOC_DECOMMIT_DELAY in the environment still decide, as mimalloc documents.
static void tune_allocator() {
#if TORCHLINT_WITH_MIMALLOC
  if (!std::getenv("MIMALLOC_ALLOW_DECOMMIT") && !std::getenv("MIMALLOC_DECOMMIT_DELAY")) {
    // Segments take allow_decommit when they are created, and the first one was created
    // before main; the delay is read whenever a decommit is scheduled, so it reaches that
    // segment too. An hour is longer than any lint run.
    mi_option_disable(mi_option_allow_decommit);
    mi_option_set(mi_option_decommit_delay, 3600L * 1000);
  }
#endif
}

// A list option takes one value per occurrence (`--select TL1,TL2`, or `--select TL1
// --select TL2`): by default CLI11 lets a vector option swallow every word after it, so
// `--select ALL train.py` would read the path as a rule selector.
static void one_value_per_option(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (!option->nonpositional() || option->get_expected_max() <= 1) continue;
    option->allow_extra_args(false);
  }
  for (CLI::App* sub : app.get_subcommands({})) one_value_per_option(*sub);
}

int main(int argc, char** argv) {
  tune_allocator();
  CLI::App app{"torchlint: lint PyTorch training code against the best-practice checklist"};
  app.set_version_flag("-V,--version", std::string("torchlint ") + TORCHLINT_VERSION + allocator_note());
  app.require_subcommand(1);

  auto* check = app.add_subcommand("check", "Lint Python files and directories");
  std::vector<std::string> paths, select, extend_select, ignore;
  std::string output_format = "full", color = "auto", output_file, config_file, target_torch;
  bool exit_zero = false, statistics = false, fix = false, diff = false, baseline_strict = false, no_cache = false,
       unsafe_fixes = false;
  std::string baseline, write_baseline_file, diff_base, cache_dir;
  unsigned jobs = 0;
  check->add_option("paths", paths, "Files or directories (default: .)");
  check->add_option("--select", select, "Rules to enable: codes, prefixes (TL1), names, ALL")->delimiter('\0');
  check->add_option("--extend-select", extend_select, "Rules to enable in addition");
  check->add_option("--ignore", ignore, "Rules to disable");
  std::string formats_help = "Output format:";
  for (const auto& f : report::formats()) formats_help += " " + std::string(f.name);
  check->add_option("--output-format", output_format, formats_help)->envname("TORCHLINT_OUTPUT_FORMAT");
  check->add_option("-o,--output-file", output_file, "Write the report to this file");
  check->add_option("--config", config_file, "Configuration file (default: nearest torchlint.toml or pyproject.toml)");
  check->add_option("--target-torch", target_torch, "Lowest torch version the code must support, e.g. 2.4");
  check->add_option("-j,--jobs", jobs, "Threads (default: all cores)");
  check->add_option("--color", color, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));
  check->add_flag("--exit-zero", exit_zero, "Exit 0 even when there are findings (errors still exit 2)");
  check->add_flag("--statistics", statistics, "Show counts per rule instead of the findings");
  check->add_option("--baseline", baseline, "Report only findings not recorded in this baseline file");
  check->add_option("--write-baseline", write_baseline_file, "Record every current finding in this baseline file");
  check->add_flag("--baseline-strict", baseline_strict, "Fail when baseline entries no longer match (stale debt)");
  check->add_option("--diff-base", diff_base, "Report only findings on lines changed since this git revision");
  check->add_flag("--no-cache", no_cache, "Do not read or write the result cache")->envname("TORCHLINT_NO_CACHE");
  check->add_option("--cache-dir", cache_dir, "Result cache directory (default: .torchlint_cache in the project root)");
  check->add_flag("--fix", fix, "Apply the safe fixes ([*]) to the files, then report what is left");
  check->add_flag("--unsafe-fixes", unsafe_fixes, "Also apply (or show) fixes that may change behaviour");
  check->add_flag("--diff", diff, "Print the safe fixes as a unified diff instead of applying them (exit 1 if any)");
  bool include_checkpoints = false;
  check->add_flag("--include-checkpoints", include_checkpoints, "Also inspect the checkpoint files (.pt, .ckpt, .safetensors, ...) in the paths");

  auto* audit_cmd = app.add_subcommand("audit", "Score a repository against the best-practice checklist");
  cli::AuditRequest audit;
  std::string audit_repo, audit_output, audit_checklist;
  bool audit_no_cache = false;
  audit_cmd->add_option("repo", audit_repo, "Repository to audit (default: .)");
  audit_cmd->add_option("--format", audit.format, "markdown, html, json or sarif")
      ->check(CLI::IsMember({"markdown", "html", "json", "sarif"}));
  audit_cmd->add_option("-o,--output", audit_output, "Write the report to this file (default: standard output)");
  audit_cmd->add_option("--checklist", audit_checklist, "A checklist TOML file to score against instead of the built-in one");
  audit_cmd->add_option("-j,--jobs", audit.check.jobs, "Threads (default: all cores)");
  audit_cmd->add_flag("--no-cache", audit_no_cache, "Do not read or write the result cache");
  std::string audit_max_checkpoint_size, audit_probe_binary;
  bool audit_no_checkpoints = false;
  audit_cmd->add_option("--checkpoints", audit.checkpoint_paths,
                        "Also inspect the checkpoints in this file or directory (repeatable); the repository's own are found by their bytes");
  audit_cmd->add_flag("--no-checkpoints", audit_no_checkpoints, "Do not look for checkpoint files");
  audit_cmd->add_option("--max-checkpoint-size", audit_max_checkpoint_size,
                        "Leave out checkpoint files larger than this (default 32GiB)");
  audit_cmd->add_flag("--probe", audit.probe, "Run torchlint-probe on the TorchScript models found");
  audit_cmd->add_option("--probe-input", audit.probe_inputs,
                        "Probe input NAME:SHAPE[:DTYPE[:LOW..HIGH]] (repeatable; default: [tool.torchlint.probe] inputs)");
  audit_cmd->add_option("--probe-binary", audit_probe_binary, "The torchlint-probe executable (default: beside torchlint, then PATH)");
  audit_cmd->add_option("--probe-timeout", audit.probe_timeout_seconds, "Seconds per model before the probe is stopped (default 600)")
      ->check(CLI::PositiveNumber);

  auto* rules_cmd = app.add_subcommand("rules", "List every rule");
  std::string rules_format = "text";
  rules_cmd->add_option("--output-format", rules_format, "text or json")->check(CLI::IsMember({"text", "json"}));
  auto* rule_cmd = app.add_subcommand("rule", "Show a rule's documentation");
  std::string rule_code;
  rule_cmd->add_option("code", rule_code, "Rule code or name, e.g. TL102")->required();
  cli::CkptCommand ckpt_cmd(app);

  // `torchlint` alone, `torchlint help` and `torchlint help CMD`: the help, as `--help` prints it.
  if (argc == 1 || (argc >= 2 && std::string_view(argv[1]) == "help")) {
    const CLI::App* about = &app;
    if (argc >= 3) {
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == argv[2]) about = sub;
      }
    }
    std::cout << about->help();
    return argc == 1 ? kExitError : kExitClean;
  }
  try {
    one_value_per_option(app);
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return cli::report_parse_error(app, e, argc, argv, "torchlint");
  }

  if (*rules_cmd) return list_rules(rules_format);
  if (*audit_cmd) {
    audit.check.paths = {audit_repo.empty() ? std::string(".") : audit_repo};
    audit.check.use_cache = !audit_no_cache;
    if (!audit_output.empty()) audit.output = audit_output;
    if (!audit_checklist.empty()) audit.checklist_file = audit_checklist;
    audit.scan_checkpoints = !audit_no_checkpoints;
    if (!audit_probe_binary.empty()) audit.probe_binary = audit_probe_binary;
    if (!audit_max_checkpoint_size.empty()) {
      auto size = cli::parse_size(audit_max_checkpoint_size);
      if (!size) {
        std::cerr << "torchlint: error: --max-checkpoint-size: expected a size such as 2GiB, got `" << audit_max_checkpoint_size
                  << "`\n";
        return kExitError;
      }
      audit.max_checkpoint_bytes = *size;
    }
    try {
      return cli::run_audit(audit);
    } catch (const std::exception& e) {
      std::cerr << "torchlint: internal error: " << e.what() << '\n';
      return kExitError;
    }
  }
  if (*rule_cmd) return show_rule(rule_code);
  if (ckpt_cmd.selected()) return ckpt_cmd.run();

  const report::Format* format = report::find_format(output_format);
  if (!format) {
    std::cerr << "torchlint: error: unknown output format `" << output_format << "`\n";
    return kExitError;
  }
  cli::CheckRequest request;
  request.paths = paths;
  if (check->count("--select")) request.selection.select = split_selector_list(select);
  request.selection.extend_select = split_selector_list(extend_select);
  request.selection.ignore = split_selector_list(ignore);
  if (!config_file.empty()) request.config_file = config_file;
  if (!target_torch.empty()) {
    request.target_torch = TorchVersion::parse(target_torch);
    if (!request.target_torch) {
      std::cerr << "torchlint: error: --target-torch: expected a version such as 2.4, got `" << target_torch << "`\n";
      return kExitError;
    }
  }
  request.jobs = jobs;
  if (!baseline.empty()) request.baseline = baseline;
  if (!diff_base.empty()) request.diff_base = diff_base;
  request.use_cache = !no_cache;
  if (!cache_dir.empty()) request.cache_dir = cache_dir;

  std::string error;
  std::optional<cli::CheckRun> run;
  try {
    run = cli::run_check(request, error);
  } catch (const std::exception& e) {
    std::cerr << "torchlint: internal error: " << e.what() << '\n';
    return kExitError;
  }
  if (!run) {
    std::cerr << "torchlint: error: " << error << '\n';
    return kExitError;
  }

  if (!write_baseline_file.empty()) {
    auto written = cli::write_baseline(*run, write_baseline_file, error);
    if (!written) {
      std::cerr << "torchlint: error: " << error << '\n';
      return kExitError;
    }
    std::cerr << "Wrote " << *written << (*written == 1 ? " finding" : " findings") << " to " << write_baseline_file << ".\n";
    return run->outcome.errors.empty() ? kExitClean : kExitError;
  }

  if (fix || diff) {
    auto fixed = apply_or_show_fixes(*run, diff, unsafe_fixes);
    if (fixed < 0) return kExitError;
    if (diff) return fixed > 0 && !exit_zero ? kExitFindings : (run->outcome.errors.empty() ? kExitClean : kExitError);
    if (fixed > 0) {
      std::cerr << "Fixed " << fixed << (fixed == 1 ? " finding" : " findings") << ".\n";
      run = cli::run_check(request, error);  // report what is left, at its new positions
      if (!run) {
        std::cerr << "torchlint: error: " << error << '\n';
        return kExitError;
      }
    }
  }

  if (include_checkpoints) cli::add_checkpoint_findings(paths.empty() ? std::vector<std::string>{"."} : paths, run->enabled, run->outcome);

  std::ofstream file_out;
  std::ostream* out = &std::cout;
  if (!output_file.empty()) {
    file_out.open(output_file);
    if (!file_out) {
      std::cerr << "torchlint: error: cannot write " << output_file << '\n';
      return kExitError;
    }
    out = &file_out;
  }
  int exit_code = kExitClean;
  size_t stale = 0;
  for (const auto& e : run->stale_baseline) stale += e.count;
  if (stale) {
    std::cerr << "torchlint: " << stale << " baseline " << (stale == 1 ? "entry matches" : "entries match")
              << " no finding any more (fixed or changed); regenerate with --write-baseline\n";
  }
  if (!run->outcome.errors.empty()) {
    exit_code = kExitError;
  } else if ((!run->outcome.diagnostics.empty() || (baseline_strict && stale)) && !exit_zero) {
    exit_code = kExitFindings;
  }
  report::ReportContext ctx{run->outcome, cli::registry(), output_file.empty() && !format->machine_readable && use_color(color)};
  ctx.enabled = &run->enabled;
  ctx.checklist = builtin_checklist;
  std::error_code cwd_error;
  ctx.source_root = std::filesystem::current_path(cwd_error).generic_string();
  if (!ctx.source_root.ends_with('/')) ctx.source_root += '/';
  ctx.exit_code = exit_code;
  ctx.baseline_active = !baseline.empty();
  if (statistics) {
    report::write_statistics(*out, ctx);
  } else {
    format->write(*out, ctx);
  }
  // File errors go to stderr in every format so machine-readable output stays parseable.
  for (const auto& e : run->outcome.errors) std::cerr << "torchlint: error: " << e.path << ": " << e.message << '\n';
  if (!format->machine_readable && !statistics && isatty(STDERR_FILENO)) {
    size_t n = run->outcome.diagnostics.size();
    std::cerr << (n ? "Found " + std::to_string(n) + (n == 1 ? " finding" : " findings") : std::string("All checks passed"))
              << " in " << run->outcome.files_linted << (run->outcome.files_linted == 1 ? " file" : " files") << ".\n";
  }
  out->flush();
  return exit_code;
}
