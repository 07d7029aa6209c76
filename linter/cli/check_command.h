#pragma once
// `torchlint check`: configuration, discovery, linting. Separate from main() so tests
// drive exactly what the command line does.
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/baseline.h"
#include "core/config.h"
#include "core/lint_session.h"
#include "core/registry.h"

namespace torchlint::cli {

// The project's context files found for a lint, kept by a caller that lints the same
// project again and again (the language server): walking and reading a large project to
// find who imports whom costs more than linting the edited file. Re-used while `key`
// (the caller's summary of what could change the answer) is the same.
struct ContextMemo {
  std::optional<uint64_t> key;
  std::vector<DiscoveredFile> files;
};

struct CheckRequest {
  std::vector<std::string> paths;
  SelectionLayer selection;  // from the command line
  // --exclude replaces the configuration's `exclude` patterns; --extend-exclude adds to
  // them (Ruff's meaning). Patterns are relative to the project root, as in the file.
  std::optional<std::vector<std::string>> exclude;
  std::vector<std::string> extend_exclude;
  std::optional<std::string> config_file;
  std::optional<TorchVersion> target_torch;
  std::optional<TorchVersion> target_torchvision;
  unsigned jobs = 0;
  std::optional<std::string> baseline;        // --baseline FILE
  std::optional<std::string> diff_base;       // --diff-base REV
  bool use_cache = false;                     // the command line turns it on by default
  std::optional<std::string> cache_dir;       // default: <project root>/.torchlint_cache
  std::optional<std::string> cpp_build_path;  // -p: torchlint-cpp's compile_commands.json directory
  std::vector<std::string> cpp_extra_args;    // --extra-arg, for torchlint-cpp
  // Whether the project's other files give context (facts) to the files asked for, so
  // that one file gets the same findings alone as in a run over its whole project. Off:
  // the paths are the whole project (the rule fixtures, each its own program).
  bool project_context = true;
  // Unsaved editor buffers by absolute normal path, linted instead of the files on disk
  // (and given as paths even before they exist there): `torchlint server`.
  const std::unordered_map<std::string, std::string>* overlay = nullptr;
  const std::unordered_map<std::string, ParseMemo*>* parse_memos = nullptr;  // of the overlay's files
  ContextMemo* context_memo = nullptr;  // with context_key: the context of the last run
  uint64_t context_key = 0;
};

struct CheckRun {
  LintOutcome outcome;
  std::optional<Config> config;
  TorchVersion target_torch = kDefaultTargetTorch;
  std::string target_torch_source;  // where the version came from
  TorchVersion target_torchvision = paired_torchvision(kDefaultTargetTorch);
  std::string target_torchvision_source;  // "paired with target-torch" when derived
  std::filesystem::path project_root;
  bool project_marker = false;                // the root holds a configuration or project marker
  size_t context_files = 0;                   // files read for their facts only
  RuleSet enabled;                            // the rules selected for the run
  std::vector<BaselineEntry> stale_baseline;  // entries no finding matched any more
};

// Writes every current finding of `run` to a baseline file; returns the entry count.
std::optional<size_t> write_baseline(const CheckRun& run, const std::string& file, std::string& error);

// Writes a baseline file (write-then-rename, so an interrupted write never leaves half a
// baseline). False, with `error` set, when it cannot be written.
bool save_baseline(const Baseline& baseline, const std::string& file, std::string& error);

// The registry of every rule in this build (built once).
const RuleRegistry& registry();

// Runs a check. Configuration and usage errors return nullopt with `error` set (exit 2).
std::optional<CheckRun> run_check(const CheckRequest& request, std::string& error);

}  // namespace torchlint::cli
