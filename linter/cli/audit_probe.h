#pragma once
// `torchlint audit --probe`: runs torchlint-probe (runtime_probe/, a separate executable
// linking LibTorch) on the TorchScript models the checkpoint pass found, one process per
// model with a time limit, and reads back its JSON reports (schema torchlint-probe/1).
// A missing probe binary or input spec is a note in the report, never an error.
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/diagnostic.h"
#include "core/registry.h"
#include "core/rule_selection.h"
#include "report/audit.h"

namespace torchlint::cli {

struct ProbeTarget {
  std::string path;     // to open
  std::string display;  // as reported
  bool trusted = true;  // false: the inspector found something dangerous or unreadable in it
  std::string why_not;  // when not trusted
};

struct ProbeRunOptions {
  std::optional<std::string> binary;  // --probe-binary
  std::vector<std::string> inputs;    // --probe-input (win over the configuration)
  ProbeConfig config;                 // [tool.torchlint.probe]
  std::string config_name;            // "pyproject.toml", for the report
  int timeout_seconds = 600;          // per model, unless the configuration says
  std::function<void(const std::string&)> progress;
};

// Finds the probe: --probe-binary, $TORCHLINT_PROBE, next to this executable, then PATH.
std::string find_probe_binary(const std::optional<std::string>& flag);

report::ProbeSection run_probe(const std::vector<ProbeTarget>& models, const ProbeRunOptions& options);

// The probe's findings as diagnostics on the model file (line 1), for the rules `enabled`
// selects. The latency check's report (every run prints one) is a figure, not a finding.
std::vector<Diagnostic> probe_diagnostics(const report::ProbeSection& probe, const RuleSet& enabled,
                                          const RuleRegistry& registry);

// Probe rules whose check did not run on any model (skipped, or errors), so the items they
// verify are not counted as checked by them.
std::set<std::string> probe_rules_not_run(const report::ProbeSection& probe, const RuleRegistry& registry);

}  // namespace torchlint::cli
