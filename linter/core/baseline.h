#pragma once
// Baselines for incremental adoption: a committed file of known findings keyed without
// line numbers (rule, path, a fingerprint of the normalised flagged statement and its
// enclosing function), with a count per key for genuine duplicates.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "diagnostic.h"
#include "source_file.h"

namespace torchlint {

struct BaselineEntry {
  std::string rule;
  std::string path;         // relative to the baseline file's directory, '/'-separated
  std::string fingerprint;  // 16 hex digits
  size_t count = 0;
  auto key() const { return std::tie(rule, path, fingerprint); }
};

struct Baseline {
  std::vector<BaselineEntry> entries;  // sorted by key
};

// The line-independent fingerprint of a finding: rule, scope and the statement's text
// with all whitespace removed.
std::string finding_fingerprint(const Diagnostic& d, const SourceFile& source);

// Builds a baseline from findings; `sources` gives each finding's file.
Baseline make_baseline(const std::vector<Diagnostic>& findings, const std::map<std::string, const SourceFile*>& sources,
                       const std::filesystem::path& baseline_dir);

std::string serialize_baseline(const Baseline& baseline);
std::optional<Baseline> read_baseline(const std::filesystem::path& file, std::string& error);

struct BaselineMatch {
  std::vector<Diagnostic> fresh;      // not in the baseline: reported
  std::vector<Diagnostic> baselined;  // known debt
  std::vector<BaselineEntry> stale;   // entries (with their unmatched counts) no finding matched
};

BaselineMatch apply_baseline(std::vector<Diagnostic> findings, const Baseline& baseline,
                             const std::map<std::string, const SourceFile*>& sources,
                             const std::filesystem::path& baseline_dir);

}  // namespace torchlint
