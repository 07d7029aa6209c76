#pragma once
// The checks, one function each (one file each in this directory). A check reads the
// session, writes its figures, and raises findings through CheckRun; it throws only when it
// could not run at all (the driver records that as the check's error).
#include <iterator>
#include <string_view>

#include "findings.h"
#include "session.h"

namespace torchlint::probe {

void mode_check(CheckRun& run);         // TL906: modules in training mode; train vs eval
void finite_check(CheckRun& run);       // TL907: NaN/Inf in outputs and gradients, first op
void determinism_check(CheckRun& run);  // TL905: repeatability, with and without a seed
void amp_check(CheckRun& run);          // TL901: autocast against an fp32 reference
void memory_check(CheckRun& run);       // TL902: training memory per batch size, max batch
void export_check(CheckRun& run);       // TL904: save/load, freeze, optimize_for_inference, mobile
void quantize_check(CheckRun& run);     // (info) dynamic int8 quantization of Linear/LSTM
void benchmark_check(CheckRun& run);    // TL903: cudnn.benchmark on vs off (CUDA)
void latency_check(CheckRun& run);      // TL908: p50/p99 and throughput per batch size
void compare_check(CheckRun& run);      // (info) A/B against --compare

struct CheckEntry {
  std::string_view name;
  void (*run)(CheckRun&);
  std::string_view rule;  // the code it reports ("": figures only); the audit reads it from the report
};

// In kCheckNames' order.
inline constexpr CheckEntry kChecks[] = {
    {"mode", mode_check, kSavedInTrainMode},
    {"finite", finite_check, kNonFiniteOutput},
    {"determinism", determinism_check, kNondeterministic},
    {"amp", amp_check, kAmpUnsafe},
    {"memory", memory_check, kMemoryBudget},
    {"export", export_check, kExportNotReady},
    {"quantize", quantize_check, ""},
    {"benchmark", benchmark_check, kCudnnBenchmarkGain},
    {"latency", latency_check, kLatencyReport},
    {"compare", compare_check, ""},
};
static_assert(std::size(kChecks) == std::size(kCheckNames));

}  // namespace torchlint::probe
