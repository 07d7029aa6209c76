#include "changed_lines.h"

#include "process.h"

#include <cstdio>
#include <filesystem>
#include <sstream>

namespace torchlint::cli {

namespace {

namespace fs = std::filesystem;

// stdout of a git command, or nullopt when it fails.
std::optional<std::string> git(std::vector<std::string> args) {
  args.insert(args.begin(), "git");
  ProcessOptions options;
  options.capture_stdout = true;
  ProcessResult r = run_process(args, options);
  if (!r.ok()) return std::nullopt;
  return std::move(r.out);
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// Paths are compared absolute and with symbolic links resolved: git names files from the
// top level (a realpath), findings name them from the working directory, which may be a
// subdirectory or reached through a link.
std::string key_of(const fs::path& p) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return (ec ? fs::absolute(p).lexically_normal() : canonical).generic_string();
}

}  // namespace

bool ChangedLines::touches(const std::string& path, uint32_t first, uint32_t last) const {
  std::string p = key_of(path);
  if (whole_files.contains(p)) return true;
  auto it = lines.find(p);
  if (it == lines.end()) return false;
  auto l = it->second.lower_bound(first);
  return l != it->second.end() && *l <= last;
}

ChangedLines parse_unified_zero_diff(const std::string& diff, const std::string& prefix) {
  ChangedLines changed;
  std::istringstream in(diff);
  std::string line, current;
  while (std::getline(in, line)) {
    if (line.starts_with("+++ ")) {
      current.clear();
      if (line.starts_with("+++ b/")) {
        current = key_of(fs::path(prefix) / line.substr(6));
      }
      continue;
    }
    if (!line.starts_with("@@") || current.empty()) continue;
    // @@ -a[,b] +c[,d] @@
    size_t plus = line.find(" +");
    if (plus == std::string::npos) continue;
    unsigned start = 0, count = 1;
    if (std::sscanf(line.c_str() + plus + 2, "%u,%u", &start, &count) < 1) continue;
    for (unsigned l = start; l < start + count; ++l) changed.lines[current].insert(l);
  }
  return changed;
}

std::optional<ChangedLines> changed_lines_since(const std::string& rev, std::string& error) {
  auto top = git({"rev-parse", "--show-toplevel"});
  if (!top) {
    error = "--diff-base needs a git repository";
    return std::nullopt;
  }
  auto base = git({"merge-base", rev, "HEAD"});
  if (!base || trim(*base).empty()) {
    error = "--diff-base: unknown revision `" + rev + "`";
    return std::nullopt;
  }
  // git names paths from the top level, whatever the working directory.
  std::string root = trim(*top);
  auto diff = git({"diff", "--no-color", "--no-ext-diff", "-U0", trim(*base)});
  if (!diff) {
    error = "--diff-base: git diff failed";
    return std::nullopt;
  }
  ChangedLines changed = parse_unified_zero_diff(*diff, root);
  // Untracked files are new in their entirety.
  if (auto untracked = git({"ls-files", "--others", "--exclude-standard", "--full-name"})) {
    std::istringstream in(*untracked);
    std::string f;
    while (std::getline(in, f)) {
      if (!f.empty()) changed.whole_files.insert(key_of(fs::path(root) / f));
    }
  }
  return changed;
}

}  // namespace torchlint::cli
