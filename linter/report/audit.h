#pragma once
// The audit report: the checklist scorecard with its evidence, the checkpoints found in the
// repository and the runtime probe's figures, rendered as Markdown, one self-contained HTML
// file, or JSON (schema in the README).
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/scorecard.h"
#include "report.h"

namespace torchlint::report {

struct CheckpointRow {
  std::string path;    // the file, or the checkpoint directory
  std::string format;  // "torch.save zip archive", "safetensors", ...
  uint64_t bytes = 0;  // all its files
  size_t files = 1;
  std::string training_state;      // "resumable", "weights only", "training checkpoint, cannot resume: ..."
  std::string training_detail;     // "weights yes, optimizer yes (SGD with momentum), ..."
  std::string safety;              // "safe", "no code", "needs trust", "dangerous", "unknown"
  std::string safety_detail;       // the inspector's one-line verdict
  std::vector<std::string> codes;  // the TL8xx findings on it, in order, once each
  bool torchscript = false;
};

// One model the probe was asked to run on.
struct ProbeModel {
  std::string path;
  std::string status;  // "probed", "failed" (exit 2 or no report), "skipped", "timed out"
  int exit_code = -1;
  std::string note;               // why it was skipped or failed
  nlohmann::ordered_json report;  // the probe's JSON report (torchlint-probe/1), or null
};

struct ProbeSection {
  bool requested = false;           // --probe
  std::string binary;               // the torchlint-probe used; empty when none was found
  std::vector<std::string> inputs;  // the input specs
  std::string inputs_source;        // "--probe-input", "pyproject.toml [tool.torchlint.probe]"
  std::string note;                 // why nothing ran (no binary, no input spec, no model)
  std::vector<ProbeModel> models;
};

// The figures the reports chart, read from a probe report (absent fields stay empty).
struct ProbeFigures {
  struct Memory {
    int64_t batch = 0;
    std::optional<double> forward, forward_backward, predicted_training;  // bytes
    bool out_of_memory = false;
  };
  struct Amp {
    std::string variant;  // "cpu_bfloat16", "cuda_float16", ...
    std::optional<double> max_abs, max_rel, tolerance, cosine;
    bool passed = false;
    std::string error;
  };
  struct Latency {
    int64_t batch = 0;
    std::optional<double> p50_ms, p99_ms, throughput;
    bool out_of_memory = false;
  };
  struct Check {
    std::string name, status, headline;
  };
  std::optional<int64_t> parameters;
  std::string device;
  std::vector<Check> checks;
  std::vector<Memory> memory;
  std::vector<Amp> amp;
  std::vector<Latency> latency;
};
ProbeFigures probe_figures(const nlohmann::ordered_json& report);

struct AuditContext {
  std::string project;       // the audited directory, as given
  std::string generated_at;  // ISO 8601, UTC
  const Scorecard& scorecard;
  const ReportContext& findings;  // outcome, registry, sources
  std::vector<CheckpointRow> checkpoints;
  std::vector<std::string> checkpoint_notes;  // files not inspected, and why
  ProbeSection probe;
  size_t files_linted = 0;
};

void write_audit_markdown(std::ostream& out, const AuditContext& ctx);
// A pull-request comment: score, what to do next and the failed items only, each with at
// most a few findings; under 60,000 characters whatever the repository (GitHub refuses
// comments over 65,536). `report_url`, when given, links the full report.
void write_audit_summary_markdown(std::ostream& out, const AuditContext& ctx, const std::string& report_url);
void write_audit_html(std::ostream& out, const AuditContext& ctx);
void write_audit_json(std::ostream& out, const AuditContext& ctx);

// Failed items by impact (worst severity, then number of findings): what to do next.
std::vector<const ItemResult*> items_by_impact(const Scorecard& card);

// The checklist's items grouped by phase (development, training, evaluation, production,
// then any other), in checklist order within a phase; empty phases are left out.
struct PhaseItems {
  const char* title;
  std::vector<const ItemResult*> items;
};
std::vector<PhaseItems> items_by_phase(const Scorecard& card);

// "1.5 MiB", "512 B"
std::string human_size(uint64_t bytes);

// HTML pieces the audit and fleet reports share: text escaped for HTML, horizontal SVG
// bars (one per label), and the stylesheet (inline: the files stay self-contained).
std::string html_escape(std::string_view s);
struct ChartBar {
  std::string label;
  size_t n = 0;
  const char* color;  // CSS colour of this bar
};
std::string svg_bar_chart(const std::vector<ChartBar>& bars, const char* title);
std::string svg_bar_chart(const std::vector<std::pair<std::string, size_t>>& bars, const char* color,
                          const char* title);
const char* audit_html_style();
// A Markdown table cell: no pipes, no newlines.
std::string markdown_cell(std::string_view s);

}  // namespace torchlint::report
