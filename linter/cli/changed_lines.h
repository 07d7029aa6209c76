#pragma once
// Lines changed since a git revision, for `--diff-base REV`: pull-request gating without a
// baseline (a finding counts when its statement touches a changed line).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace torchlint::cli {

struct ChangedLines {
  // Per path (absolute, links resolved): changed lines of the current version.
  // A file absent from git's view of REV (new, untracked) is wholly changed.
  std::map<std::string, std::set<uint32_t>> lines;
  std::set<std::string> whole_files;
  bool touches(const std::string& path, uint32_t first, uint32_t last) const;
};

// Runs git (merge base of REV and HEAD against the working tree). nullopt with `error`
// when git fails or REV is unknown.
std::optional<ChangedLines> changed_lines_since(const std::string& rev, std::string& error);

// Parses `git diff -U0` output whose paths are relative to `root` (exposed for tests).
ChangedLines parse_unified_zero_diff(const std::string& diff, const std::string& root);

}  // namespace torchlint::cli
