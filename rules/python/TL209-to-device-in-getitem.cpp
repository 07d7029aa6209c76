// TL209 to-device-in-getitem: a Dataset moves each sample to the GPU itself.
#include <cctype>
#include <unordered_map>
#include <unordered_set>

#include "catalog.h"
#include "python/shared/dataset.h"
#include "core/text.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

using dataset_util::derives_from_dataset;

TSNode enclosing_class_node(TSNode function_node) {
  std::vector<TSNode> path = ancestors(function_node);
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    TSNode p = *it;
    Kind k = Syntax::get().kind(p);
    if (k == Kind::kClassDefinition) return p;
    if (k == Kind::kFunctionDefinition) return {};
  }
  return {};
}

bool names_device(std::string_view name) {
  std::string n = ascii_lower(name);
  return n.find("device") != std::string::npos || n.find("gpu") != std::string::npos ||
         n.find("cuda") != std::string::npos;
}

// Whether `target` (an argument of `.to(...)` or a `device=` keyword) is a device other
// than the CPU. Dtypes, tensors (`.to(other)`) and `other.device` stay unknown: silent.
bool is_accelerator(TSNode target, const SemanticModel& model) {
  if (ts_node_is_null(target)) return false;
  const Syntax& syn = Syntax::get();
  std::string_view v;
  if (string_literal_value(target, model.source(), v)) {
    return v.starts_with("cuda") || v.starts_with("mps") || v.starts_with("xpu");
  }
  Kind k = syn.kind(target);
  if (k == Kind::kCall) {
    auto q = model.resolve_qualified_name(field(target, syn.fields().function));
    if (q != api::kTorchDevice) return false;
    TSNode args = field(target, syn.fields().arguments);
    TSNode first = ts_node_is_null(args) ? TSNode{} : ts_node_named_child(args, 0);
    if (string_literal_value(first, model.source(), v)) return !v.starts_with("cpu");
    return !ts_node_is_null(first);
  }
  if (k != Kind::kIdentifier && k != Kind::kAttribute) return false;
  if (auto q = model.resolve_qualified_name(target); q && q->starts_with("torch.")) return false;  // dtypes
  ValueInfo value = model.infer_value(target);
  if (value.kind == ValueKind::kDevice) return value.cuda || value.type != "str";
  if (value.kind != ValueKind::kUnknown) return false;
  if (k == Kind::kAttribute) {
    // `mask.to(image.device)` follows another sample tensor; `self.device` is configured.
    TSNode object = field(target, syn.fields().object);
    if (syn.kind(object) != Kind::kIdentifier || model.text(object) != "self") return false;
  }
  return names_device(last_dotted_part(model.text(target)));
}

class ToDeviceInGetitem final : public Rule {
 public:
  // Only these dataset methods are judged.
  static constexpr std::string_view kTriggers[] = {"__getitem__", "__getitems__", "__iter__"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    const FunctionState& fn = model.function();
    if (fn.name != "__getitem__" && fn.name != "__getitems__" && fn.name != "__iter__") return;
    if (fn.enclosing_class < 0) return;
    if (!is_dataset_method(fn, model)) return;

    std::string_view src = model.source();
    TSNode device = call.keyword("device", src);
    std::string what;
    if (call.method == "cuda" && !(call.qualname && call.qualname->starts_with("torch."))) {
      what = "`.cuda()`";
    } else if (call.method == "to" && (is_accelerator(call.positional(0), model) || is_accelerator(device, model))) {
      what = "`.to(" + std::string(model.text(ts_node_is_null(device) ? call.positional(0) : device)) + ")`";
    } else if (call.method != "to" && call.qualname && call.qualname->starts_with("torch.") &&
               is_accelerator(device, model)) {
      what = "`device=" + std::string(model.text(device)) + "`";
    } else {
      return;
    }
    auto& pending = pending_[fn.qualname];
    if (ts_node_is_null(pending.first)) {
      pending.first = call.node;
      pending.what = what;
    }
    ++pending.count;
  }

  void on_function_end(const FunctionState& fn, RuleContext& ctx) override {
    auto it = pending_.find(fn.qualname);
    if (it == pending_.end()) return;
    Pending p = std::move(it->second);
    pending_.erase(it);
    std::string owner = fn.qualname;
    size_t dot = owner.rfind('.', owner.rfind('.') - 1);
    if (dot != std::string::npos) owner = owner.substr(dot + 1);
    std::string message = p.what + " in `" + owner +
                          "` moves every sample to the GPU inside the data pipeline: CUDA cannot be used in forked "
                          "DataLoader workers (and each spawned worker holds its own CUDA context), and per-sample "
                          "copies are slow; return CPU tensors and move the batch in the training loop with "
                          "`pin_memory=True` and `.to(device, non_blocking=True)`";
    if (p.count > 1) {
      message +=
          " (" + std::to_string(p.count - 1) + " more device transfer" + (p.count > 2 ? "s" : "") + " in this method)";
    }
    ctx.report(p.first, std::move(message));
  }

 private:
  struct Pending {
    TSNode first{};
    std::string what;
    size_t count = 0;
  };

  bool is_dataset_method(const FunctionState& fn, const SemanticModel& model) {
    auto it = dataset_method_.find(fn.qualname);
    if (it != dataset_method_.end()) return it->second;
    TSNode cls = enclosing_class_node(fn.node);
    bool yes = !ts_node_is_null(cls) && derives_from_dataset(cls, model);
    dataset_method_.emplace(fn.qualname, yes);
    return yes;
  }

  std::unordered_map<std::string, bool> dataset_method_;
  std::unordered_map<std::string, Pending> pending_;
};

}  // namespace
}  // namespace python

python::RuleEntry to_device_in_getitem_rule() {
  return python::rule_entry<python::ToDeviceInGetitem>(catalog_entry("TL209"));
}

}  // namespace torchlint
