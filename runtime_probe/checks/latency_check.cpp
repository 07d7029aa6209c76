// latency: p50/p99 and throughput per batch size, after warm-up, with no autograd
// (InferenceMode). CUDA events on the GPU, a steady clock on the CPU. Always reported, as an
// info finding (TL908), so the audit has the figures.
#include <ATen/Parallel.h>
#include "checks.h"
#include "cuda_support.h"

namespace torchlint::probe {

void latency_check(CheckRun& run) {
  ProbeSession& s = run.session;
  const ProbeOptions& o = s.options();
  Json per_batch = Json::array();
  std::string summary;
  for (int64_t batch : s.batch_sizes()) {
    Json e;
    e["batch"] = batch;
    try {
      const LatencyStats stats =
          s.time_forward(s.eval_model(), s.inputs_at(batch), o.warmup_runs, o.timed_runs, o.seconds_per_batch);
      e.update(stats.to_json());
      const double throughput = stats.mean_ms > 0 ? static_cast<double>(batch) * 1000.0 / stats.mean_ms : 0;
      e["throughput_per_s"] = throughput;
      summary += (summary.empty() ? "" : "; ") + std::string("batch ") + std::to_string(batch) + ": p50 " +
                 format_number(stats.p50_ms) + " ms, p99 " + format_number(stats.p99_ms) + " ms, " +
                 format_number(throughput) + " samples/s";
    } catch (const std::exception& e2) {
      if (!is_out_of_memory(e2)) throw;
      if (s.on_cuda()) cuda::empty_cache();
      e["out_of_memory"] = true;
      summary += (summary.empty() ? "" : "; ") + std::string("batch ") + std::to_string(batch) + ": out of memory";
    }
    per_batch.push_back(e);
  }
  run.figures()["device"] = s.device().str();
  run.figures()["threads"] = at::get_num_threads();
  run.figures()["timer"] = s.on_cuda() ? "cuda events" : "steady clock";
  run.figures()["per_batch"] = per_batch;
  run.result.headline = summary;
  run.find(kLatencyReport, summary + " (" + s.device().str() +
                               (s.on_cuda() ? ""
                                            : ", " + std::to_string(at::get_num_threads()) +
                                                  (at::get_num_threads() == 1 ? " thread" : " threads")) +
                               ")");
}

}  // namespace torchlint::probe
