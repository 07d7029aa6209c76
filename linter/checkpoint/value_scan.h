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

// Largest |a - b| over two tensors of the same dtype and element count (ckpt diff);
// nullopt when either cannot be read.
std::optional<double> max_abs_difference(const CheckpointFile& a, const TensorInfo& ta, const CheckpointFile& b, const TensorInfo& tb);

}  // namespace torchlint::ckpt
