#pragma once
// torchlint-probe's interface: what to probe (ProbeOptions) and what was found (Report).
// This header does not include LibTorch, so the command line, the renderers and the tests
// compile in seconds; only the translation units that run the model pay for torch's headers.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rule_info.h"

namespace torchlint::probe {

using Json = nlohmann::ordered_json;  // figures keep the order they were written in

// The JSON report's schema id; bump it when a field changes meaning or disappears.
inline constexpr std::string_view kSchema = "torchlint-probe/1";

// The dtypes `--input` accepts, in torch's spelling.
inline constexpr std::string_view kInputDTypes[] = {"float32", "float16", "bfloat16", "float64", "int64",
                                                    "int32",   "int16",   "int8",     "uint8",   "bool"};

// One `--input NAME:SHAPE:DTYPE[:LOW..HIGH]` argument.
struct InputSpec {
  std::string name;
  std::vector<int64_t> shape;  // shape[0] is the batch dimension that --batch-sizes replaces
  std::string dtype;           // one of kInputDTypes
  std::optional<double> low;   // range of random values: uniform floats in [low, high), integers
  std::optional<double> high;  // in [low, high); default: standard normal floats, integers in [0, 2)
};

enum class OptimizerKind { kSgd, kMomentum, kAdam, kAdamW, kAmsgrad };

// The checks, in the order they run (cheap correctness checks first, timing last).
inline constexpr std::string_view kCheckNames[] = {"mode",   "finite",   "determinism", "amp",     "memory",
                                                   "export", "quantize", "benchmark",   "latency", "compare"};

struct ProbeOptions {
  std::string model_path;
  std::string checkpoint_path;  // state dict or training checkpoint applied to the model
  std::string compare_path;     // a second TorchScript model for the A/B comparison
  std::vector<InputSpec> inputs;
  std::string device = "auto";            // auto | cpu | cuda | cuda:N
  std::vector<int64_t> batch_sizes;       // empty: the inputs' own batch size
  std::optional<uint64_t> memory_budget;  // bytes; CUDA default: the device's memory
  std::vector<std::string> checks;        // empty: every check (compare only with compare_path)
  OptimizerKind optimizer = OptimizerKind::kAdam;
  uint64_t seed = 0;
  int threads = 0;                 // intra-op threads; 0: LibTorch's default
  int warmup_runs = 10;            // latency: untimed runs first
  int timed_runs = 100;            // latency: timed runs per batch size ...
  double seconds_per_batch = 3.0;  // ... unless this budget runs out first (at least 10 runs)
  // Called before each check with its name, its position and the number of checks.
  std::function<void(std::string_view check, size_t index, size_t total)> progress;
};

// Severities are the catalog's (info, warning, error).
using torchlint::Severity;
using torchlint::severity_name;

struct Finding {
  std::string code;  // TL901 ... TL908
  std::string name;  // amp-unsafe ...
  Severity severity = Severity::kWarning;
  std::string check;  // the check that raised it
  std::string message;
};

enum class CheckStatus {
  kPassed,   // ran; raised no finding of warning or error severity
  kFailed,   // ran; raised at least one finding of warning or error severity
  kSkipped,  // does not apply here (no CUDA, no convolution, ...); `reason` says why
  kError,    // could not run; `reason` says why
};
std::string_view status_name(CheckStatus s);

struct CheckResult {
  std::string name;
  std::string rule;  // the code this check reports (empty: figures only)
  CheckStatus status = CheckStatus::kPassed;
  std::string reason;    // for skipped and error
  std::string headline;  // the key figures in a few words, for the text report
  double seconds = 0;
  Json figures = Json::object();
};

struct Report {
  Json environment = Json::object();  // torch version, device, threads, CUDA properties
  Json model = Json::object();        // paths, artifact kind and format, inputs, checkpoint
  Json summary = Json::object();      // parameters, buffers, bytes by dtype, modules in train mode
  std::vector<CheckResult> checks;
  std::vector<Finding> findings;
  std::string fatal;                  // non-empty: the model could not be probed at all
  std::vector<std::string> warnings;  // LibTorch's warnings during the run, once each
  double seconds = 0;

  // 0: no finding of warning or error severity; 1: some; 2: could not run (fatal, or a check in error).
  int exit_code() const;
  Json to_json() const;
  std::string to_text(bool color) const;
};

// Figures in messages and the text report.
std::string format_bytes(uint64_t bytes);                 // "512 B", "1.5 MiB"
std::string format_number(double value, int digits = 3);  // "0.0123", "1.2e-07"

// Loads the model and runs the selected checks. Never throws: what goes wrong ends up in
// `fatal` (nothing could be probed) or in a check's status.
Report run_probe(const ProbeOptions& options);

}  // namespace torchlint::probe
