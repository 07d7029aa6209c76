// TL602 no-experiment-tracking: a training entry script whose metrics only go to the console.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "catalog.h"
#include "python/api_tables.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

// Packages whose every call is part of logging a run. Decided on the top-level package
// first: this runs on every call, and most calls are into torch itself.
bool is_tracking_package(std::string_view q) {
  size_t dot = q.find('.');
  if (dot == std::string_view::npos) return false;
  std::string_view top = q.substr(0, dot);
  if (api::tracking_packages().contains(top)) return true;
  if (!api::logger_packages().contains(top)) return false;
  static constexpr std::string_view prefixes[] = {
      "torch.utils.tensorboard.",  "lightning.pytorch.loggers.", "pytorch_lightning.loggers.",
      "lightning.fabric.loggers.", "lightning_fabric.loggers.",  "torchnet.logger.",
      "ignite.contrib.handlers.",  "ignite.handlers.",
  };
  for (auto p : prefixes) {
    if (q.starts_with(p)) return true;
  }
  return false;
}

// Trainers that log metrics by default (HF writes trainer_state.json and reports to the
// installed trackers; Lightning uses TensorBoard/CSV loggers unless `logger=False`).
bool is_logging_trainer(std::string_view q) {
  return q == "transformers.Trainer" || q == "transformers.Seq2SeqTrainer" ||
         (q.starts_with("trl.") && q.ends_with("Trainer")) || q == "lightning.Trainer" ||
         q == "lightning.pytorch.Trainer" || q == "pytorch_lightning.Trainer";
}

class NoExperimentTracking final : public Rule {
 public:
  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    const Syntax& syn = Syntax::get();
    if (ts_node_is_null(event.value) || syn.kind(event.value) != Kind::kCall) return;
    if (syn.kind(event.target) == Kind::kIdentifier && is_input_copy(ctx.text(event.value))) {
      input_copies_.insert(std::string(ctx.text(event.target)));
    }
    auto q = ctx.model().resolve_qualified_name(field(event.value, syn.fields().function));
    if (q == "accelerate.Accelerator" || q == "lightning.Fabric" || q == "lightning.fabric.Fabric" ||
        q == "lightning_fabric.Fabric") {
      runners_.insert(std::string(ctx.text(event.target)));
    }
  }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    const FunctionState& fn = model.function();
    if (fn.first_training_byte == ts_node_start_byte(call.node)) {
      if (fn.is_module_level && ts_node_is_null(first_step_)) first_step_ = call.node;
      if (!fn.is_module_level) first_steps_.try_emplace(fn.qualname, call.node);
    }
    // Only calls of this file's functions can reach a first step (first_steps_ is keyed by them).
    if (fn.is_module_level && call.qualname && call.qualname->size() > model.module_name().size() &&
        call.qualname->starts_with(model.module_name()) && (*call.qualname)[model.module_name().size()] == '.') {
      module_calls_.emplace_back(call.node, *call.qualname);
    }
    if (tracks(call, ctx)) ctx.add_fact("tracks-metrics");
    if (call.qualname && api::classify_call(*call.qualname) == ValueKind::kOptimizer) {
      ctx.add_fact(optimizes_only_input_copies(call, ctx) ? kOptimizesInputs : kOptimizesParameters);
    }
  }

  void on_module_end(RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    if (model.is_pytest_file() || is_benchmark(model.module_name())) return;
    TSNode anchor{};
    if (model.has_main_guard()) {
      anchor = field(model.main_guard_node(), Syntax::get().fields().condition);
    } else if (!ts_node_is_null(first_step_)) {
      anchor = first_step_;
    } else if (auto it = std::find_if(module_calls_.begin(), module_calls_.end(),
                                      [&](const auto& c) { return first_steps_.contains(c.second); });
               it != module_calls_.end()) {
      // Module-level code calls a training function of this file: its optimizer step.
      anchor = first_steps_.at(it->second);
    } else {
      return;  // a library module: the entry script that uses it decides
    }
    using K = ProjectCondition::Kind;
    const std::vector<std::string> roots{model.function().qualname};
    // A called helper torchlint cannot see into counts as tracking when its name says it logs.
    ctx.report(anchor,
               "training entry script logs no metrics to an experiment tracker (TensorBoard, MLflow, W&B, CSV): "
               "loss and accuracy curves exist only in the console and runs cannot be compared; log them with "
               "`torch.utils.tensorboard.SummaryWriter` or your tracker of choice",
               std::nullopt,
               {{K::kReachableHas, roots, "trains", ""},
                {K::kReachableLacks, roots, "tracks-metrics", "log"},
                // Style transfer and adversarial examples optimise a copy of an input: the
                // result is that tensor, and there is no model whose training curves matter.
                {.kind = K::kProjectLacks,
                 .fact = std::string(kOptimizesInputs),
                 .unless = std::string(kOptimizesParameters)}});
  }

 private:
  // Scripts under `benchmarks/`: their result is the measurement they print (a speed, a
  // parity assert), not a run whose curves anyone compares.
  static bool is_benchmark(std::string_view module) {
    std::string dotted = "." + std::string(module) + ".";
    return dotted.find(".benchmarks.") != std::string::npos || dotted.find(".benchmark.") != std::string::npos;
  }

  static constexpr std::string_view kOptimizesInputs = "optimizes-input-copies";
  static constexpr std::string_view kOptimizesParameters = "optimizes-parameters";

  // `content.clone().requires_grad_(True)`, `img.detach().clone().requires_grad_()`: a
  // trainable copy of data, not a parameter.
  static bool is_input_copy(std::string_view value) {
    return value.find("requires_grad_(") != std::string_view::npos &&
           (value.find(".clone()") != std::string_view::npos || value.find(".detach()") != std::string_view::npos);
  }

  // `torch.optim.Adam([target])` where every element is an input copy (or written as one
  // in place: `LBFGS([img.clone().requires_grad_()])`).
  bool optimizes_only_input_copies(const CallEvent& call, RuleContext& ctx) const {
    const Syntax& syn = Syntax::get();
    TSNode params = call.keyword("params", ctx.model().source());
    if (ts_node_is_null(params)) params = call.positional(0);
    if (ts_node_is_null(params) || std::string_view(ts_node_type(params)) != "list") return false;
    uint32_t n = ts_node_named_child_count(params);
    if (n == 0) return false;
    for (uint32_t i = 0; i < n; ++i) {
      TSNode element = ts_node_named_child(params, i);
      std::string_view text = ctx.text(element);
      bool copy =
          syn.kind(element) == Kind::kIdentifier ? input_copies_.contains(std::string(text)) : is_input_copy(text);
      if (!copy) return false;
    }
    return true;
  }

  bool tracks(const CallEvent& call, RuleContext& ctx) const {
    const SemanticModel& model = ctx.model();
    if (call.qualname) {
      const std::string& q = *call.qualname;
      if (is_tracking_package(q) || q == "csv.writer" || q == "csv.DictWriter" || q == "json.dump") return true;
      // TensorFlow's summary writer (TensorBoard from a TF install).
      if (q.starts_with("tensorflow.summary.") || q.starts_with("tf.summary.")) return true;
      if (is_logging_trainer(q)) {
        TSNode logger = call.keyword("logger", model.source());
        return ts_node_is_null(logger) || Syntax::get().kind(logger) != Kind::kFalse;
      }
      if (q == "accelerate.Accelerator") {
        TSNode with = call.keyword("log_with", model.source());
        return !ts_node_is_null(with) && Syntax::get().kind(with) != Kind::kNone;
      }
    }
    if (api::tracking_methods().contains(call.method)) return true;
    // `f.write(json.dumps(log_stats) + "\n")` every epoch: a JSON-lines metrics log (once,
    // outside a loop, it is the run's configuration).
    if (call.method == "write" && call.arg_count > 0 && ctx.model().loop_depth() > 0 &&
        ctx.text(call.arguments).find("json.dumps(") != std::string_view::npos) {
      return true;
    }
    if (call.method == "log" && !ts_node_is_null(call.receiver)) {
      std::string_view receiver = ctx.text(call.receiver);
      // `self.log(...)` in a LightningModule, `accelerator.log(...)`, `fabric.log(...)`.
      if (receiver == "self" || runners_.contains(std::string(receiver))) return true;
    }
    return false;
  }

  TSNode first_step_{};
  std::unordered_set<std::string> runners_;
  std::unordered_set<std::string> input_copies_;
  std::vector<std::pair<TSNode, std::string>> module_calls_;
  std::unordered_map<std::string, TSNode> first_steps_;  // function -> its first optimizer step
};

}  // namespace
}  // namespace python

python::RuleEntry no_experiment_tracking_rule() {
  return python::rule_entry<python::NoExperimentTracking>(catalog_entry("TL602"));
}

}  // namespace torchlint
