#pragma once
// The audit report: the checklist scorecard with its evidence, rendered as Markdown,
// one self-contained HTML file, or JSON (schema in the README).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/scorecard.h"
#include "report.h"

namespace torchlint::report {

struct CheckpointRow {
  std::string path;
  std::string format;
  uint64_t bytes = 0;
  std::string training_state;  // "resumable", "weights only", "missing optimizer", ...
  std::string safety;          // "safe", "not weights_only-loadable", "unsafe", ...
};

struct AuditContext {
  std::string project;       // the audited directory, as given
  std::string generated_at;  // ISO 8601, UTC
  const Scorecard& scorecard;
  const ReportContext& findings;  // outcome, registry, sources
  std::vector<CheckpointRow> checkpoints;
  nlohmann::json probe;  // the probe's JSON reports (an array), or null
  size_t files_linted = 0;
};

void write_audit_markdown(std::ostream& out, const AuditContext& ctx);
void write_audit_html(std::ostream& out, const AuditContext& ctx);
void write_audit_json(std::ostream& out, const AuditContext& ctx);

// Failed items by impact (worst severity, then number of findings): what to do next.
std::vector<const ItemResult*> items_by_impact(const Scorecard& card);

}  // namespace torchlint::report
