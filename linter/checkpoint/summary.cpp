#include "summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace torchlint::ckpt {

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string grouped(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

std::string shape_string(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Safety assess_file_safety(const CheckpointFile& file, bool run_torchscript_code) {
  Safety s;
  size_t dangerous = 0, unreviewed = 0, unknown = 0;
  std::string first_danger, first_unreviewed, first_unknown;
  for (const auto& scan : file.pickles) {
    for (const auto& g : scan->safety.globals) {
      if (g.verdict == Verdict::kDangerous) {
        if (!dangerous++) first_danger = g.display() + ": " + g.reason;
      } else if (g.verdict == Verdict::kUnreviewed) {
        if (!unreviewed++) first_unreviewed = g.display();
      } else {
        if (!unknown++) first_unknown = g.display();
      }
    }
    for (const auto& h : scan->safety.hazards) {
      if (hazard_is_dangerous(h.kind)) {
        if (!dangerous++) first_danger = h.detail;
      } else if (!unknown++) {
        first_unknown = h.detail;
      }
    }
    if (!scan->safety.outside_subset.empty() && !unknown++) first_unknown = "opcodes outside torch's subset";
  }
  if (dangerous) {
    s.level = SafetyLevel::kDangerous;
    s.text = "DANGEROUS: loading it with weights_only=False runs code: " + first_danger +
             (dangerous + unreviewed > 1 ? " and " + std::to_string(dangerous + unreviewed - 1) + " more" : "");
    return s;
  }
  if (unreviewed) {
    // Not known to be bad, and not known to be safe: the verdict is the allowlist's.
    s.level = SafetyLevel::kDangerous;
    s.text =
        "UNSAFE: loading it with weights_only=False runs a callable that is not known to be safe: " + first_unreviewed +
        (unreviewed > 1 ? " and " + std::to_string(unreviewed - 1) + " more" : "");
    return s;
  }
  if (file.fatal()) {
    s.level = SafetyLevel::kIncomplete;
    s.text = "unknown: the file could not be read completely (see TL813)";
    return s;
  }
  if (file.is_torchscript() && !run_torchscript_code) {
    s.level = SafetyLevel::kDangerous;
    s.text =
        "UNSAFE: TorchScript runs its code when loaded (torch.jit.load; weights_only gives no protection before "
        "torch 2.6), and that code is not known to be safe";
    return s;
  }
  if (unknown) {
    s.level = SafetyLevel::kNeedsTrust;
    s.text = "needs trust: torch.load(weights_only=True) refuses it (" + first_unknown +
             (unknown > 1 ? " and " + std::to_string(unknown - 1) + " more" : "") +
             "); no code found (only reviewed reconstructors)";
    return s;
  }
  if (file.pickles.empty()) {
    s.level = SafetyLevel::kNoCode;
    s.text = "safe: no pickle, nothing in it can run code";
    return s;
  }
  s.level = SafetyLevel::kSafe;
  s.text = file.format == Format::kRawPickle || file.format == Format::kNpz || file.format == Format::kNpy
               ? "safe: only allowlisted globals (torch's weights_only policy)"
               : "safe: torch.load(weights_only=True) loads it; nothing in it runs code";
  return s;
}

Safety assess_checkpoint_safety(const Checkpoint& checkpoint) {
  Safety worst;
  bool first = true;
  auto rank = [](SafetyLevel l) {
    switch (l) {
      case SafetyLevel::kNoCode:
        return 0;
      case SafetyLevel::kSafe:
        return 1;
      case SafetyLevel::kNeedsTrust:
        return 2;
      case SafetyLevel::kIncomplete:
        return 3;
      case SafetyLevel::kDangerous:
        return 4;
    }
    return 0;
  };
  for (const CheckpointFile* f : checkpoint.files) {
    Safety s = assess_file_safety(*f);
    if (checkpoint.directory) s.text = std::string(f->display.substr(f->display.find_last_of('/') + 1)) + ": " + s.text;
    if (first || rank(s.level) > rank(worst.level)) worst = s;
    first = false;
  }
  return worst;
}

namespace {

std::string paint(bool color, const char* code, const std::string& text) {
  return color ? std::string("\x1b[") + code + "m" + text + "\x1b[0m" : text;
}

class Renderer {
 public:
  Renderer(const Checkpoint& cp, const TrainingState& training, const SummaryOptions& options)
      : cp_(cp), training_(training), options_(options) {}

  std::string render() {
    out_ << paint(options_.color, "1", cp_.display) << (cp_.directory ? "/  (checkpoint directory)" : "") << '\n';
    if (cp_.directory) {
      for (size_t i = 0; i < cp_.files.size(); ++i) {
        const CheckpointFile& f = *cp_.files[i];
        std::string name = f.display.substr(f.display.find_last_of('/') + 1);
        line("file", name + "  " + human_bytes(f.size) + ", " + std::string(format_name(f.format)) +
                         (cp_.roles[i].empty() ? "" : "  [" + cp_.roles[i] + "]"));
      }
      if (!cp_.other_files.empty()) {
        std::string others;
        for (size_t i = 0; i < cp_.other_files.size() && i < 8; ++i) others += (i ? ", " : "") + cp_.other_files[i];
        if (cp_.other_files.size() > 8) others += ", ...";
        line("also", others);
      }
    } else {
      const CheckpointFile& f = *cp_.files.front();
      line("format", std::string(format_name(f.format)) + (f.format_detail.empty() ? "" : ": " + f.format_detail));
      line("file", human_bytes(f.size) + (f.extension.empty() ? ", no extension" : ", extension " + f.extension));
      for (const auto& h : f.version_hints) line("torch", h);
      contents(f);
    }
    tensors();
    training();
    line("safety", assess_checkpoint_safety(cp_).text);
    return out_.str();
  }

 private:
  void line(const std::string& label, const std::string& text) {
    std::string l = label;
    l.resize(std::max<size_t>(l.size(), 11), ' ');
    out_ << "  " << paint(options_.color, "36", l) << text << '\n';
  }

  std::string describe(const CheckpointFile& f, ValueRef v) {
    if (const TensorInfo* t = f.tensor(v)) {
      return "tensor " + std::string(dtype_info(t->dtype).name) + " " + shape_string(t->shape);
    }
    if (is_state_dict(f, v)) {
      uint64_t elements = 0, bytes = 0;
      size_t n = 0;
      auto items = v.mapping_items();
      for (size_t i = 1; i < items.size(); i += 2) {
        if (const TensorInfo* t = f.tensor(ValueRef(v.graph(), items[i]))) {
          ++n;
          elements += t->numel;
          bytes += t->nbytes();
        }
      }
      return "state_dict: " + grouped(n) + " tensors, " + grouped(elements) + " elements, " + human_bytes(bytes);
    }
    if (is_optimizer_state(v)) {
      for (const auto& o : training_.optimizers) {
        if (o.file == &f)
          return "optimizer state: " + o.kind + ", " + std::to_string(o.groups) + " param group" +
                 (o.groups == 1 ? "" : "s") + ", " + grouped(o.params) + " params";
      }
      return "optimizer state";
    }
    if (is_scheduler_state(v)) {
      auto last = v.get("last_epoch").as_int();
      return "scheduler state" + (last ? " (last_epoch " + std::to_string(*last) + ")" : std::string());
    }
    return v.describe();
  }

  void contents(const CheckpointFile& f) {
    ValueRef root = f.root();
    if (!root) {
      if (!f.tensors.empty()) {
        line("contents", grouped(f.tensors.size()) + " tensors" + (f.metadata.empty() ? "" : ", metadata:"));
        for (size_t i = 0; i < f.metadata.size() && i < 8; ++i)
          out_ << "    " << f.metadata[i].first << " = " << f.metadata[i].second.substr(0, 60) << '\n';
      }
      return;
    }
    line("contents", describe(f, root));
    if (!root.is_mapping() || is_state_dict(f, root)) return;
    auto items = root.mapping_items();
    size_t width = 0;
    for (size_t i = 0; i + 1 < items.size() && i / 2 < options_.max_keys; i += 2) {
      if (auto k = ValueRef(root.graph(), items[i]).as_str()) width = std::max(width, std::min<size_t>(k->size(), 32));
    }
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      if (i / 2 == options_.max_keys) {
        out_ << "    ... " << (items.size() / 2 - options_.max_keys) << " more keys\n";
        break;
      }
      ValueRef key(root.graph(), items[i]);
      std::string k = key.as_str() ? std::string(*key.as_str()) : key.describe();
      if (k.size() > 32) k = k.substr(0, 29) + "...";
      k.resize(std::max(width, k.size()), ' ');
      out_ << "    " << k << "  " << describe(f, ValueRef(root.graph(), items[i + 1])) << '\n';
    }
  }

  void tensors() {
    std::map<DType, uint64_t> bytes_by_dtype;
    uint64_t count = 0, elements = 0, bytes = 0;
    struct Big {
      const CheckpointFile* file;
      size_t index;
      size_t order;  // across the checkpoint's files
    };
    std::vector<Big> all;
    size_t tensor_order = 0;
    size_t nonfinite = 0, scanned = 0;
    bool any_scan = false;
    for (const CheckpointFile* f : cp_.files) {
      for (size_t i = 0; i < f->tensors.size(); ++i) {
        const TensorInfo& t = f->tensors[i];
        ++count;
        elements += t.numel;
        bytes += t.nbytes();
        bytes_by_dtype[t.dtype] += t.nbytes();
        // Only the largest few are kept (a checkpoint may have 200 000 tensors).
        Big b{f, i, tensor_order++};
        auto bigger = [](const Big& x, const Big& y) {
          uint64_t p = x.file->tensors[x.index].nbytes(), q = y.file->tensors[y.index].nbytes();
          return p != q ? p > q : x.order < y.order;  // ties in file order
        };
        if (all.size() < options_.largest) {
          all.insert(std::upper_bound(all.begin(), all.end(), b, bigger), b);
        } else if (!all.empty() && bigger(b, all.back())) {
          all.pop_back();
          all.insert(std::upper_bound(all.begin(), all.end(), b, bigger), b);
        }
        if (f->values_scanned && f->stats[i].scanned) {
          any_scan = true;
          ++scanned;
          if (f->stats[i].nan || f->stats[i].inf) ++nonfinite;
        }
      }
    }
    if (!count) return;
    std::string by;
    std::vector<std::pair<uint64_t, DType>> order;
    for (auto [d, b] : bytes_by_dtype) order.emplace_back(b, d);
    std::sort(order.rbegin(), order.rend());
    for (auto [b, d] : order) by += (by.empty() ? "" : ", ") + std::string(dtype_info(d).name) + " " + human_bytes(b);
    line("tensors",
         grouped(count) + " tensors, " + grouped(elements) + " elements, " + human_bytes(bytes) + " (" + by + ")");
    for (const auto& w : training_.weights) {
      line("parameters", grouped(w.elements) + " in `" + w.where + "` (" + grouped(w.tensors.size()) + " tensors" +
                             (w.pickled_class.empty() ? "" : ", pickled " + w.pickled_class) + ")");
    }
    size_t k = all.size();  // sorted, largest first
    for (size_t i = 0; i < k; ++i) {
      const TensorInfo& t = all[i].file->tensors[all[i].index];
      std::string text = t.name + "  " + std::string(dtype_info(t.dtype).name) + " " + shape_string(t.shape) + "  " +
                         human_bytes(t.nbytes());
      if (all[i].file->values_scanned) {
        const ValueStats& s = all[i].file->stats[all[i].index];
        if (s.scanned) {
          char buf[96];
          std::snprintf(buf, sizeof buf, "  min %.4g max %.4g mean %.4g", s.min, s.max, s.mean);
          text += buf;
          if (s.nan || s.inf) text += "  NaN " + std::to_string(s.nan) + " Inf " + std::to_string(s.inf);
        }
      }
      line(i == 0 ? "largest" : "", text);
    }
    if (any_scan) {
      line("values", "scanned " + grouped(scanned) + " floating tensors: " +
                         (nonfinite ? paint(options_.color, "1;31", std::to_string(nonfinite) + " hold NaN or Inf")
                                    : std::string("all finite")));
    }
  }

  void training() {
    const TrainingState& t = training_;
    if (t.weights.empty() && t.optimizers.empty() && t.schedulers.empty() && t.counters.empty()) {
      line("training", "no model weights or training state recognised");
      return;
    }
    auto yes_no = [](bool b) { return b ? std::string("yes") : std::string("no"); };
    std::string text = "weights " + yes_no(!t.weights.empty());
    text += ", optimizer " + (t.optimizers.empty() ? std::string("no") : "yes (" + t.optimizers.front().kind + ")");
    text += ", scheduler " + (t.schedulers.empty() ? std::string(t.schedule_hint ? "no (a schedule was in use)" : "no")
                                                   : std::string("yes"));
    text += ", epoch/step " + (t.counters.empty()
                                   ? std::string("no")
                                   : "yes (" + t.counters.front().key + " = " + t.counters.front().value + ")");
    if (!t.scalers.empty()) text += ", AMP scaler yes";
    line("training", text);
    if (!t.producer.empty()) line("", "layout of " + t.producer);
    if (t.training) {
      line("", t.resumable()
                   ? paint(options_.color, "32", "training can resume from it")
                   : paint(options_.color, "33", "training cannot resume exactly from it (see the findings)"));
    } else if (!t.weights.empty()) {
      line("", "a weights file (not a training checkpoint)");
    }
  }

  const Checkpoint& cp_;
  const TrainingState& training_;
  const SummaryOptions& options_;
  std::ostringstream out_;
};

}  // namespace

std::string render_summary(const Checkpoint& checkpoint, const TrainingState& training, const SummaryOptions& options) {
  return Renderer(checkpoint, training, options).render();
}

}  // namespace torchlint::ckpt
