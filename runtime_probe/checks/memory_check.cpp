// memory: what training at each batch size needs, and the largest batch that fits the budget.
//   static: weights + buffers, gradients (trainable bytes), optimizer state by formula
//           (runtime-probe.md §4.1: SGD 0, momentum P·b, Adam/AdamW 2·P·b + 4 bytes of `step`
//           per tensor, amsgrad + P·b);
//   measured: peak bytes of one forward (no grad) and of one forward + backward (gradients
//           included: they are allocated during backward), at two batch sizes: on CUDA from the
//           caching allocator's peak statistics, on CPU from the allocator's reports;
//   fit:    peak(B) = S + A·B through the two points; predicted training peak
//           = weights + optimizer state + peak(B); max batch = (budget - weights - optimizer - S) / A.
#include <algorithm>
#include <cmath>
#include <map>

#include "checks.h"
#include "cuda_support.h"
#include "instrumentation.h"

namespace torchlint::probe {

namespace {

const char* optimizer_name(OptimizerKind k) {
  switch (k) {
    case OptimizerKind::kSgd:
      return "sgd";
    case OptimizerKind::kMomentum:
      return "sgd-momentum";
    case OptimizerKind::kAdam:
      return "adam";
    case OptimizerKind::kAdamW:
      return "adamw";
    case OptimizerKind::kAmsgrad:
      return "adam-amsgrad";
  }
  return "?";
}

// torch.optim creates its state with zeros_like(param): the parameter's dtype.
uint64_t optimizer_state_bytes(OptimizerKind k, const ModelInventory& inv) {
  const uint64_t pb = inv.trainable_bytes;
  const uint64_t steps = 4 * static_cast<uint64_t>(inv.trainable_tensors);  // fp32 scalar `step` per param
  switch (k) {
    case OptimizerKind::kSgd:
      return 0;
    case OptimizerKind::kMomentum:
      return pb;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      return 2 * pb + steps;
    case OptimizerKind::kAmsgrad:
      return 3 * pb + steps;
  }
  return 0;
}

struct Peaks {
  int64_t forward = 0;
  int64_t forward_backward = 0;
  int64_t reserved = 0;  // CUDA: the caching allocator's reserved peak over both runs
};

// Runs `fn` and returns the peak bytes it allocated above what was allocated before.
int64_t peak_of(const ProbeSession& s, const std::function<void()>& fn, int64_t* reserved_peak) {
  if (!s.on_cuda()) {
    CpuMemoryTracker tracker;
    fn();
    return tracker.peak_bytes();
  }
  const int dev = s.device().index();
  s.synchronize();
  cuda::empty_cache();
  const uint64_t before = cuda::memory_stats(dev).allocated;
  cuda::reset_peak_stats(dev);
  fn();
  s.synchronize();
  const cuda::MemoryStats after = cuda::memory_stats(dev);
  *reserved_peak = std::max<int64_t>(*reserved_peak, static_cast<int64_t>(after.peak_reserved));
  return static_cast<int64_t>(after.peak_allocated - before);
}

// Peak bytes of a forward pass (eval, no grad) and of a forward + backward pass (training mode
// on a copy; eval mode when a training forward fails, e.g. BatchNorm1d at batch 1), above what
// was allocated before. The inputs are made inside the measurement: the batch is on the device
// during training.
Peaks measure(ProbeSession& s, int64_t batch) {
  Peaks peaks;
  peaks.forward = peak_of(
      s,
      [&] {
        const std::vector<c10::IValue> inputs = s.inputs_at(batch);
        torch::NoGradGuard no_grad;
        s.reseed();
        s.eval_model().forward(inputs);
      },
      &peaks.reserved);
  auto forward_backward = [&](torch::jit::Module& m) {
    return peak_of(
        s,
        [&] {
          const std::vector<c10::IValue> inputs = s.inputs_at(batch);
          s.reseed();
          at::Tensor loss = s.surrogate_loss(m.forward(inputs));
          if (loss.defined()) loss.backward();
        },
        &peaks.reserved);
  };
  torch::jit::Module train = s.train_copy();
  try {
    peaks.forward_backward = forward_backward(train);
  } catch (const std::exception& e) {
    if (is_out_of_memory(e)) throw;
    torch::jit::Module eval = s.eval_copy();
    peaks.forward_backward = forward_backward(eval);
  }
  return peaks;
}

}  // namespace

void memory_check(CheckRun& run) {
  ProbeSession& s = run.session;
  const ModelInventory& inv = s.inventory();
  const ProbeOptions& o = s.options();

  const uint64_t weights = inv.parameter_bytes + inv.buffer_bytes;
  const uint64_t optimizer = optimizer_state_bytes(o.optimizer, inv);
  Json st;
  st["weights_and_buffers_bytes"] = weights;
  st["gradient_bytes"] = inv.trainable_bytes;
  st["optimizer"] = optimizer_name(o.optimizer);
  st["optimizer_state_bytes"] = optimizer;
  // torch.autocast keeps a low-precision copy of every fp32 weight that requires grad until
  // the outermost autocast exits: up to 2 bytes per trainable parameter on top.
  st["amp_cast_cache_bytes"] = 2 * static_cast<uint64_t>(inv.trainable_parameters);
  st["static_training_bytes"] = weights + inv.trainable_bytes + optimizer;
  run.figures()["static"] = st;

  std::vector<int64_t> sizes = s.batch_sizes();
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const int64_t b1 = sizes.front();
  const int64_t b2 = sizes.size() > 1 ? sizes[1] : 2 * b1;
  // Two batch sizes give the line; on CUDA, where runs are cheap, every requested size is
  // measured as well.
  std::map<int64_t, Peaks> measured;
  for (int64_t b : {b1, b2}) measured[b] = measure(s, b);
  if (s.on_cuda()) {
    for (int64_t b : sizes) {
      if (measured.count(b)) continue;
      try {
        measured[b] = measure(s, b);
      } catch (const std::exception& e) {
        if (!is_out_of_memory(e)) throw;
        cuda::empty_cache();
      }
    }
  }
  const Peaks& p1 = measured[b1];
  const Peaks& p2 = measured[b2];
  // Activations (and gradients, allocated during backward) as a line in the batch size.
  const double slope = static_cast<double>(p2.forward_backward - p1.forward_backward) / static_cast<double>(b2 - b1);
  const double intercept = static_cast<double>(p1.forward_backward) - slope * static_cast<double>(b1);
  const double forward_slope = static_cast<double>(p2.forward - p1.forward) / static_cast<double>(b2 - b1);
  run.figures()["measured_on"] = s.on_cuda() ? "cuda caching allocator peaks" : "cpu allocator reports";
  run.figures()["activation_bytes_per_sample"] = Json{{"forward", forward_slope}, {"forward_backward", slope}};
  run.figures()["fixed_bytes"] = intercept;

  std::optional<uint64_t> budget = o.memory_budget;
  if (!budget && s.on_cuda()) budget = cuda::total_memory(s.device().index());
  run.figures()["budget_bytes"] = budget ? Json(*budget) : Json(nullptr);

  auto activations = [&](int64_t batch) -> double {
    auto it = measured.find(batch);
    return std::max(0.0, it != measured.end() ? static_cast<double>(it->second.forward_backward)
                                              : intercept + slope * static_cast<double>(batch));
  };
  auto predicted = [&](int64_t batch) { return static_cast<double>(weights + optimizer) + activations(batch); };
  Json per_batch = Json::array();
  for (int64_t b : sizes) {
    Json e;
    e["batch"] = b;
    auto it = measured.find(b);
    e["measured"] = it != measured.end();
    if (it != measured.end()) {
      e["forward_peak_bytes"] = it->second.forward;
      e["forward_backward_peak_bytes"] = it->second.forward_backward;
      if (s.on_cuda()) e["reserved_peak_bytes"] = it->second.reserved;
    } else if (s.on_cuda()) {
      e["out_of_memory"] = true;
    }
    e["predicted_training_bytes"] = std::llround(predicted(b));
    per_batch.push_back(e);
  }
  run.figures()["per_batch"] = per_batch;

  std::optional<int64_t> max_batch;
  if (budget && slope > 0) {
    const double room = static_cast<double>(*budget) - static_cast<double>(weights + optimizer) - intercept;
    max_batch = room > 0 ? static_cast<int64_t>(std::floor(room / slope)) : 0;
  }
  // On CUDA the prediction is tried, and backed off by 10 % while it does not fit (an OOM,
  // or a peak over the budget), as accelerate's find_executable_batch_size does.
  if (max_batch && *max_batch > 0 && s.on_cuda()) {
    Json trials = Json::array();
    for (int attempt = 0; attempt < 6 && *max_batch > 0; ++attempt) {
      bool fits = false;
      try {
        const Peaks p = measure(s, *max_batch);
        fits = static_cast<double>(weights + optimizer + p.forward_backward) <= static_cast<double>(*budget);
      } catch (const std::exception& e) {
        if (!is_out_of_memory(e)) throw;
        cuda::empty_cache();
      }
      trials.push_back(Json{{"batch", *max_batch}, {"fits", fits}});
      if (fits) break;
      *max_batch = static_cast<int64_t>(std::floor(static_cast<double>(*max_batch) * 0.9));
    }
    run.figures()["max_batch_trials"] = trials;
  }
  run.figures()["max_batch"] = max_batch ? Json(*max_batch) : Json(nullptr);
  run.result.headline = "training at batch " + std::to_string(sizes.back()) + " ~" +
                        format_bytes(static_cast<uint64_t>(predicted(sizes.back()))) +
                        (max_batch ? ", max batch ~" + std::to_string(*max_batch) : "");

  if (!budget) return;
  for (int64_t b : sizes) {
    const double need = predicted(b);
    if (need <= static_cast<double>(*budget)) continue;
    run.find(kMemoryBudget,
             "training at batch " + std::to_string(b) + " needs about " + format_bytes(static_cast<uint64_t>(need)) +
                 " (weights " + format_bytes(weights) + ", " + optimizer_name(o.optimizer) + " state " +
                 format_bytes(optimizer) + ", activations and gradients " +
                 format_bytes(static_cast<uint64_t>(need) - weights - optimizer) + "), over the budget of " +
                 format_bytes(*budget) +
                 (max_batch ? "; the largest batch that fits is about " + std::to_string(*max_batch) : ""));
  }
}

}  // namespace torchlint::probe
