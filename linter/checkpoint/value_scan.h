#pragma once
// Reads tensor values, only when asked (--scan-values): NaN and Inf counts, and min, max
// and mean of the finite values, per tensor of a floating dtype (float32, float16,
// bfloat16, float64). Storages are read through the file's memory map, sequentially and
// once, at memory bandwidth; deflated storages are streamed through zlib.
#include <cstdint>
#include <functional>

#include "checkpoint.h"

namespace torchlint::ckpt {

// Fills file.stats (parallel to file.tensors). `progress(done, total)` gets bytes.
void scan_values(CheckpointFile& file, const std::function<void(uint64_t, uint64_t)>& progress = {});

// The statistics of `n` elements of `dtype` at `data` (little-endian unless `swap`).
// Exposed for tests and the benchmark.
void accumulate_values(DType dtype, const char* data, uint64_t n, bool swap, ValueStats& stats, double& sum);

// How two tensors of the same dtype and element count differ (ckpt diff).
struct ValueDifference {
  double max_abs = 0;         // largest |a - b| over elements that are numbers on both sides
  uint64_t differing = 0;     // elements that differ (NaN on both sides counts as equal)
  uint64_t nan_mismatch = 0;  // NaN on one side only
};
// Floating, integer and bool dtypes; nullopt when either tensor cannot be read. The
// bytes are read in chunks through the maps and handed back to the kernel as they are
// done, so two 2 GB files do not take 4 GB of memory.
std::optional<ValueDifference> compare_values(const CheckpointFile& a, const TensorInfo& ta, const CheckpointFile& b,
                                              const TensorInfo& tb);

}  // namespace torchlint::ckpt
