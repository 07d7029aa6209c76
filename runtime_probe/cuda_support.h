#pragma once
// The CUDA calls the probe makes, behind one small interface. They compile only when the
// LibTorch found has CUDA (CMake defines TORCHLINT_PROBE_CUDA when c10_cuda exists; headers
// alone prove nothing: Debian installs them without the libraries). Without CUDA, available()
// is false and the checks never call the rest.
#include <cstdint>
#include <exception>
#include <functional>

#include "probe.h"

#ifndef TORCHLINT_PROBE_CUDA
#define TORCHLINT_PROBE_CUDA 0
#endif

namespace torchlint::probe::cuda {

bool compiled();   // built against a CUDA LibTorch
bool available();  // compiled, and a device is there
int device_count();

// name, compute capability, memory, bf16 support, cuDNN version.
Json device_properties(int device);
bool supports_bf16(int device);  // compute capability 8.0 or newer
uint64_t total_memory(int device);

void synchronize(int device);
// Milliseconds `fn` takes on the device's current stream, measured with CUDA events
// (created with timing enabled: the default flag disables it).
double time_ms(int device, const std::function<void()>& fn);

struct MemoryStats {
  uint64_t allocated = 0, peak_allocated = 0;
  uint64_t reserved = 0, peak_reserved = 0;
  uint64_t alloc_retries = 0, ooms = 0;
};
void reset_peak_stats(int device);
MemoryStats memory_stats(int device);
void empty_cache();

// CUDA's tf32 switches (cuDNN and cuBLAS): the fp32 reference of the AMP check runs with both off.
struct Tf32State {
  bool cudnn = false, cublas = false;
};
Tf32State set_tf32(Tf32State state);  // returns the previous state

}  // namespace torchlint::probe::cuda

namespace torchlint::probe {
// An allocation failed on the device (c10::OutOfMemoryError, or the messages accelerate's
// find_executable_batch_size looks for).
bool is_out_of_memory(const std::exception& e);
}  // namespace torchlint::probe
