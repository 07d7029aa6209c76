// torchlint-cpp: lints LibTorch C++ sources with Clang LibTooling and prints findings in
// torchlint's formats (`torchlint check` runs it with --output-format json and merges).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "catalog.h"
#include "core/config.h"
#include "core/discovery.h"
#include "cli/parse_errors.h"
#include "core/lint_session.h"
#include "core/result_cache.h"
#include "core/rule_selection.h"
#include "driver.h"
#include "report/report.h"

int main(int argc, char** argv) {
  using namespace torchlint;
  CLI::App app{"torchlint-cpp: lint LibTorch C++ training code (Clang LibTooling)"};
  app.set_version_flag("-V,--version", std::string("torchlint-cpp ") + TORCHLINT_VERSION);
  cpp::CppLintOptions options;
  std::vector<std::string> select, ignore;
  std::string build_dir, output_format = "full", output_file, config_file, cache_dir, pch_max_size;
  bool exit_zero = false, list = false, quiet = false, isolated = false, verbose = false;
  app.add_option("files", options.files, "C++ source files (.cpp .cc .cxx; headers when named)");
  app.add_option("-p,--build-path", build_dir,
                 "Directory with compile_commands.json (default: the files' directories and parents)");
  app.add_option("-j,--jobs", options.jobs, "Translation units in parallel (default: all cores)");
  app.add_option("--select", select, "Rules to run: codes, prefixes (TL1), names, ALL")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--ignore", ignore, "Rules not to run")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  std::vector<std::string> extra_args;
  app.add_option("--extra-arg", extra_args,
                 "Argument appended to every compile command, after the configuration's extra-args (--extra-arg=-IDIR)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--resource-dir", options.resource_dir,
                 "Clang resource directory (default: " + cpp::default_resource_dir() + ")");
  bool no_pch = false;
  app.add_option("--pch-dir", options.pch_dir,
                 "Precompiled-header cache (default: $XDG_CACHE_HOME/torchlint/pch or ~/.cache/torchlint/pch)");
  app.add_option(
      "--pch-max-size", pch_max_size,
      "Size cap of the precompiled-header cache, least recently used first out: 500M, 2G or bytes (default: 2G)");
  app.add_flag("--no-pch", no_pch, "Parse the LibTorch headers in every translation unit (no precompiled header)");
  app.add_option("--output-format", output_format, "full, concise, json, jsonl, sarif, github, gitlab");
  app.add_option("-o,--output-file", output_file, "Write the report to this file (default: standard output)");
  app.add_flag("-q,--quiet", quiet, "Print no notes (findings and errors only)");
  app.add_flag("-v,--verbose", verbose, "Also say how many translation units came from the result cache");
  app.add_option("--config", config_file,
                 "Configuration file (default: nearest torchlint.toml or pyproject.toml with [tool.torchlint])");
  app.add_flag("--isolated", isolated, "Read no configuration file");
  app.add_option("--cache-dir", cache_dir,
                 "Keep results in this result cache (torchlint's .torchlint_cache; `torchlint check` passes its own) "
                 "and re-use them while the compile command, the file and its project headers are unchanged");
  app.add_flag("--exit-zero", exit_zero, "Exit 0 even when there are findings");
  app.add_flag("--list-rules", list, "List the C++ rules and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return cli::report_parse_error(app, e, argc, argv, "torchlint-cpp");
  }

  RuleRegistry registry;
  register_catalog(registry);
  std::set<std::string> cpp_codes = {registry.engine_rule(EngineRule::kParseError).code};
  for (const auto& c : cpp::cpp_rule_codes()) cpp_codes.insert(c);
  if (list) {
    for (const auto& r : registry.rules()) {
      if (cpp_codes.contains(r.code)) std::cout << r.code << "  " << r.name << '\n';
    }
    return 0;
  }
  const report::Format* format = report::find_format(output_format);
  if (!format) {
    std::cerr << "torchlint-cpp: error: unknown output format `" << output_format << "`\n";
    return 2;
  }
  // The configuration `torchlint check` reads, found the same way ([tool.torchlint.cpp] or
  // [cpp] for the C++ settings, the selection too); the command line wins.
  std::optional<Config> config;
  if (!isolated) {
    std::optional<std::filesystem::path> path;
    std::error_code ec;
    if (!config_file.empty()) {
      if (!std::filesystem::is_regular_file(config_file, ec)) {
        std::cerr << "torchlint-cpp: error: configuration file not found: " << config_file << '\n';
        return 2;
      }
      path = config_file;
    } else {
      path = find_config_file(options.files.empty() ? std::filesystem::path(".")
                                                    : std::filesystem::path(options.files.front()));
    }
    if (path) {
      std::string error;
      config = load_config(*path, error);
      if (!config) {
        std::cerr << "torchlint-cpp: error: " << error << '\n';
        return 2;
      }
    }
  }
  std::vector<SelectionLayer> layers;
  if (config) layers.push_back(config->selection);
  SelectionLayer layer;
  if (!select.empty()) layer.select = split_selector_list(select);
  layer.ignore = split_selector_list(ignore);
  layers.push_back(layer);
  std::vector<std::string> unknown;
  RuleSet enabled = resolve_selection(registry, layers, unknown);
  if (!unknown.empty()) {
    std::cerr << "torchlint-cpp: error: " << unknown_selector_message(registry, unknown.front()) << '\n';
    return 2;
  }
  for (size_t i = 0; i < registry.rules().size(); ++i) {
    if (enabled.contains(i) && cpp_codes.contains(registry.rules()[i].code))
      options.enabled.insert(registry.rules()[i].code);
  }
  const CppConfig configured = config ? config->cpp : CppConfig{};
  if (!build_dir.empty()) {
    options.build_dir = build_dir;
  } else if (configured.build_path) {
    options.build_dir = configured.build_path;
  }
  // The configuration's arguments first: a conflicting flag given later wins in Clang.
  options.extra_args = configured.extra_args;
  options.extra_args.insert(options.extra_args.end(), extra_args.begin(), extra_args.end());
  if (options.pch_dir.empty() && configured.pch_dir) options.pch_dir = *configured.pch_dir;
  if (!pch_max_size.empty()) {
    auto size = parse_size(pch_max_size);
    if (!size) {
      std::cerr << "torchlint-cpp: error: --pch-max-size: expected a size such as 500M, 2G or a number of bytes, got `"
                << pch_max_size << "`\n";
      return 2;
    }
    options.pch_max_size = *size;
  } else if (configured.pch_max_size) {
    options.pch_max_size = *configured.pch_max_size;
  }
  options.use_pch = !no_pch;
  if (!cache_dir.empty()) {
    options.cache_dir = cache_dir;
    options.tool_identity = executable_identity(std::string("torchlint-cpp ") + TORCHLINT_VERSION);
    // Project headers are those under the project's root, found as `torchlint check` does.
    options.project_root = config
                               ? config->root.string()
                               : find_project_root(options.files.empty() ? "." : options.files.front()).path.string();
  }
  if (options.files.empty()) {
    std::cerr << "torchlint-cpp: error: no files given\n";
    return 2;
  }

  cpp::CppLintResult result;
  try {
    result = cpp::lint_cpp(options, registry);
  } catch (const std::exception& e) {
    std::cerr << "torchlint-cpp: internal error: " << e.what() << '\n';
    return 2;
  }
  if (!quiet) {
    for (const auto& n : result.notes) std::cerr << "torchlint-cpp: note: " << n << '\n';
  }
  if (verbose && !options.cache_dir.empty()) {
    std::cerr << "torchlint-cpp: note: result cache: " << result.from_cache << " of " << result.files_linted
              << " translation units unchanged (not parsed)\n";
  }

  LintOutcome outcome;
  outcome.diagnostics = std::move(result.diagnostics);
  outcome.errors = std::move(result.errors);
  outcome.files_linted = result.files_linted;
  outcome.sources = std::move(result.sources);
  int exit_code = !outcome.errors.empty() ? 2 : (!outcome.diagnostics.empty() && !exit_zero ? 1 : 0);
  report::ReportContext ctx{outcome, registry, !format->machine_readable && isatty(STDOUT_FILENO)};
  ctx.enabled = &enabled;
  ctx.checklist = builtin_checklist;
  std::error_code ec;
  ctx.source_root = std::filesystem::current_path(ec).generic_string();
  if (!ctx.source_root.ends_with('/')) ctx.source_root += '/';
  ctx.exit_code = exit_code;
  ctx.automation_id = "torchlint/cpp/";
  std::ofstream file;
  if (!output_file.empty()) {
    file.open(output_file, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "torchlint-cpp: error: cannot write " << output_file << '\n';
      return 2;
    }
  }
  format->write(output_file.empty() ? std::cout : file, ctx);
  // One line per file error, in a form `torchlint check` reads back.
  for (const auto& e : outcome.errors) std::cerr << "torchlint-cpp: error: " << e.path << ": " << e.message << '\n';
  return exit_code;
}
