#pragma once
// Scoped hooks into LibTorch that the checks install around a run: autocast, operator
// observers (RecordFunction), a CPU allocation tracker and a warning collector. Each is RAII:
// the state LibTorch had before is back when the object goes away, even on an exception.
#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/Exception.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace torchlint::probe {

// torch.autocast(device_type, dtype) as an RAII scope, mirroring its __enter__/__exit__:
// save the state, set dtype and enabled, increment the nesting; on exit, clear the cast
// cache when the nesting drops to zero (otherwise cast weight copies outlive the run and
// distort memory figures), then restore. LibTorch >= 2.4 has a device-type API; the older
// per-device calls are deprecated there, so each version uses its own.
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device_type, at::ScalarType dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_type_;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
};

// Names the first operator whose output holds NaN or Inf, in completion order (so the
// innermost kernel, e.g. aten::log, not the aten::linear around it). A thread-local
// RecordFunction callback: callbacks must be plain function pointers, hence the
// thread-local state; tensor checks inside run with RecordFunction disabled so they do not
// observe themselves.
class NonFiniteOpFinder {
 public:
  NonFiniteOpFinder();
  ~NonFiniteOpFinder();
  NonFiniteOpFinder(const NonFiniteOpFinder&) = delete;
  NonFiniteOpFinder& operator=(const NonFiniteOpFinder&) = delete;
  // "aten::log", or nullopt when every output was finite.
  std::optional<std::string> first_op() const;
  int64_t ops_seen() const;

 private:
  at::CallbackHandle handle_;
};

// Under autocast, counts for each operator how often it ran with low-precision floating
// inputs and how often with fp32 ones only. An op the autocast policy casts is seen twice
// (the outer call with fp32 inputs, the inner one with fp16/bf16), so "fp32 only" means the
// op really ran in fp32: the ops that still cost full precision.
class PrecisionCensus {
 public:
  PrecisionCensus();
  ~PrecisionCensus();
  PrecisionCensus(const PrecisionCensus&) = delete;
  PrecisionCensus& operator=(const PrecisionCensus&) = delete;
  // Compute ops that only ever ran in fp32 (casts, views and factories left out).
  std::vector<std::string> fp32_only_ops() const;
  std::vector<std::string> low_precision_ops() const;

 private:
  at::CallbackHandle handle_;
};

// Peak bytes the CPU allocator handed out on this thread while the tracker was installed,
// above what was allocated when it started. LibTorch reports every CPU allocation and free
// to the thread's memory-reporting debug info when that asks for it (the mechanism behind
// the profiler's profile_memory), so this is exact for the ops the thread runs.
class CpuMemoryTracker {
 public:
  CpuMemoryTracker();
  ~CpuMemoryTracker();
  CpuMemoryTracker(const CpuMemoryTracker&) = delete;
  CpuMemoryTracker& operator=(const CpuMemoryTracker&) = delete;
  int64_t peak_bytes() const;
  int64_t current_bytes() const;

  struct Reporter;

 private:
  std::shared_ptr<Reporter> reporter_;
  std::unique_ptr<c10::DebugInfoGuard> guard_;
};

// Collects LibTorch's warnings (TORCH_WARN) instead of printing them to stderr: the probe
// reports them once each, in the report.
class WarningCollector {
 public:
  WarningCollector();
  ~WarningCollector();
  WarningCollector(const WarningCollector&) = delete;
  WarningCollector& operator=(const WarningCollector&) = delete;
  std::vector<std::string> warnings() const;

  struct Handler;

 private:
  std::unique_ptr<Handler> handler_;
  c10::WarningHandler* previous_;
};

}  // namespace torchlint::probe
