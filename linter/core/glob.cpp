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
  // Single '*' backtracks iteratively; '**' recurses once per '**' in the pattern (patterns
  // are short), trying every directory boundary, so nested stars cannot go exponential.
  size_t p = 0, t = 0;
  size_t star_p = std::string_view::npos, star_t = 0;
  while (true) {
    if (p < pattern.size() && pattern[p] == '*' && p + 1 < pattern.size() && pattern[p + 1] == '*') {
      std::string_view rest = pattern.substr(p + 2);
      bool slash = !rest.empty() && rest.front() == '/';
      if (slash) rest.remove_prefix(1);
      for (size_t k = t; k <= text.size(); ++k) {
        if (slash && k > t && text[k - 1] != '/') continue;
        if (glob_match(rest, text.substr(k))) return true;
      }
      return false;
    }
    if (t >= text.size()) break;
    if (p < pattern.size() && pattern[p] == '*') {
      star_p = ++p;
      star_t = t;
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
    if (star_p != std::string_view::npos && text[star_t] != '/') {
      t = ++star_t;
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
