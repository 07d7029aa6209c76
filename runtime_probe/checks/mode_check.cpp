// mode: is a model meant for inference in eval mode, and what does training mode change?
// Train-mode runs use a deep copy: a training forward updates BatchNorm statistics.
#include "checks.h"

namespace torchlint::probe {

namespace {

// Layers whose forward depends on self.training.
bool is_mode_dependent_layer(const std::string& kind) {
  for (std::string_view prefix :
       {"Dropout", "AlphaDropout", "FeatureAlphaDropout", "BatchNorm", "SyncBatchNorm", "InstanceNorm", "RReLU"}) {
    if (kind.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string first_names(const std::vector<std::string>& names, size_t n) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < n; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > n) out += ", ...";
  return out;
}

}  // namespace

void mode_check(CheckRun& run) {
  ProbeSession& s = run.session;
  const ModelInventory& inv = s.inventory();
  Json mode_layers = Json::object();
  for (const auto& [kind, n] : inv.layer_kinds) {
    if (is_mode_dependent_layer(kind)) mode_layers[kind] = n;
  }
  run.figures()["modules"] = inv.modules;
  run.figures()["modules_in_train_mode"] = inv.modules_in_train_mode;
  run.figures()["mode_dependent_layers"] = mode_layers;

  std::optional<Difference> train_vs_eval;
  try {
    torch::jit::Module train = s.train_copy();
    train_vs_eval = compare_outputs(s.run(s.eval_model()), s.run(train));
    run.figures()["train_vs_eval"] = train_vs_eval->to_json();
  } catch (const std::exception& e) {
    run.figures()["train_vs_eval"] = Json{{"error", short_error(e)}};
  }
  // Outputs that change with self.training although no known layer reads it: scripted code
  // branches on it (a custom dropout, an auxiliary head).
  run.figures()["training_flag_read_by_code"] =
      train_vs_eval && train_vs_eval->comparable && !train_vs_eval->bitwise_equal && mode_layers.empty();

  run.result.headline = inv.modules_in_train_mode.empty()
                            ? "all " + std::to_string(inv.modules) + " modules in eval mode"
                            : std::to_string(inv.modules_in_train_mode.size()) + " of " + std::to_string(inv.modules) +
                                  " modules in training mode";
  if (train_vs_eval && train_vs_eval->comparable) {
    run.result.headline += ", train vs eval max |difference| " + format_number(train_vs_eval->max_abs, 2);
  }
  if (inv.modules_in_train_mode.empty()) return;
  std::string message = std::to_string(inv.modules_in_train_mode.size()) + " of " + std::to_string(inv.modules) +
                        " modules are in training mode (" + first_names(inv.modules_in_train_mode, 4) + ")";
  if (train_vs_eval && train_vs_eval->comparable && !train_vs_eval->bitwise_equal) {
    message += ": their outputs differ from eval mode by up to " + format_number(train_vs_eval->max_abs);
  } else if (!mode_layers.empty()) {
    message += ": dropout and normalization layers run as in training";
  } else {
    message += ": no layer reads the flag today, but torch.jit.freeze refuses the model";
  }
  run.find(kSavedInTrainMode, message + "; call model.eval() before saving it for inference");
}

}  // namespace torchlint::probe
