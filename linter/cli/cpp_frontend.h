#pragma once
// `torchlint check` and C++: C++ sources are linted by the separate torchlint-cpp
// executable (Clang LibTooling; torchlint itself never loads Clang). This runs it on the
// discovered C++ files and merges its JSON findings into the outcome.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/discovery.h"
#include "core/lint_session.h"
#include "core/registry.h"
#include "core/rule_selection.h"

namespace torchlint::cli {

// Extensions of C++ files: sources are found in directories; headers only when named.
bool is_cpp_source(const std::string& path);
bool is_cpp_file(const std::string& path);

// The extensions of the C++ sources a directory walk collects (headers only when named).
const std::vector<std::string>& cpp_source_extensions();
// Moves the C++ files out of `files`: those found in directories (discovered with
// cpp_source_extensions() among the extensions) and those named explicitly.
std::vector<DiscoveredFile> split_cpp_files(std::vector<DiscoveredFile>& files);

// How `torchlint check` runs torchlint-cpp besides the rules: the configuration file it
// read (torchlint-cpp reads its [tool.torchlint.cpp] with the same code; none: it reads
// none), the command line's C++ options, which win over the file's, and the result cache.
struct CppRunSettings {
  std::optional<std::filesystem::path> config_file;
  std::optional<std::string> build_path;  // -p
  std::vector<std::string> extra_args;    // --extra-arg, after the configuration's
  std::optional<std::filesystem::path> cache_dir;
  unsigned jobs = 0;
};

// Runs torchlint-cpp (beside this executable, then on PATH; TORCHLINT_CPP overrides) on
// `files` and merges its findings. Without torchlint-cpp it says so once on stderr.
void add_cpp_findings(const std::vector<DiscoveredFile>& files, const RuleRegistry& registry, const RuleSet& enabled,
                      const std::vector<std::pair<std::string, std::vector<std::string>>>& per_file_ignores,
                      const CppRunSettings& settings, LintOutcome& outcome);

}  // namespace torchlint::cli
