#include "nolint.h"

#include <algorithm>
#include <cctype>

#include "core/text.h"

namespace torchlint::cpp {

namespace {

std::string trim(std::string_view s) {
  size_t a = s.find_first_not_of(" \t");
  if (a == std::string_view::npos) return {};
  size_t b = s.find_last_not_of(" \t\r");
  return std::string(s.substr(a, b - a + 1));
}

// Parses "(A, B)" after a NOLINT keyword. Returns false for "NOLINT(" without ")".
// `blanket` is set for no list, an empty list or "*".
bool parse_codes(std::string_view rest, std::vector<std::string>& codes, bool& blanket) {
  blanket = true;
  if (rest.empty() || rest.front() != '(') return true;
  size_t close = rest.find(')');
  if (close == std::string_view::npos) return false;
  std::string_view list = rest.substr(1, close - 1);
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    std::string item = trim(list.substr(start, comma - start));
    if (item == "*") return true;
    if (!item.empty()) codes.push_back(item);
    start = comma + 1;
  }
  blanket = codes.empty();
  return true;
}

}  // namespace

NolintScan scan_nolint(std::string_view text) {
  NolintScan out;
  struct Open {
    uint32_t line, column;
    std::vector<std::string> codes;
    bool blanket;
  };
  std::vector<Open> open;
  uint32_t line = 1;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view l = text.substr(pos, eol - pos);
    // Only inside comments: "//" or "/*" before the keyword on the same line.
    size_t comment = std::min(l.find("//"), l.find("/*"));
    size_t at = comment == std::string_view::npos ? std::string_view::npos : l.find("NOLINT", comment);
    while (at != std::string_view::npos) {
      std::string_view rest = l.substr(at + 6);
      std::string kind;
      for (std::string_view k : {"NEXTLINE", "BEGIN", "END"}) {
        if (rest.starts_with(k)) {
          kind = std::string(k);
          rest.remove_prefix(k.size());
          break;
        }
      }
      // NOLINTFOO is not a suppression (clang-tidy ignores it too).
      if (!rest.empty() && (std::isalnum(static_cast<unsigned char>(rest.front())) || rest.front() == '_')) {
        at = l.find("NOLINT", at + 6);
        continue;
      }
      std::vector<std::string> codes;
      bool blanket = true;
      if (parse_codes(rest, codes, blanket)) {
        uint32_t column = static_cast<uint32_t>(at) + 1;
        if (kind.empty()) {
          out.ranges.push_back({line, line, line, column, blanket ? std::vector<std::string>{} : codes});
        } else if (kind == "NEXTLINE") {
          out.ranges.push_back({line + 1, line + 1, line, column, blanket ? std::vector<std::string>{} : codes});
        } else if (kind == "BEGIN") {
          open.push_back({line, column, codes, blanket});
        } else {
          // NOLINTEND closes the most recent NOLINTBEGIN with the same list.
          auto it = std::find_if(open.rbegin(), open.rend(),
                                 [&](const Open& o) { return o.codes == codes && o.blanket == blanket; });
          if (it == open.rend()) {
            out.problems.emplace_back(line, "NOLINTEND without a matching NOLINTBEGIN");
          } else {
            out.ranges.push_back(
                {it->line, line, it->line, it->column, it->blanket ? std::vector<std::string>{} : it->codes});
            open.erase(std::next(it).base());
          }
        }
      }
      at = l.find("NOLINT", at + 6);
    }
    pos = eol + 1;
    ++line;
  }
  for (const auto& o : open) out.problems.emplace_back(o.line, "NOLINTBEGIN without a matching NOLINTEND");
  return out;
}

bool is_suppressed(const Diagnostic& d, const std::vector<NolintRange>& ranges) {
  for (const auto& r : ranges) {
    if (d.start.line < r.first_line || d.start.line > r.last_line) continue;
    if (r.codes.empty()) return true;
    for (const auto& c : r.codes) {
      if (ascii_iequals(c, d.code) || ascii_iequals(c, d.name)) return true;
    }
  }
  return false;
}

}  // namespace torchlint::cpp
