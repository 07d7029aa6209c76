#pragma once
// Output formats. Each format is one file; this header is their common entry point.
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/checklist.h"
#include "core/lint_session.h"
#include "core/registry.h"
#include "core/rule_selection.h"

namespace torchlint::report {

struct ReportContext {
  const LintOutcome& outcome;
  const RuleRegistry& registry;
  bool color = false;
  bool show_fixes = true;
  // For the formats that describe the run (SARIF): the selected rules, the checklist,
  // the directory relative paths start from, and the exit code the run will have. The
  // checklist is asked for only by those formats: reading it costs every other run time.
  const RuleSet* enabled = nullptr;
  std::function<const Checklist&()> checklist;
  std::string source_root;  // absolute, '/'-terminated
  int exit_code = 0;
  std::string automation_id = "torchlint/python/";
  bool baseline_active = false;  // results carry baselineState
  bool summary = false;          // the full format ends with summary_line (off: --quiet)
};

using Writer = void (*)(std::ostream&, const ReportContext&);

struct Format {
  std::string_view name;
  Writer write;
  bool machine_readable;
};

// Known formats, for --output-format and its help text.
const std::vector<Format>& formats();
const Format* find_format(std::string_view name);

void write_full(std::ostream& out, const ReportContext& ctx);
void write_concise(std::ostream& out, const ReportContext& ctx);
void write_json(std::ostream& out, const ReportContext& ctx);
void write_json_lines(std::ostream& out, const ReportContext& ctx);
void write_sarif(std::ostream& out, const ReportContext& ctx);
void write_github(std::ostream& out, const ReportContext& ctx);
void write_gitlab(std::ostream& out, const ReportContext& ctx);
// Counts per rule, most frequent first (like `ruff --statistics`).
void write_statistics(std::ostream& out, const ReportContext& ctx);

// "Found 3 findings in 2 files (1 fixable with `--fix`)." or "All checks passed (2 files).":
// the last line of a human-readable run ("" when there was nothing to lint).
std::string summary_line(const ReportContext& ctx);

// Shared by the text formats.
std::string location_prefix(const Diagnostic& d);
std::string paint(bool color, const char* code, std::string_view text);

}  // namespace torchlint::report
