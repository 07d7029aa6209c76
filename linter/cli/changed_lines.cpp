#include "changed_lines.h"

#include <array>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace torchlint::cli {

namespace {

// Runs a command without a shell; returns its stdout, or nullopt on failure.
std::optional<std::string> capture(const std::vector<std::string>& argv, int& status) {
  std::string cmd;
  for (const auto& a : argv) {
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    cmd += q + "' ";
  }
  cmd += "2>/dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return std::nullopt;
  std::string out;
  std::array<char, 65536> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  status = pclose(pipe);
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

bool ChangedLines::touches(const std::string& path, uint32_t first, uint32_t last) const {
  std::string p = std::filesystem::path(path).lexically_normal().generic_string();
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
        current = std::filesystem::path(prefix + line.substr(6)).lexically_normal().generic_string();
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
  int status = 0;
  auto top = capture({"git", "rev-parse", "--show-toplevel"}, status);
  if (!top || status != 0) {
    error = "--diff-base needs a git repository";
    return std::nullopt;
  }
  auto base = capture({"git", "merge-base", rev, "HEAD"}, status);
  if (!base || status != 0 || trim(*base).empty()) {
    error = "--diff-base: unknown revision `" + rev + "`";
    return std::nullopt;
  }
  // Paths in git output are relative to the top level; ours to the working directory.
  auto prefix_out = capture({"git", "rev-parse", "--show-cdup"}, status);
  std::string prefix = prefix_out ? trim(*prefix_out) : std::string();
  auto diff = capture({"git", "diff", "--no-color", "--no-ext-diff", "-U0", trim(*base)}, status);
  if (!diff || status != 0) {
    error = "--diff-base: git diff failed";
    return std::nullopt;
  }
  ChangedLines changed = parse_unified_zero_diff(*diff, prefix);
  // Untracked files are new in their entirety.
  auto untracked = capture({"git", "ls-files", "--others", "--exclude-standard", "--full-name"}, status);
  if (untracked) {
    std::istringstream in(*untracked);
    std::string f;
    while (std::getline(in, f)) {
      if (!f.empty()) changed.whole_files.insert(std::filesystem::path(prefix + f).lexically_normal().generic_string());
    }
  }
  return changed;
}

}  // namespace torchlint::cli
