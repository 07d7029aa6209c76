#include "suppressions.h"

#include <algorithm>
#include <cctype>

#include "text.h"

namespace torchlint {

namespace {

bool is_code_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

// Reads "A, B C" style lists of codes or names starting at `pos`.
std::vector<std::string> read_codes(std::string_view text, size_t pos, char stop = '\0') {
  std::vector<std::string> codes;
  while (pos < text.size()) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == ',' || text[pos] == '\t')) ++pos;
    if (pos >= text.size() || text[pos] == stop) break;
    size_t start = pos;
    while (pos < text.size() && is_code_char(text[pos])) ++pos;
    if (pos == start) break;
    codes.emplace_back(text.substr(start, pos - start));
  }
  return codes;
}

// Position right after "#<spaces>word" somewhere in the comment, or npos.
size_t after_marker(std::string_view comment, std::string_view word) {
  for (size_t hash = comment.find('#'); hash != std::string_view::npos; hash = comment.find('#', hash + 1)) {
    size_t p = hash + 1;
    while (p < comment.size() && comment[p] == ' ') ++p;
    if (ascii_iequals(comment.substr(p, word.size()), word)) return p + word.size();
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<Suppression> parse_suppression_comment(std::string_view comment, uint32_t line, uint32_t column,
                                                     bool own_line) {
  Suppression s;
  s.line = line;
  s.comment_line = line;
  s.column = column;
  if (size_t p = after_marker(comment, "torchlint:"); p != std::string_view::npos) {
    while (p < comment.size() && comment[p] == ' ') ++p;
    std::string_view rest = comment.substr(p);
    if (ascii_iequals(rest.substr(0, 4), "noqa")) {
      // File-level. "# torchlint: noqa" or "# torchlint: noqa: TL102"
      s.file_level = true;
      size_t q = 4;
      while (q < rest.size() && rest[q] == ' ') ++q;
      if (q < rest.size() && rest[q] == ':') s.codes = read_codes(rest, q + 1);
    } else if (rest.starts_with("ignore[")) {
      size_t close = rest.find(']');
      if (close == std::string_view::npos) return std::nullopt;
      s.codes = read_codes(rest.substr(0, close), 7, ']');
      if (s.codes.empty()) return std::nullopt;
      if (own_line) s.line = line + 1;
    } else {
      return std::nullopt;
    }
  } else if (size_t p2 = after_marker(comment, "noqa"); p2 != std::string_view::npos) {
    size_t q = p2;
    // "# noqa:TL1", "# noqa: TL1, TL2"; "# noqamore" is not a suppression.
    if (q < comment.size() && is_code_char(comment[q])) return std::nullopt;
    while (q < comment.size() && comment[q] == ' ') ++q;
    if (q < comment.size() && comment[q] == ':') s.codes = read_codes(comment, q + 1);
  } else {
    return std::nullopt;
  }
  s.used.assign(s.codes.empty() ? 1 : s.codes.size(), false);
  return s;
}

static bool code_matches(const std::string& written, const Diagnostic& d) {
  if (written == d.name) return true;
  if (written.size() != d.code.size()) return false;
  return std::equal(written.begin(), written.end(), d.code.begin(),
                    [](char a, char b) { return ascii_upper_char(a) == b; });
}

std::vector<Diagnostic> apply_suppressions(std::vector<Diagnostic> diagnostics, std::vector<Suppression>& suppressions,
                                           const RuleRegistry&) {
  if (suppressions.empty()) return diagnostics;
  std::vector<Diagnostic> kept;
  kept.reserve(diagnostics.size());
  for (auto& d : diagnostics) {
    bool suppressed = false;
    uint32_t first = d.statement_first_line ? d.statement_first_line : d.start.line;
    uint32_t last = std::max(d.statement_last_line, d.start.line);
    for (auto& s : suppressions) {
      if (!s.file_level && (s.line < first || s.line > last)) continue;
      if (s.codes.empty()) {
        s.used[0] = true;
        suppressed = true;
        continue;
      }
      for (size_t i = 0; i < s.codes.size(); ++i) {
        if (code_matches(s.codes[i], d)) {
          s.used[i] = true;
          suppressed = true;
        }
      }
    }
    if (!suppressed) kept.push_back(std::move(d));
  }
  return kept;
}

}  // namespace torchlint
