#include "cuda_support.h"

#include <ATen/Context.h>
#include <c10/util/Exception.h>
#include <torch/cuda.h>

#include <stdexcept>
#include <string>

#if TORCHLINT_PROBE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

namespace torchlint::probe::cuda {

bool compiled() { return TORCHLINT_PROBE_CUDA != 0; }

bool available() { return compiled() && torch::cuda::is_available(); }

int device_count() { return available() ? static_cast<int>(torch::cuda::device_count()) : 0; }

Tf32State set_tf32(Tf32State state) {
  auto& ctx = at::globalContext();
  Tf32State previous{ctx.allowTF32CuDNN(), ctx.allowTF32CuBLAS()};
  ctx.setAllowTF32CuDNN(state.cudnn);
  ctx.setAllowTF32CuBLAS(state.cublas);
  return previous;
}

#if TORCHLINT_PROBE_CUDA

Json device_properties(int device) {
  const cudaDeviceProp* p = at::cuda::getDeviceProperties(device);
  Json j;
  j["name"] = p->name;
  j["compute_capability"] = std::to_string(p->major) + "." + std::to_string(p->minor);
  j["total_memory_bytes"] = static_cast<uint64_t>(p->totalGlobalMem);
  j["multiprocessors"] = p->multiProcessorCount;
  j["bf16"] = p->major >= 8;
  j["cudnn_available"] = torch::cuda::cudnn_is_available();
  j["cudnn_version"] = at::globalContext().hasCuDNN() ? Json(at::globalContext().versionCuDNN()) : Json(nullptr);
  return j;
}

bool supports_bf16(int device) { return at::cuda::getDeviceProperties(device)->major >= 8; }

uint64_t total_memory(int device) { return at::cuda::getDeviceProperties(device)->totalGlobalMem; }

void synchronize(int device) { torch::cuda::synchronize(device); }

double time_ms(int device, const std::function<void()>& fn) {
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  at::cuda::CUDAEvent start(cudaEventDefault), end(cudaEventDefault);
  start.record();
  fn();
  end.record();
  end.synchronize();
  return start.elapsed_time(end);
}

void reset_peak_stats(int device) { c10::cuda::CUDACachingAllocator::resetPeakStats(device); }

MemoryStats memory_stats(int device) {
  // Index 0 is StatType::AGGREGATE; the enum moved namespaces in 2.x, the index did not.
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
  MemoryStats m;
  m.allocated = stats.allocated_bytes[0].current;
  m.peak_allocated = stats.allocated_bytes[0].peak;
  m.reserved = stats.reserved_bytes[0].current;
  m.peak_reserved = stats.reserved_bytes[0].peak;
  m.alloc_retries = stats.num_alloc_retries;
  m.ooms = stats.num_ooms;
  return m;
}

void empty_cache() { c10::cuda::CUDACachingAllocator::emptyCache(); }

#else  // a CPU-only LibTorch: the checks ask available() first and never get here

namespace {
[[noreturn]] void no_cuda() { throw std::logic_error("torchlint-probe was built without CUDA"); }
}  // namespace

Json device_properties(int) { no_cuda(); }
bool supports_bf16(int) { no_cuda(); }
uint64_t total_memory(int) { no_cuda(); }
void synchronize(int) { no_cuda(); }
double time_ms(int, const std::function<void()>&) { no_cuda(); }
void reset_peak_stats(int) { no_cuda(); }
MemoryStats memory_stats(int) { no_cuda(); }
void empty_cache() { no_cuda(); }

#endif

}  // namespace torchlint::probe::cuda

namespace torchlint::probe {

bool is_out_of_memory(const std::exception& e) {
  if (dynamic_cast<const c10::OutOfMemoryError*>(&e)) return true;
  const std::string what = e.what();
  for (const char* marker :
       {" out of memory", "CUDNN_STATUS_NOT_SUPPORTED", "DefaultCPUAllocator: can't allocate memory"}) {
    if (what.find(marker) != std::string::npos) return true;
  }
  return false;
}

}  // namespace torchlint::probe
