#include "instrumentation.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <algorithm>
#include <string_view>
#include <type_traits>

namespace torchlint::probe {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define TORCHLINT_DEVICE_TYPE_AUTOCAST 1  // pytorch PR #124359
#else
#define TORCHLINT_DEVICE_TYPE_AUTOCAST 0
#endif

AutocastScope::AutocastScope(c10::DeviceType device_type, at::ScalarType dtype) : device_type_(device_type) {
  namespace ac = at::autocast;
#if TORCHLINT_DEVICE_TYPE_AUTOCAST
  previous_enabled_ = ac::is_autocast_enabled(device_type);
  previous_dtype_ = ac::get_autocast_dtype(device_type);
  ac::set_autocast_dtype(device_type, dtype);
  ac::set_autocast_enabled(device_type, true);
#else
  if (device_type == c10::DeviceType::CPU) {
    previous_enabled_ = ac::is_cpu_enabled();
    previous_dtype_ = ac::get_autocast_cpu_dtype();
    ac::set_autocast_cpu_dtype(dtype);  // throws for anything but bfloat16 on 1.13
    ac::set_cpu_enabled(true);
  } else {
    previous_enabled_ = ac::is_enabled();
    previous_dtype_ = ac::get_autocast_gpu_dtype();
    ac::set_autocast_gpu_dtype(dtype);
    ac::set_enabled(true);
  }
#endif
  ac::increment_nesting();
}

AutocastScope::~AutocastScope() {
  namespace ac = at::autocast;
  if (ac::decrement_nesting() == 0) ac::clear_cache();
#if TORCHLINT_DEVICE_TYPE_AUTOCAST
  ac::set_autocast_enabled(device_type_, previous_enabled_);
  ac::set_autocast_dtype(device_type_, previous_dtype_);
#else
  if (device_type_ == c10::DeviceType::CPU) {
    ac::set_cpu_enabled(previous_enabled_);
    ac::set_autocast_cpu_dtype(previous_dtype_);
  } else {
    ac::set_enabled(previous_enabled_);
    ac::set_autocast_gpu_dtype(previous_dtype_);
  }
#endif
}

namespace {

// Ops whose outputs say nothing about the model's numerics: uninitialised allocations,
// views and copies (they only pass on what another op produced).
bool is_plumbing(std::string_view op) {
  static constexpr std::string_view kPlumbing[] = {
      "aten::empty",
      "aten::empty_like",
      "aten::empty_strided",
      "aten::as_strided",
      "aten::copy_",
      "aten::_to_copy",
      "aten::to",
      "aten::view",
      "aten::reshape",
      "aten::detach",
      "aten::t",
      "aten::transpose",
      "aten::permute",
      "aten::contiguous",
      "aten::select",
      "aten::slice",
      "aten::expand",
      "aten::squeeze",
      "aten::unsqueeze",
      "aten::flatten",
      "aten::clone",
      "aten::resize_",
      "aten::zeros",
      "aten::zeros_like",
      "aten::ones",
      "aten::ones_like",
      "aten::fill_",
      "aten::zero_",
      "aten::size",
      "aten::dim",
      "aten::item",
      "aten::_local_scalar_dense",
      "aten::lift_fresh",
      "aten::alias",
      "aten::numpy_T",
  };
  return std::find(std::begin(kPlumbing), std::end(kPlumbing), op) != std::end(kPlumbing);
}

bool is_low_precision(at::ScalarType t) { return t == at::kHalf || t == at::kBFloat16; }

// --- NonFiniteOpFinder state (callbacks are function pointers: no captures) ---
struct NonFiniteState {
  std::optional<std::string> first;
  int64_t seen = 0;
};
thread_local NonFiniteState* t_non_finite = nullptr;

void non_finite_end(const at::RecordFunction& fn, at::ObserverContext*) {
  NonFiniteState* state = t_non_finite;
  if (!state || state->first) return;
  std::string_view name = fn.name();
  if (is_plumbing(name)) return;
  ++state->seen;
  // isfinite() below is itself an op: keep it from re-entering this callback.
  at::DisableRecordFunctionGuard no_recursion;
  for (const c10::IValue& out : fn.outputs()) {
    if (!out.isTensor()) continue;
    const at::Tensor& t = out.toTensor();
    if (!t.defined() || !at::isFloatingType(t.scalar_type()) || t.numel() == 0) continue;
    if (!at::isfinite(t).all().item<bool>()) {
      state->first = std::string(name);
      return;
    }
  }
}

// --- PrecisionCensus state ---
struct CensusState {
  std::map<std::string, int64_t> fp32_calls;
  std::map<std::string, int64_t> low_precision_calls;
};
thread_local CensusState* t_census = nullptr;

std::unique_ptr<at::ObserverContext> census_start(const at::RecordFunction& fn) {
  CensusState* state = t_census;
  if (!state) return nullptr;
  std::string_view name = fn.name();
  if (is_plumbing(name)) return nullptr;
  bool any_float = false, any_low = false;
  for (const c10::IValue& in : fn.inputs()) {
    if (!in.isTensor()) continue;
    const at::Tensor& t = in.toTensor();
    if (!t.defined() || !at::isFloatingType(t.scalar_type())) continue;
    any_float = true;
    if (is_low_precision(t.scalar_type())) any_low = true;
  }
  if (any_low) {
    ++state->low_precision_calls[std::string(name)];
  } else if (any_float) {
    ++state->fp32_calls[std::string(name)];
  }
  return nullptr;
}

}  // namespace

NonFiniteOpFinder::NonFiniteOpFinder() {
  t_non_finite = new NonFiniteState();
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback(nullptr, &non_finite_end).needsOutputs(true).scopes({at::RecordScope::FUNCTION}));
}

NonFiniteOpFinder::~NonFiniteOpFinder() {
  at::removeCallback(handle_);
  delete t_non_finite;
  t_non_finite = nullptr;
}

std::optional<std::string> NonFiniteOpFinder::first_op() const { return t_non_finite->first; }
int64_t NonFiniteOpFinder::ops_seen() const { return t_non_finite->seen; }

PrecisionCensus::PrecisionCensus() {
  t_census = new CensusState();
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback(&census_start).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
}

PrecisionCensus::~PrecisionCensus() {
  at::removeCallback(handle_);
  delete t_census;
  t_census = nullptr;
}

std::vector<std::string> PrecisionCensus::fp32_only_ops() const {
  std::vector<std::string> ops;
  for (const auto& [name, calls] : t_census->fp32_calls) {
    if (!t_census->low_precision_calls.count(name)) ops.push_back(name);
  }
  return ops;
}

std::vector<std::string> PrecisionCensus::low_precision_ops() const {
  std::vector<std::string> ops;
  for (const auto& kv : t_census->low_precision_calls) ops.push_back(kv.first);
  return ops;
}

// --- CpuMemoryTracker ---

namespace {
// reportMemoryUsage's totals are int64_t in 1.13 and size_t in 2.x: take the type from the
// base class instead of spelling it.
template <class>
struct TotalBytesArg;
template <class C, class R, class Ptr, class Size, class Total, class Total2, class Dev>
struct TotalBytesArg<R (C::*)(Ptr, Size, Total, Total2, Dev)> {
  using type = Total;
};
using TotalBytes = TotalBytesArg<decltype(&c10::MemoryReportingInfoBase::reportMemoryUsage)>::type;
}  // namespace

struct CpuMemoryTracker::Reporter final : c10::MemoryReportingInfoBase {
  int64_t current = 0;
  int64_t peak = 0;
  void reportMemoryUsage(void*, int64_t alloc_size, TotalBytes, TotalBytes, c10::Device device) override {
    if (!device.is_cpu()) return;
    current += alloc_size;  // negative for a free
    peak = std::max(peak, current);
  }
  bool memoryProfilingEnabled() const override { return true; }
};

CpuMemoryTracker::CpuMemoryTracker() : reporter_(std::make_shared<Reporter>()) {
  guard_ = std::make_unique<c10::DebugInfoGuard>(c10::DebugInfoKind::PROFILER_STATE, reporter_);
}
CpuMemoryTracker::~CpuMemoryTracker() = default;
int64_t CpuMemoryTracker::peak_bytes() const { return reporter_->peak; }
int64_t CpuMemoryTracker::current_bytes() const { return reporter_->current; }

// --- WarningCollector ---

struct WarningCollector::Handler final : c10::WarningHandler {
  std::set<std::string> seen;
  std::vector<std::string> ordered;
  void add(const std::string& msg) {
    std::string line = msg.substr(0, msg.find('\n'));
    if (seen.insert(line).second) ordered.push_back(line);
  }
#if TORCH_VERSION_MAJOR >= 2
  void process(const c10::Warning& warning) override { add(warning.msg()); }
#else
  void process(const c10::SourceLocation&, const std::string& msg, const bool) override { add(msg); }
#endif
};

#if TORCH_VERSION_MAJOR >= 2
namespace warning_api = c10::WarningUtils;
#else
namespace warning_api = c10::Warning;
#endif

WarningCollector::WarningCollector() : handler_(std::make_unique<Handler>()) {
  previous_ = warning_api::get_warning_handler();
  warning_api::set_warning_handler(handler_.get());
}

WarningCollector::~WarningCollector() { warning_api::set_warning_handler(previous_); }

std::vector<std::string> WarningCollector::warnings() const { return handler_->ordered; }

}  // namespace torchlint::probe
