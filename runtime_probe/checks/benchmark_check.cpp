// benchmark: torch.backends.cudnn.benchmark on vs off at the input's fixed shape (after
// warm-up: the first call per shape pays for autotuning), plus what that autotuning costs
// for a shape not seen before. CUDA only, and only for models with convolutions: benchmark
// mode only picks convolution algorithms.
#include "checks.h"
#include "cuda_support.h"

namespace torchlint::probe {

void benchmark_check(CheckRun& run) {
  ProbeSession& s = run.session;
  if (!s.on_cuda()) return run.skip("needs CUDA: cuDNN autotuning exists only on the GPU");
  if (!s.inventory().has("Conv")) return run.skip("no convolution: benchmark mode only picks convolution algorithms");

  auto& ctx = at::globalContext();
  const bool previous = ctx.benchmarkCuDNN();
  const int dev = s.device().index();
  torch::jit::Module& m = s.eval_model();
  const std::vector<c10::IValue> inputs = s.inputs();
  LatencyStats off, on;
  double first_call_ms = 0, new_shape_first_call_ms = 0, new_shape_steady_ms = 0;
  try {
    c10::InferenceMode inference;
    ctx.setBenchmarkCuDNN(false);
    off = s.time_forward(m, inputs, 5, 50, 2.0);
    ctx.setBenchmarkCuDNN(true);
    first_call_ms = cuda::time_ms(dev, [&] { m.forward(inputs); });  // autotunes this shape
    on = s.time_forward(m, inputs, 5, 50, 2.0);
    // Another batch size is another shape: autotuned again on its first call.
    const std::vector<c10::IValue> other = s.inputs_at(s.batch_sizes().front() + 1);
    new_shape_first_call_ms = cuda::time_ms(dev, [&] { m.forward(other); });
    new_shape_steady_ms = cuda::time_ms(dev, [&] { m.forward(other); });
  } catch (...) {
    ctx.setBenchmarkCuDNN(previous);
    throw;
  }
  ctx.setBenchmarkCuDNN(previous);

  const double speedup = on.p50_ms > 0 ? off.p50_ms / on.p50_ms : 0;
  const double autotune_ms = std::max(0.0, new_shape_first_call_ms - new_shape_steady_ms);
  run.figures()["benchmark_off"] = off.to_json();
  run.figures()["benchmark_on"] = on.to_json();
  run.figures()["speedup"] = speedup;
  run.figures()["first_call_ms"] = first_call_ms;
  run.figures()["autotune_ms_per_new_shape"] = autotune_ms;
  run.result.headline =
      "speedup " + format_number(speedup) + "x, autotuning " + format_number(autotune_ms) + " ms per new shape";
  if (speedup >= 1.10) {
    run.find(kCudnnBenchmarkGain,
             "cudnn.benchmark makes the forward pass " + format_number(speedup) + "x faster at a fixed shape (p50 " +
                 format_number(off.p50_ms) + " -> " + format_number(on.p50_ms) +
                 " ms): set torch.backends.cudnn.benchmark = True when input shapes do not change (each new shape "
                 "costs about " +
                 format_number(autotune_ms) + " ms of autotuning)");
  } else if (speedup < 0.95) {
    run.figures()["note"] = "benchmark mode is slower here: leave it off";
  }
}

}  // namespace torchlint::probe
