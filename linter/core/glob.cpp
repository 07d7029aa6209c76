#include "glob.h"

#include <vector>

namespace torchlint {

namespace {

// Matches one [...] class at pattern[p] against c; returns the index after the class,
// or npos when the class is malformed (then '[' is taken literally).
size_t match_class(std::string_view pattern, size_t p, char c, bool& matched) {
  size_t i = p + 1;
  bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
  if (negate) ++i;
  bool any = false;
  bool first = true;
  while (i < pattern.size() && (first || pattern[i] != ']')) {
    first = false;
    char lo = pattern[i];
    char hi = lo;
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      hi = pattern[i + 2];
      i += 3;
    } else {
      ++i;
    }
    if (c >= lo && c <= hi) any = true;
  }
  if (i >= pattern.size()) return std::string_view::npos;
  matched = (any != negate) && c != '/';
  return i + 1;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with backtracking points for '*' and '**' (no recursion, so a
  // hostile pattern cannot blow the stack; worst case is quadratic, patterns are short).
  size_t p = 0, t = 0;
  size_t star_p = std::string_view::npos, star_t = 0;
  bool star_crosses = false;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      bool dbl = p + 1 < pattern.size() && pattern[p + 1] == '*';
      p += dbl ? 2 : 1;
      // "**/" also matches zero directories.
      if (dbl && p < pattern.size() && pattern[p] == '/') {
        star_p = p + 1;
        star_t = t;
        star_crosses = true;
        // Try matching zero directories first by skipping the slash.
        if (glob_match(pattern.substr(p + 1), text.substr(t))) return true;
        continue;
      }
      star_p = p;
      star_t = t;
      star_crosses = dbl;
      continue;
    }
    if (p < pattern.size()) {
      char pc = pattern[p];
      if (pc == '?' && text[t] != '/') {
        ++p;
        ++t;
        continue;
      }
      if (pc == '[') {
        bool matched = false;
        size_t next = match_class(pattern, p, text[t], matched);
        if (next != std::string_view::npos) {
          if (matched) {
            p = next;
            ++t;
            continue;
          }
        } else if (text[t] == '[') {
          ++p;
          ++t;
          continue;
        }
      } else if (pc == text[t]) {
        ++p;
        ++t;
        continue;
      }
    }
    if (star_p != std::string_view::npos && (star_crosses || text[star_t] != '/')) {
      ++star_t;
      t = star_t;
      p = star_p;
      continue;
    }
    return false;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool path_matches(std::string_view pattern, std::string_view relative_path) {
  while (pattern.starts_with("./")) pattern.remove_prefix(2);
  while (!pattern.empty() && pattern.back() == '/') pattern.remove_suffix(1);
  if (pattern.empty()) return false;
  if (pattern.find('/') == std::string_view::npos) {
    size_t start = 0;
    while (start <= relative_path.size()) {
      size_t slash = relative_path.find('/', start);
      if (slash == std::string_view::npos) slash = relative_path.size();
      if (glob_match(pattern, relative_path.substr(start, slash - start))) return true;
      start = slash + 1;
    }
    return false;
  }
  if (glob_match(pattern, relative_path)) return true;
  // A directory pattern also covers everything below it.
  for (size_t slash = relative_path.find('/'); slash != std::string_view::npos;
       slash = relative_path.find('/', slash + 1)) {
    if (glob_match(pattern, relative_path.substr(0, slash))) return true;
  }
  return false;
}

}  // namespace torchlint
