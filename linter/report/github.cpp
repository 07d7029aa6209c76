// GitHub Actions workflow commands: each finding becomes an annotation on the PR diff.
#include "report.h"

namespace torchlint::report {

namespace {

// Workflow-command escaping: data escapes %, CR, LF; properties also ':' and ','.
std::string escape(std::string_view s, bool property) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      case ':':
        out += property ? "%3A" : ":";
        break;
      case ',':
        out += property ? "%2C" : ",";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

void write_github(std::ostream& out, const ReportContext& ctx) {
  for (const auto& d : ctx.outcome.diagnostics) {
    const char* command = d.severity == Severity::kError     ? "error"
                          : d.severity == Severity::kWarning ? "warning"
                                                             : "notice";
    out << "::" << command << " title=" << escape("torchlint (" + d.code + " " + d.name + ")", true)
        << ",file=" << escape(d.path, true) << ",line=" << d.start.line << ",col=" << d.start.column
        << ",endLine=" << d.end.line << ",endColumn=" << d.end.column
        << "::" << escape(location_prefix(d) + " " + d.code + " " + d.message, false) << '\n';
  }
}

}  // namespace torchlint::report
