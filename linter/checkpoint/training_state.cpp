#include "training_state.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "core/text.h"

namespace torchlint::ckpt {

namespace {

bool one_of(std::string_view key, std::initializer_list<std::string_view> names) {
  std::string k = ascii_lower(key);
  return std::any_of(names.begin(), names.end(), [&](std::string_view n) { return k == n; });
}

bool is_progress_key(std::string_view key) {
  return one_of(key, {"epoch",       "epochs",    "epochs_run", "finished_epoch", "current_epoch", "start_epoch",
                      "last_epoch",  "iter_num",  "iter",       "iters",          "iteration",     "iterations",
                      "global_step", "step",      "steps",      "num_updates",    "n_iter",        "total_steps",
                      "train_step",  "num_steps", "updates",    "global_iter"});
}

bool is_metric_key(std::string_view key) {
  return one_of(key, {"best_acc1", "best_acc", "best_accuracy", "best_val_loss", "best_loss", "best_metric", "metric",
                      "loss", "val_loss", "accuracy", "acc", "best_score", "score", "best_prec1", "best_fitness"});
}

bool is_scalar(ValueRef v) { return v.is_number(); }

bool is_weights_key(std::string_view key) {
  return one_of(
      key, {"model_state_dict", "state_dict",    "model",   "model_state", "state_dict_ema", "model_ema",  "ema",
            "ema_state_dict",   "net",           "network", "weights",     "params",         "parameters", "module",
            "generator",        "discriminator", "netg",    "netd",        "encoder",        "decoder",    "student",
            "teacher",          "backbone"});
}

// Parameter names of a module's state_dict are dotted paths ("fc.weight"); a small dict
// of statistics ({"mean": t, "std": t}) is not model weights.
bool has_parameter_names(ValueRef v) {
  auto items = v.mapping_items();
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    auto k = ValueRef(v.graph(), items[i]).as_str();
    if (k && k->find('.') != std::string_view::npos) return true;
  }
  return false;
}

std::string short_value(const CheckpointFile& file, ValueRef v) {
  if (const TensorInfo* t = file.tensor(v)) return "tensor (" + std::string(dtype_info(t->dtype).name) + ")";
  if (auto i = v.as_int()) return std::to_string(*i);
  if (auto f = v.as_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", *f);
    return buf;
  }
  return v.describe();
}

std::string optimizer_kind(ValueRef opt) {
  ValueRef state = opt.get("state");
  auto items = state.mapping_items();
  std::set<std::string> keys;
  for (size_t i = 1; i < items.size() && i < 16; i += 2) {
    ValueRef per_param(state.graph(), items[i]);
    auto inner = per_param.mapping_items();
    for (size_t k = 0; k < inner.size(); k += 2) {
      if (auto s = ValueRef(state.graph(), inner[k]).as_str()) keys.insert(std::string(*s));
    }
  }
  if (keys.contains("exp_avg") && keys.contains("max_exp_avg_sq")) return "Adam/AdamW (amsgrad)";
  if (keys.contains("mu_product")) return "NAdam";
  if (keys.contains("exp_avg") && keys.contains("exp_avg_sq")) return "Adam/AdamW";
  if (keys.contains("exp_inf")) return "Adamax";
  if (keys.contains("momentum_buffer")) return "SGD with momentum";
  if (keys.contains("square_avg")) return "RMSprop";
  if (keys.contains("acc_delta")) return "Adadelta";
  if (keys.contains("sum")) return "Adagrad";
  if (keys.contains("prev")) return "Rprop";
  if (keys.contains("old_dirs")) return "LBFGS";
  ValueRef group = opt.get("param_groups")[0];
  if (group.is_mapping()) {
    if (group.get("betas")) return "Adam family (no state yet)";
    if (group.get("nesterov") || group.get("momentum")) {
      auto m = group.get("momentum").as_float();
      return m && *m != 0 ? "SGD with momentum (no state yet)" : "SGD";
    }
  }
  return "unknown optimizer";
}

class Analyzer {
 public:
  explicit Analyzer(TrainingState& out) : out_(out) {}

  void file(const CheckpointFile& f, const std::string& role, const std::string& label) {
    file_ = &f;
    if (f.format == Format::kSafetensors || f.format == Format::kNpy) {
      if (!f.tensors.empty()) add_flat_weights(f, label);
      return;
    }
    ValueRef root = f.root();
    if (!root) return;
    if (classify(root, label.empty() ? "(file)" : label, role)) return;
    if (root.is_mapping()) {
      auto items = root.mapping_items();
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        ValueRef key(root.graph(), items[i]);
        auto k = key.as_str();
        if (!k) continue;
        std::string where = label.empty() ? std::string(*k) : label + "." + std::string(*k);
        member(*k, ValueRef(root.graph(), items[i + 1]), where, 0);
      }
      producer(root);
    }
  }

 private:
  // The whole value is one recognisable thing.
  bool classify(ValueRef v, const std::string& where, const std::string& role, bool any_weights = true) {
    if (is_state_dict(*file_, v) && (any_weights || has_parameter_names(v))) {
      add_weights(v, where);
      return true;
    }
    if (is_optimizer_state(v)) {
      add_optimizer(v, where);
      return true;
    }
    if (is_scheduler_state(v)) {
      add_scheduler(v, where);
      return true;
    }
    if (v.is_mapping() && v.get("scale") && (v.get("growth_factor") || v.get("_growth_tracker"))) {
      out_.scalers.push_back(where);
      return true;
    }
    if (role == "rng" || (v.is_mapping() && v.get("python") && (v.get("cpu") || v.get("numpy")))) {
      out_.rng.push_back(where);
      return true;
    }
    if (const CallRecord* call = v.call(); call && !v.is_mapping()) {
      ValueRef state(v.graph(), call->state);
      if (state.is_mapping() && (state.get("_parameters") || state.get("_modules"))) {
        WeightsInfo w;
        w.where = where;
        w.file = file_;
        const GlobalName* cls = v.callee();
        w.pickled_class = cls ? cls->qualified() : "object";
        for (uint32_t i = 0; i < file_->tensors.size(); ++i) {
          const TensorInfo& t = file_->tensors[i];
          w.tensors.push_back(i);
          w.keys.push_back(t.name);
          w.elements += t.numel;
          w.bytes += t.nbytes();
        }
        out_.weights.push_back(std::move(w));
        return true;
      }
    }
    return false;
  }

  void member(std::string_view key, ValueRef v, const std::string& where, int depth) {
    if (classify(v, where, "", is_weights_key(key))) return;
    if (v.kind() == ValueKind::kList || v.kind() == ValueKind::kTuple) {
      // Lightning: optimizer_states / lr_schedulers are lists of state dicts.
      bool any = false;
      for (size_t i = 0; i < v.size() && i < 64; ++i) {
        ValueRef item = v[i];
        if (is_optimizer_state(item)) {
          add_optimizer(item, where + "[" + std::to_string(i) + "]");
          any = true;
        } else if (is_scheduler_state(item)) {
          add_scheduler(item, where + "[" + std::to_string(i) + "]");
          any = true;
        }
      }
      if (!any && one_of(key, {"lr_schedulers", "schedulers"})) {
        out_.schedule_hint = true;
        out_.schedule_hint_where = where;
      }
      if (any || v.size() == 0) return;
    }
    if (is_progress_key(key) && (is_scalar(v) || file_->tensor(v))) {
      out_.counters.push_back({where, short_value(*file_, v)});
      return;
    }
    if (one_of(key, {"loops"}) && v.is_mapping()) {
      out_.counters.push_back({where, "Lightning loop progress"});
      return;
    }
    if (is_metric_key(key) && (is_scalar(v) || file_->tensor(v))) {
      out_.metrics.push_back({where, short_value(*file_, v)});
      return;
    }
    if (one_of(key,
               {"rng_state", "rng_states", "random_state", "random_states", "torch_rng_state", "cuda_rng_state"})) {
      out_.rng.push_back(where);
      return;
    }
    // A nested dict of bookkeeping ({"meta": {"epoch": 3}}): look one level down for
    // counters and training state.
    if (v.is_mapping() && depth < 2) {
      auto items = v.mapping_items();
      for (size_t i = 0; i + 1 < items.size() && i < 512; i += 2) {
        auto k = ValueRef(v.graph(), items[i]).as_str();
        if (k) member(*k, ValueRef(v.graph(), items[i + 1]), where + "." + std::string(*k), depth + 1);
      }
    }
  }

  void add_weights(ValueRef v, const std::string& where) {
    WeightsInfo w;
    w.where = where;
    w.file = file_;
    auto items = v.mapping_items();
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      const TensorInfo* t = file_->tensor(ValueRef(v.graph(), items[i + 1]));
      if (!t) continue;
      w.tensors.push_back(static_cast<uint32_t>(t - file_->tensors.data()));
      w.keys.emplace_back(*ValueRef(v.graph(), items[i]).as_str());
      w.elements += t->numel;
      w.bytes += t->nbytes();
    }
    out_.weights.push_back(std::move(w));
  }

  void add_flat_weights(const CheckpointFile& f, const std::string& label) {
    WeightsInfo w;
    w.where = label.empty() ? "(file)" : label;
    w.file = &f;
    for (uint32_t i = 0; i < f.tensors.size(); ++i) {
      w.tensors.push_back(i);
      w.keys.push_back(f.tensors[i].name);
      w.elements += f.tensors[i].numel;
      w.bytes += f.tensors[i].nbytes();
    }
    out_.weights.push_back(std::move(w));
  }

  void add_optimizer(ValueRef v, const std::string& where) {
    OptimizerInfo o;
    o.where = where;
    o.file = file_;
    o.kind = optimizer_kind(v);
    o.states = v.get("state").mapping_size();
    ValueRef groups = v.get("param_groups");
    o.groups = groups.size();
    for (size_t i = 0; i < groups.size(); ++i) {
      ValueRef g = groups[i];
      o.params += g.get("params").size();
      if (g.get("initial_lr")) o.initial_lr = true;
      if (!o.lr) o.lr = g.get("lr").as_float();
    }
    if (o.initial_lr && !out_.schedule_hint) {
      out_.schedule_hint = true;
      out_.schedule_hint_where = where + ".param_groups[*].initial_lr";
    }
    out_.optimizers.push_back(std::move(o));
  }

  void add_scheduler(ValueRef v, const std::string& where) {
    SchedulerInfo s;
    s.where = where;
    s.last_epoch = v.get("last_epoch").as_int();
    out_.schedulers.push_back(std::move(s));
  }

  void producer(ValueRef root) {
    if (!out_.producer.empty()) return;
    auto has = [&](std::string_view k) { return root.get(k).valid(); };
    if (has("pytorch-lightning_version") || has("lightning_version"))
      out_.producer = "PyTorch Lightning";
    else if (has("model_args") && has("iter_num"))
      out_.producer = "nanoGPT";
    else if (has("arch") && has("version") && has("args"))
      out_.producer = "timm";
    else if (has("arch") && has("best_acc1"))
      out_.producer = "pytorch/examples imagenet";
    else if (has("MODEL_STATE") && has("EPOCHS_RUN"))
      out_.producer = "PyTorch DDP tutorial";
    else if (has("model_state") && has("finished_epoch"))
      out_.producer = "pytorch/examples minGPT-ddp";
    else if (has("model_state_dict") && has("optimizer_state_dict"))
      out_.producer = "PyTorch tutorial (general checkpoint)";
  }

  TrainingState& out_;
  const CheckpointFile* file_ = nullptr;
};

bool named_like_training_checkpoint(const std::string& path) {
  std::string name = ascii_lower(std::filesystem::path(path).filename().string());
  if (name.ends_with(".ckpt")) return true;
  for (const char* word : {"checkpoint", "ckpt", "snapshot", "resume", "last"}) {
    if (name.find(word) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

bool is_state_dict(const CheckpointFile& file, ValueRef v) {
  if (!v.is_mapping()) return false;
  auto items = v.mapping_items();
  size_t tensors = 0;
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    auto key = ValueRef(v.graph(), items[i]).as_str();
    if (!key) return false;
    ValueRef value(v.graph(), items[i + 1]);
    if (file.tensor(value)) {
      ++tensors;
    } else if (!(key->ends_with("_extra_state") || value.is_none())) {
      return false;
    }
  }
  return tensors > 0;
}

bool is_optimizer_state(ValueRef v) {
  return v.is_mapping() && v.get("state").is_mapping() && (v.get("param_groups").kind() == ValueKind::kList);
}

bool is_scheduler_state(ValueRef v) {
  return v.is_mapping() && !v.get("state") &&
         (v.get("last_epoch").is_int() || v.get("_step_count").is_int() || v.get("base_lrs"));
}

TrainingState analyze_training_state(const Checkpoint& checkpoint) {
  TrainingState out;
  Analyzer analyzer(out);
  for (size_t i = 0; i < checkpoint.files.size(); ++i) {
    const CheckpointFile& f = *checkpoint.files[i];
    std::string label = checkpoint.directory ? std::filesystem::path(f.display).filename().string() : "";
    analyzer.file(f, checkpoint.roles[i], label);
  }
  if (checkpoint.directory) {
    if (checkpoint.has_trainer_state) {
      if (checkpoint.trainer_global_step)
        out.counters.push_back({"trainer_state.json global_step", std::to_string(*checkpoint.trainer_global_step)});
      if (checkpoint.trainer_epoch) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4g", *checkpoint.trainer_epoch);
        out.counters.push_back({"trainer_state.json epoch", buf});
      }
      if (out.producer.empty()) out.producer = "Hugging Face Trainer";
    }
    out.training = true;
    out.training_reason = checkpoint.has_trainer_state ? "a Trainer checkpoint directory (trainer_state.json)"
                                                       : "a checkpoint directory with optimizer or scheduler files";
    return out;
  }
  bool has_weights = !out.weights.empty();
  bool has_training_state = !out.optimizers.empty() || !out.schedulers.empty() || !out.counters.empty() ||
                            !out.scalers.empty() ||
                            std::any_of(out.metrics.begin(), out.metrics.end(),
                                        [](const NamedValue& m) { return m.key.find("best") != std::string::npos; });
  const CheckpointFile& f = *checkpoint.files.front();
  bool wrapped = f.root().valid() && !is_state_dict(f, f.root());
  if (has_weights && has_training_state && wrapped) {
    out.training = true;
    out.training_reason = "model weights saved together with training state";
  } else if (has_weights && wrapped && named_like_training_checkpoint(f.display)) {
    out.training = true;
    out.training_reason = "model weights in a file named like a training checkpoint";
  }
  return out;
}

}  // namespace torchlint::ckpt
