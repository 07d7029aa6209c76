#pragma once
// torchlint-cpp's engine: finds each file's compile command, parses the files with Clang
// (in parallel), runs the C++ rules on the main file's declarations and returns findings
// with suppressions applied. No Clang type appears here, so main.cpp stays a plain TU.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/diagnostic.h"
#include "core/registry.h"

namespace torchlint::cpp {

struct CppLintOptions {
  std::vector<std::string> files;
  std::optional<std::string> build_dir;  // -p: where compile_commands.json is
  unsigned jobs = 0;                     // 0: all cores
  std::set<std::string> enabled;         // rule codes to run (TL000 included when selected)
  std::vector<std::string> extra_args;   // appended to every compile command
  std::string resource_dir;              // Clang's builtin headers; empty: the built-in default
  bool use_pch = true;                   // precompile the leading LibTorch includes (cached)
  std::string pch_dir;                   // the PCH cache; empty: $XDG_CACHE_HOME/torchlint/pch
  uint64_t pch_max_size = 0;             // the PCH cache's size cap; 0: the default (2 GiB)
  // The result cache (torchlint's .torchlint_cache): empty: off. An entry is keyed by the
  // tool's identity, the rules, the TU's full compile command, the LibTorch version on its
  // include path and the main file's bytes, and holds the project headers the TU included
  // (those under project_root) with their content hashes: a changed header is a miss.
  std::string cache_dir;
  std::string project_root;
  std::string tool_identity;
};

struct CppLintResult {
  std::vector<Diagnostic> diagnostics;  // sorted
  std::vector<FileError> errors;
  std::vector<std::string> notes;  // said once each (missing database, fallback flags)
  size_t files_linted = 0;
  size_t from_cache = 0;  // translation units whose results came from the result cache
  std::unordered_map<std::string, std::shared_ptr<const SourceFile>> sources;
};

CppLintResult lint_cpp(const CppLintOptions& options, const RuleRegistry& registry);

// The Clang resource directory this build was configured with.
std::string default_resource_dir();
// The codes of the C++ rules of this build.
std::vector<std::string> cpp_rule_codes();
// The extensions torchlint-cpp lints.
const std::vector<std::string>& cpp_extensions();

}  // namespace torchlint::cpp
