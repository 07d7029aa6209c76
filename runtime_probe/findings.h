#pragma once
// The probe's rule codes (RULES.md, TL9xx) and how findings are made from them. The same codes
// are registered for `torchlint rules` in rules/probe/; the probe test checks both agree.
#include <span>
#include <string>
#include <string_view>

#include "probe.h"

namespace torchlint::probe {

struct ProbeRule {
  std::string_view code;
  std::string_view name;
  Severity severity;
};

inline constexpr ProbeRule kAmpUnsafe{"TL901", "amp-unsafe", Severity::kWarning};
inline constexpr ProbeRule kMemoryBudget{"TL902", "memory-budget", Severity::kWarning};
inline constexpr ProbeRule kCudnnBenchmarkGain{"TL903", "cudnn-benchmark-gain", Severity::kInfo};
inline constexpr ProbeRule kExportNotReady{"TL904", "export-not-ready", Severity::kWarning};
inline constexpr ProbeRule kNondeterministic{"TL905", "nondeterministic", Severity::kWarning};
inline constexpr ProbeRule kSavedInTrainMode{"TL906", "saved-in-train-mode", Severity::kWarning};
inline constexpr ProbeRule kNonFiniteOutput{"TL907", "non-finite-output", Severity::kError};
inline constexpr ProbeRule kLatencyReport{"TL908", "latency-report", Severity::kInfo};

inline std::span<const ProbeRule> probe_rules() {
  static constexpr ProbeRule kAll[] = {kAmpUnsafe,       kMemoryBudget,      kCudnnBenchmarkGain, kExportNotReady,
                                       kNondeterministic, kSavedInTrainMode, kNonFiniteOutput,    kLatencyReport};
  return kAll;
}

inline Finding make_finding(const ProbeRule& rule, std::string_view check, std::string message) {
  return Finding{std::string(rule.code), std::string(rule.name), rule.severity, std::string(check), std::move(message)};
}

}  // namespace torchlint::probe
