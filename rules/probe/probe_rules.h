#pragma once
// The codes torchlint-probe's checks report (rules/catalog.def declares them, kProbe; name,
// severity and doc come from there). One constant per rule, used by the check that raises it.
#include <string_view>

namespace torchlint::probe_rules {

inline constexpr std::string_view kAmpUnsafe = "TL901";
inline constexpr std::string_view kMemoryBudget = "TL902";
inline constexpr std::string_view kCudnnBenchmarkGain = "TL903";
inline constexpr std::string_view kExportNotReady = "TL904";
inline constexpr std::string_view kNondeterministic = "TL905";
inline constexpr std::string_view kSavedInTrainMode = "TL906";
inline constexpr std::string_view kNonFiniteOutput = "TL907";
inline constexpr std::string_view kLatencyReport = "TL908";

}  // namespace torchlint::probe_rules
