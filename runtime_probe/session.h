#pragma once
// What every check works with: the loaded model, the device, the inputs made from the specs,
// and the helpers to run, compare and time the model. This header includes LibTorch.
#include <torch/script.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "findings.h"
#include "probe.h"

namespace torchlint::probe {

// The model's parameters, buffers and modules, as the summary reports them.
struct ModelInventory {
  int64_t parameters = 0;            // elements, tied weights counted once
  int64_t trainable_parameters = 0;  // of those, requires_grad
  int64_t parameter_tensors = 0;
  int64_t trainable_tensors = 0;
  uint64_t parameter_bytes = 0;
  uint64_t trainable_bytes = 0;  // what gradients and optimizer state are sized by
  int64_t buffers = 0;           // tensors
  uint64_t buffer_bytes = 0;
  int64_t tied_tensors = 0;                        // parameter names that share another one's storage
  std::map<std::string, uint64_t> bytes_by_dtype;  // parameters and buffers
  int64_t modules = 0;
  std::vector<std::string> modules_in_train_mode;  // "(root)", "encoder.drop", ...
  std::map<std::string, int64_t> layer_kinds;      // "Conv2d": 3, "Dropout": 1, ...
  std::vector<std::string> device_constants;       // devices baked into the forward graph
  bool has(std::string_view kind_prefix) const;    // has("Dropout"), has("BatchNorm"), has("Conv")
  Json to_json() const;
};
ModelInventory take_inventory(const torch::jit::Module& model);

// How a run's outputs differ from a reference run's (every output tensor, flattened).
struct Difference {
  bool comparable = true;  // same number, shapes and kinds of outputs
  std::string why;         // when not comparable
  bool bitwise_equal = false;
  double max_abs = 0;
  double max_rel = 0;  // max |other - ref| / max |ref|: one figure for the whole output
  double cosine = 1;
  int64_t nonfinite_reference = 0;
  int64_t nonfinite_other = 0;
  std::optional<double> argmax_agreement;  // 2-D outputs with 2+ columns (classifier logits)
  bool allclose = false;                   // |other - ref| <= atol + rtol * |ref| everywhere (see compare_outputs)
  Json to_json() const;
};
// torch.testing's fp32 defaults: rtol 1.3e-6, atol 1e-5.
Difference compare_outputs(const c10::IValue& reference, const c10::IValue& other, double rtol = 1.3e-6,
                           double atol = 1e-5);

// Every tensor of an output: tensors, tuples, lists and dict values, depth first.
std::vector<at::Tensor> output_tensors(const c10::IValue& output);

struct LatencyStats {
  int runs = 0;
  double p50_ms = 0, p99_ms = 0, mean_ms = 0, min_ms = 0;
  double cv = 0;  // standard deviation / mean
  Json to_json() const;
};

class ProbeSession {
 public:
  ProbeSession(const ProbeOptions& options, c10::Device device, torch::jit::Module model);

  const ProbeOptions& options() const { return options_; }
  c10::Device device() const { return device_; }
  bool on_cuda() const { return device_.is_cuda(); }
  const ModelInventory& inventory() const { return inventory_; }

  // The model exactly as loaded (training flags as saved). Checks never run or change it.
  const torch::jit::Module& model() const { return model_; }
  // The model in eval mode, shared by the checks that only run it.
  torch::jit::Module& eval_model() { return eval_model_; }
  // Deep copies the checks may change (train mode, freezing, autograd state).
  torch::jit::Module eval_copy() const;
  torch::jit::Module train_copy() const;

  // Inputs at the specs' shapes, or with the batch dimension set to `batch`. The same
  // arguments always give the same values (a generator seeded from --seed).
  std::vector<c10::IValue> inputs() const { return inputs_at(std::nullopt); }
  std::vector<c10::IValue> inputs_at(std::optional<int64_t> batch) const;
  // --batch-sizes, or the specs' own batch size.
  std::vector<int64_t> batch_sizes() const;

  // One forward pass without autograd, after re-seeding every generator with --seed, so
  // runs that draw random numbers are comparable.
  c10::IValue run(torch::jit::Module& module, const std::vector<c10::IValue>& inputs) const;
  c10::IValue run(torch::jit::Module& module) const { return run(module, inputs()); }
  // A scalar to call backward() on: sum(output * R) over the floating outputs, with R a fixed
  // random tensor per output (a plain sum has zero gradient through softmax and norms).
  at::Tensor surrogate_loss(const c10::IValue& output) const;
  void reseed() const;
  void synchronize() const;

  // Times module.forward: `warmup` untimed runs, then timed runs until `runs` are done or
  // `seconds` have passed (whichever first, but never fewer than `min_runs`). CUDA events on GPU.
  LatencyStats time_forward(torch::jit::Module& module, const std::vector<c10::IValue>& inputs, int warmup, int runs,
                            double seconds, int min_runs = 10) const;

 private:
  const ProbeOptions& options_;
  c10::Device device_;
  torch::jit::Module model_;
  torch::jit::Module eval_model_;
  ModelInventory inventory_;
};

// The state a check reports into.
struct CheckRun {
  ProbeSession& session;
  CheckResult& result;
  std::vector<Finding>& findings;

  Json& figures() { return result.figures; }
  void find(std::string_view code, std::string message) {
    findings.push_back(make_finding(code, result.name, std::move(message)));
  }
  void skip(std::string reason) {
    result.status = CheckStatus::kSkipped;
    result.reason = std::move(reason);
  }
};

// The first line of an exception's message, without LibTorch's C++ backtrace.
std::string short_error(const std::exception& e);

}  // namespace torchlint::probe
