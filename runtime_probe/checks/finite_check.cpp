// finite: NaN/Inf in the eval outputs and in the gradients of one backward pass, with the
// op that produced the first one (DeepLocalize stops at the first layer that goes
// non-finite; a RecordFunction observer does the same per operator), plus gradient health
// figures with AutoTrainer's thresholds.
#include <torch/csrc/autograd/anomaly_mode.h>

#include <cmath>

#include "instrumentation.h"
#include "checks.h"

namespace torchlint::probe {

namespace {

int64_t count_nonfinite(const c10::IValue& output) {
  int64_t n = 0;
  for (const at::Tensor& t : output_tensors(output)) {
    if (at::isFloatingType(t.scalar_type())) n += t.numel() - at::isfinite(t).sum().item<int64_t>();
  }
  return n;
}

struct GradientPass {
  std::string mode;  // "train", or "eval" when a training forward fails (BatchNorm at batch 1)
  torch::jit::Module module;
  at::Tensor loss;
};

// Forward in training mode on a copy, and the surrogate loss; nothing is run backward yet.
GradientPass forward_for_gradients(const ProbeSession& s) {
  GradientPass pass{"train", s.train_copy(), {}};
  c10::IValue out;
  try {
    s.reseed();
    out = pass.module.forward(s.inputs());
  } catch (const std::exception&) {
    pass = GradientPass{"eval", s.eval_copy(), {}};
    s.reseed();
    out = pass.module.forward(s.inputs());
  }
  pass.loss = s.surrogate_loss(out);
  return pass;
}

// "Function 'LogBackward0' returned nan values in its 0th output." -> "LogBackward0"
std::string backward_function(const std::string& message) {
  auto start = message.find("Function '");
  if (start == std::string::npos) return message;
  start += 10;
  return message.substr(start, message.find('\'', start) - start);
}

}  // namespace

void finite_check(CheckRun& run) {
  ProbeSession& s = run.session;
  const c10::IValue output = s.run(s.eval_model());
  const int64_t nonfinite_outputs = count_nonfinite(output);
  run.figures()["nonfinite_outputs"] = nonfinite_outputs;
  if (nonfinite_outputs > 0) {
    std::optional<std::string> op;
    {
      const std::vector<c10::IValue> inputs = s.inputs();  // made before the observer watches
      NonFiniteOpFinder finder;
      s.run(s.eval_model(), inputs);
      op = finder.first_op();
    }
    run.figures()["first_nonfinite_op"] = op ? Json(*op) : Json(nullptr);
    run.find(kNonFiniteOutput, "the eval outputs hold " + std::to_string(nonfinite_outputs) + " NaN/Inf values" +
                                   (op ? "; the first op that produced one is `" + *op + "`" : ""));
  }

  run.result.headline = nonfinite_outputs ? "non-finite outputs" : "finite outputs";
  if (s.inventory().trainable_tensors == 0) {
    run.figures()["gradients"] = Json{{"skipped", "the model has no trainable parameter"}};
    return;
  }
  GradientPass pass = forward_for_gradients(s);
  Json g;
  g["mode"] = pass.mode;
  if (!pass.loss.defined()) {
    g["skipped"] = "no floating output depends on a trainable parameter";
    run.figures()["gradients"] = g;
    return;
  }
  pass.loss.backward();

  std::vector<std::string> unused, nonfinite;
  std::vector<double> norms;
  int64_t elements = 0, zeros = 0;
  double abs_sum = 0;
  for (const auto& p : pass.module.named_parameters(true)) {
    if (!p.value.requires_grad()) continue;
    const at::Tensor& grad = p.value.grad();
    if (!grad.defined()) {
      unused.push_back(p.name);
      continue;
    }
    const at::Tensor finite = at::isfinite(grad);
    if (!finite.all().item<bool>()) {
      nonfinite.push_back(p.name);
      continue;
    }
    const at::Tensor g64 = grad.to(at::kDouble);
    norms.push_back(g64.norm().item<double>());
    elements += grad.numel();
    zeros += (grad == 0).sum().item<int64_t>();
    abs_sum += g64.abs().sum().item<double>();
  }
  g["loss"] = pass.loss.item<double>();
  g["unused_parameters"] = unused;
  g["nonfinite_parameters"] = nonfinite;
  std::vector<std::string> health;
  if (!norms.empty()) {
    const double first = norms.front(), last = norms.back();
    const double ratio = last > 0 ? first / last : INFINITY;
    const double zero_fraction = elements ? static_cast<double>(zeros) / static_cast<double>(elements) : 0;
    const double mean_abs = elements ? abs_sum / static_cast<double>(elements) : 0;
    g["first_layer_norm"] = first;
    g["last_layer_norm"] = last;
    g["first_to_last_ratio"] = std::isfinite(ratio) ? Json(ratio) : Json(nullptr);
    g["zero_fraction"] = zero_fraction;
    g["mean_abs"] = mean_abs;
    // AutoTrainer's symptoms (vanishing: ratio < 1e-3 with a tiny first-layer norm;
    // exploding: ratio > 70; dying ReLU: 70 % zero gradients) and DeepDiagnosis' mean |g|.
    if (ratio < 1e-3 && first < 1e-4) health.push_back("vanishing gradients (first/last layer norm ratio < 1e-3)");
    if (ratio > 70) health.push_back("exploding gradients (first/last layer norm ratio > 70)");
    if (zero_fraction >= 0.7) health.push_back("70 % or more of the gradient entries are zero (dying ReLU?)");
    if (mean_abs < 1e-7) health.push_back("mean |gradient| below 1e-7");
  }
  if (!unused.empty()) health.push_back(std::to_string(unused.size()) + " trainable parameters get no gradient");
  g["health"] = health;

  if (!nonfinite.empty() && nonfinite_outputs == 0) {
    // Anomaly mode makes the engine stop at the first backward function returning NaN.
    std::string where;
    try {
      torch::autograd::DetectAnomalyGuard anomaly(/*check_nan=*/true);
      GradientPass again = forward_for_gradients(s);
      again.loss.backward();
    } catch (const std::exception& e) {
      where = backward_function(short_error(e));
    }
    g["first_nonfinite_backward"] = where.empty() ? Json(nullptr) : Json(where);
    run.find(kNonFiniteOutput, "the gradients of " + std::to_string(nonfinite.size()) +
                                   " parameters hold NaN/Inf (first: " + nonfinite.front() + ")" +
                                   (where.empty() ? "" : "; backward first goes non-finite in `" + where + "`"));
  }
  run.figures()["gradients"] = g;
  run.result.headline = std::string(nonfinite_outputs ? "non-finite outputs" : "finite outputs") +
                        (nonfinite.empty() ? ", finite gradients" : ", non-finite gradients") +
                        (health.empty() ? "" : ", " + health.front());
}

}  // namespace torchlint::probe
