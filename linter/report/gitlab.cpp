// GitLab Code Quality report (artifacts:reports:codequality).
#include <nlohmann/json.hpp>

#include "core/baseline.h"
#include "report.h"

namespace torchlint::report {

void write_gitlab(std::ostream& out, const ReportContext& ctx) {
  nlohmann::ordered_json issues = nlohmann::ordered_json::array();
  for (const auto& d : ctx.outcome.diagnostics) {
    auto source = ctx.outcome.sources.find(d.path);
    // GitLab matches issues across pipelines by fingerprint: use the same line-independent
    // fingerprint as baselines, plus the path.
    std::string fingerprint =
        d.path + ":" + (source != ctx.outcome.sources.end() ? finding_fingerprint(d, *source->second) : d.code);
    const char* severity = d.severity == Severity::kError     ? "critical"
                           : d.severity == Severity::kWarning ? "major"
                                                              : "info";
    issues.push_back(
        {{"description", d.code + " " + d.message},
         {"check_name", d.code + " " + d.name},
         {"fingerprint", fingerprint},
         {"severity", severity},
         {"location",
          {{"path", d.path}, {"lines", {{"begin", d.start.line}, {"end", std::max(d.end.line, d.start.line)}}}}}});
  }
  out << issues.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace torchlint::report
