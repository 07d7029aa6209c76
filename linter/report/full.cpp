// The default format: each finding with the source line, a caret under the span, and the
// fix when there is one.
#include <algorithm>

#include "report.h"

namespace torchlint::report {

namespace {

// Long lines (minified code, 5 MB one-liners) are cut around the finding.
constexpr size_t kMaxExcerpt = 160;

}  // namespace

void write_full(std::ostream& out, const ReportContext& ctx) {
  for (const auto& d : ctx.outcome.diagnostics) {
    out << paint(ctx.color, "1", location_prefix(d)) << ' ' << paint(ctx.color, "1;31", d.code) << ' '
        << (d.fix && !d.fix->unsafe ? paint(ctx.color, "36", "[*] ") : "") << d.message << '\n';
    auto it = ctx.outcome.sources.find(d.path);
    // A notebook's file lines are JSON: the excerpt would show quoting, not code.
    if (it != ctx.outcome.sources.end() && d.start.line > 0 && d.cell == 0) {
      std::string_view line = it->second->line_text(d.start.line);
      // Columns are code points; find the byte where the caret goes.
      size_t byte = 0;
      for (uint32_t col = 1; byte < line.size() && col < d.start.column; ++col) {
        ++byte;
        while (byte < line.size() && (static_cast<unsigned char>(line[byte]) & 0xC0) == 0x80) ++byte;
      }
      size_t begin = byte > kMaxExcerpt / 2 ? byte - kMaxExcerpt / 2 : 0;
      while (begin > 0 && (static_cast<unsigned char>(line[begin]) & 0xC0) == 0x80) --begin;
      std::string_view shown = line.substr(begin, kMaxExcerpt);
      std::string gutter = std::to_string(d.start.line);
      std::string pad(gutter.size(), ' ');
      out << pad << " |\n"
          << gutter << " | " << (begin ? "..." : "") << shown << (begin + kMaxExcerpt < line.size() ? "..." : "")
          << '\n';
      size_t caret_col = 0;
      for (size_t i = begin; i < byte && i < line.size(); ++i) {
        if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++caret_col;
      }
      size_t width = 1;
      if (d.end.line == d.start.line && d.end.column > d.start.column) width = d.end.column - d.start.column;
      width = std::min<size_t>(width, kMaxExcerpt);
      out << pad << " | " << (begin ? "   " : "") << std::string(caret_col, ' ')
          << paint(ctx.color, "1;31", std::string(width, '^')) << '\n';
    }
    if (d.fix && ctx.show_fixes) out << "  = " << paint(ctx.color, "36", "help: " + d.fix->message) << '\n';
    out << '\n';
  }
  if (std::string line = ctx.summary ? summary_line(ctx) : ""; !line.empty()) out << line << '\n';
}

std::string summary_line(const ReportContext& ctx) {
  auto count = [](size_t n, const char* one, const char* many) {
    return std::to_string(n) + ' ' + (n == 1 ? one : many);
  };
  const LintOutcome& o = ctx.outcome;
  std::string files = count(o.files_linted, "file", "files");
  if (o.diagnostics.empty()) return o.files_linted ? "All checks passed (" + files + ")." : "";
  size_t safe = 0, unsafe = 0;
  for (const auto& d : o.diagnostics) {
    if (d.fix) ++(d.fix->unsafe ? unsafe : safe);
  }
  std::string line = "Found " + count(o.diagnostics.size(), "finding", "findings") + " in " + files;
  if (safe || unsafe) {
    line += " (";
    if (safe) line += std::to_string(safe) + " fixable with `--fix`";
    if (safe && unsafe) line += ", ";
    if (unsafe) line += count(unsafe, "more fix", "more fixes") + " with `--unsafe-fixes`";
    line += ")";
  }
  return line + ".";
}

}  // namespace torchlint::report
