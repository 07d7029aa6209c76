#pragma once
// Settings from `[tool.torchlint]` in pyproject.toml or from torchlint.toml, found in the
// nearest parent directory of the linted paths. The command line layers on top.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rule_selection.h"

namespace torchlint {

struct TorchVersion {
  int major = 0;
  int minor = 0;
  static std::optional<TorchVersion> parse(std::string_view text);
  auto operator<=>(const TorchVersion&) const = default;
  std::string str() const;
};

// When neither the configuration nor the project's declared dependencies say which
// torch the code targets, rules assume this one (documented in the README).
inline constexpr TorchVersion kDefaultTargetTorch{2, 4};

// The TorchVision release published with a torch release (torch 2.4 with 0.19, 1.13 with
// 0.14): what `target-torchvision` is when nothing declares it.
constexpr TorchVersion paired_torchvision(TorchVersion torch) {
  if (torch.major >= 2) return {0, 15 + torch.minor + 100 * (torch.major - 2)};
  return {0, torch.minor + 1};
}

// `[tool.torchlint.probe]`: how `torchlint audit --probe` runs torchlint-probe on the
// TorchScript models it finds.
struct ProbeConfig {
  std::vector<std::string> inputs;   // --input specs, "x:1x3x32x32:float32"
  std::vector<std::string> models;   // globs of the models to probe (default: all)
  std::vector<int64_t> batch_sizes;  // --batch-sizes
  std::vector<std::string> checks;   // --checks
  std::string device;                // --device
  std::string memory_budget;         // --memory-budget
  int64_t timeout_seconds = 0;       // per model; 0: the audit's default
};

// `[tool.torchlint.cpp]` (`[cpp]` in torchlint.toml): how the C++ front-end (torchlint-cpp)
// compiles the project's files. Read by `torchlint check` and by torchlint-cpp alone; their
// command lines win (extra arguments from the command line come after these).
struct CppConfig {
  std::optional<std::string> build_path;  // the directory of compile_commands.json (absolute)
  std::vector<std::string> extra_args;    // appended to every compile command
  std::optional<std::string> pch_dir;     // the precompiled-header cache (absolute)
  std::optional<uint64_t> pch_max_size;   // bytes
};

struct Config {
  std::filesystem::path file;  // empty when no configuration file was found
  std::filesystem::path root;  // directory paths in the configuration are relative to
  SelectionLayer selection;
  std::vector<std::pair<std::string, std::vector<std::string>>> per_file_ignores;
  std::vector<std::string> exclude;
  std::optional<TorchVersion> target_torch;
  std::string target_torch_source;  // "torchlint.toml", "requirements.txt", ...
  std::optional<TorchVersion> target_torchvision;
  std::string target_torchvision_source;
  ProbeConfig probe;
  CppConfig cpp;
};

// Parses "2GiB", "500MB", "500M", "1.5G", "4096" (bytes); K, M, G, T alone are binary
// (1024-based). nullopt when malformed.
std::optional<uint64_t> parse_size(const std::string& text);

// Nearest directory at or above `start` holding torchlint.toml, or a pyproject.toml with
// a [tool.torchlint] table. torchlint.toml wins within one directory.
std::optional<std::filesystem::path> find_config_file(const std::filesystem::path& start);

// Parses a configuration file. Unknown keys, wrong types and bad versions are errors
// (returned as one message naming the file and key).
std::optional<Config> load_config(const std::filesystem::path& file, std::string& error);

// Reads the lowest torch version the project supports from requirements*.txt or
// pyproject.toml's [project] dependencies in `dir` ("torch>=2.1" -> 2.1).
std::optional<TorchVersion> infer_target_torch(const std::filesystem::path& dir, std::string& source);
// The same for another package ("torchvision>=0.16" -> 0.16).
std::optional<TorchVersion> infer_target_version(const std::filesystem::path& dir, std::string_view package,
                                                 std::string& source);

}  // namespace torchlint
