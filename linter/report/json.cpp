// A JSON array with one object per finding (Ruff's field names where they exist).
#include <nlohmann/json.hpp>

#include "json_finding.h"

namespace torchlint::report {

nlohmann::ordered_json finding_json(const Diagnostic& d, const ReportContext& ctx) {
  nlohmann::ordered_json f;
  f["code"] = d.code;
  f["name"] = d.name;
  f["severity"] = severity_name(d.severity);
  f["message"] = d.message;
  f["filename"] = d.path;
  f["location"] = {{"row", d.start.line}, {"column", d.start.column}};
  f["end_location"] = {{"row", d.end.line}, {"column", d.end.column}};
  if (d.cell) f["cell"] = {{"number", d.cell}, {"row", d.cell_start.line}, {"column", d.cell_start.column}};
  if (d.fix) {
    nlohmann::ordered_json edits = nlohmann::ordered_json::array();
    auto src = ctx.outcome.sources.find(d.path);
    for (const auto& e : d.fix->edits) {
      nlohmann::ordered_json edit;
      edit["content"] = e.replacement;
      if (src != ctx.outcome.sources.end()) {
        Position s = src->second->position(e.start), en = src->second->position(e.end);
        edit["location"] = {{"row", s.line}, {"column", s.column}};
        edit["end_location"] = {{"row", en.line}, {"column", en.column}};
      }
      edits.push_back(std::move(edit));
    }
    f["fix"] = {
        {"applicability", d.fix->unsafe ? "unsafe" : "safe"}, {"message", d.fix->message}, {"edits", std::move(edits)}};
  } else {
    f["fix"] = nullptr;
  }
  return f;
}

void write_json(std::ostream& out, const ReportContext& ctx) {
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const auto& d : ctx.outcome.diagnostics) findings.push_back(finding_json(d, ctx));
  // Invalid UTF-8 in messages (quoted source) must not abort the report.
  out << findings.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace torchlint::report

namespace torchlint::report {

// One finding per line, for batch engines (Spark, BigQuery, jq -c).
void write_json_lines(std::ostream& out, const ReportContext& ctx) {
  for (const auto& d : ctx.outcome.diagnostics) {
    out << finding_json(d, ctx).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  }
}

}  // namespace torchlint::report
