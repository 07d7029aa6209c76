#pragma once
// Small text helpers shared by every front-end (one definition each).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace torchlint {

// ASCII case mapping, never the C library's locale-dependent one: identifiers, rule codes,
// option values, file extensions and protocol headers are ASCII, and a byte of a UTF-8
// name must come out as it went in.
constexpr char ascii_lower_char(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
constexpr char ascii_upper_char(char c) noexcept { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

// ASCII lower case (identifiers, rule codes, option values); other bytes unchanged.
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower_char(c);
  return out;
}

inline std::string ascii_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_upper_char(c);
  return out;
}

// Equal ignoring ASCII case.
inline bool ascii_iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower_char(a[i]) != ascii_lower_char(b[i])) return false;
  }
  return true;
}

// The first position at or after `from` where `needle` occurs in `haystack` ignoring ASCII
// case, or npos. No allocation: it serves as a cheap test before heavier parsing.
inline size_t ascii_ifind(std::string_view haystack, std::string_view needle, size_t from = 0) noexcept {
  if (needle.empty()) return from <= haystack.size() ? from : std::string_view::npos;
  for (size_t i = from; i < haystack.size() && haystack.size() - i >= needle.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && ascii_lower_char(haystack[i + k]) == ascii_lower_char(needle[k])) ++k;
    if (k == needle.size()) return i;
  }
  return std::string_view::npos;
}

// The last component of a dotted name: `optimizer` in `self.optimizer`.
inline std::string_view last_dotted_part(std::string_view dotted) {
  size_t dot = dotted.rfind('.');
  return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

// Levenshtein distance (insertions, deletions, substitutions of one byte each).
inline size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The closest of `candidates` to `word` for a "did you mean": within an edit distance of
// a third of the word's length (at least 1), so that unrelated words get no suggestion;
// "" when none is that close. Case-insensitive (rule codes are typed in either case).
inline std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::string lowered = ascii_lower(word);
  size_t best_distance = std::max<size_t>(1, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(lowered, ascii_lower(c));
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

}  // namespace torchlint
