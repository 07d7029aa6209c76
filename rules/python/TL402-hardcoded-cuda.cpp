// TL402 hardcoded-cuda: CUDA assumed with no device-availability check in the program.

#include "catalog.h"
#include "core/text.h"
#include "python/api_tables.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

constexpr const char* kFactChecksDevice = "checks-device";
// Multi-process CUDA training (NCCL, torchrun's LOCAL_RANK): CUDA-only by design.
constexpr const char* kFactCudaByDesign = "cuda-only-by-design";

bool is_availability_check(std::string_view q) { return api::device_availability_checks().contains(q); }

bool is_cuda_string(TSNode node, const SemanticModel& model) {
  std::string_view v;
  return !ts_node_is_null(node) && string_literal_value(node, model.source(), v) && v.starts_with("cuda");
}

// A name bound to a CUDA string literal (`DEVICE = "cuda"`), used as a device.
bool is_cuda_string_name(TSNode node, const SemanticModel& model) {
  if (ts_node_is_null(node) || Syntax::get().kind(node) != Kind::kIdentifier) return false;
  ValueInfo v = model.infer_value(node);
  return v.kind == ValueKind::kDevice && v.cuda && v.type == "str";
}

// `os.environ["LOCAL_RANK"]`, `os.environ.get("LOCAL_RANK")`, `os.getenv("LOCAL_RANK")`,
// and argparse's `--local_rank` / `--local-rank` that torch.distributed.launch passes.
bool mentions_local_rank(TSNode node, const SemanticModel& model) {
  if (ts_node_is_null(node)) return false;
  const Syntax& syn = Syntax::get();
  std::string_view v;
  if (syn.kind(node) == Kind::kSubscript) {
    auto q = model.resolve_qualified_name(field(node, syn.fields().value));
    TSNode key = ts_node_named_child(node, 1);
    return q == "os.environ" && string_literal_value(key, model.source(), v) && v == "LOCAL_RANK";
  }
  if (syn.kind(node) == Kind::kCall) {
    auto q = model.resolve_qualified_name(field(node, syn.fields().function));
    TSNode args = field(node, syn.fields().arguments);
    TSNode first = ts_node_is_null(args) ? TSNode{} : ts_node_named_child(args, 0);
    if (q && (*q == "os.environ.get" || *q == "os.getenv" || *q == "os.environ.__getitem__")) {
      return string_literal_value(first, model.source(), v) && v == "LOCAL_RANK";
    }
    for (TSNode arg : named_children(args)) {
      if (mentions_local_rank(arg, model)) return true;
    }
  }
  return false;
}

class HardcodedCuda final : public Rule {
 public:
  // Its findings name CUDA; its facts come from availability checks and from the marks of
  // multi-process CUDA training (by_design, LOCAL_RANK; "--local-rank" scans as "local").
  static constexpr std::string_view kTriggers[] = {
      "cuda", "is_available",     "device_count", "is_built", "is_initialized", "current_accelerator",
      "nccl", "init_distributed", "local_rank",   "local",    "LOCAL_RANK",
  };

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    // Test code builds these on purpose (loading what the test wrote, wrapping to test
    // unwrapping, GPU tests gated by markers).
    if (ctx.model().is_pytest_file()) return;
    const SemanticModel& model = ctx.model();
    std::string_view src = model.source();
    const FunctionState& fn = model.function();
    if (fn.is_module_level && fn.first_training_byte == ts_node_start_byte(call.node)) module_level_training_ = true;
    if (call.qualname && is_availability_check(*call.qualname)) {
      ctx.add_fact(kFactChecksDevice);
      return;
    }
    if (by_design(call, ctx)) {
      ctx.add_fact(kFactCudaByDesign);
      by_design_ = true;
    }

    // `if args.cuda: model.cuda()`, `if device != "cpu": x = x.cuda(device)`: the code
    // chose to run on the GPU, which is the check this rule asks for.
    if (under_device_condition(model)) return;
    // The hard-coded uses, each counted once. AMP APIs take a device *type*
    // (`GradScaler(device="cuda")`), not a placement.
    bool amp =
        call.qualname && (call.qualname->starts_with("torch.amp.") || call.qualname->starts_with("torch.cuda.amp.") ||
                          *call.qualname == api::kAutocast || api::deprecated_amp(*call.qualname).has_value());
    TSNode device = amp ? TSNode{} : call.keyword("device", src);
    if (call.method == "cuda" && !(call.qualname && call.qualname->starts_with("torch."))) {
      note(call.node, "`.cuda()`");
    } else if (call.qualname == api::kTorchDevice &&
               (is_cuda_string(call.positional(0), model) || is_cuda_string_name(call.positional(0), model))) {
      std::string_view text = model.text(call.node);
      note(call.node, text.size() <= 40 ? "`" + std::string(text) + "`" : "`torch.device(\"cuda\")`");
    } else if (call.qualname == "torch.set_default_device" && is_cuda_string(call.positional(0), model)) {
      note(call.node, "`torch.set_default_device(\"cuda\")`");
    } else if (call.method == "to" && (is_cuda_string(call.positional(0), model) || is_cuda_string(device, model))) {
      note(call.node, "`.to(\"cuda\")`");
    } else if (call.method == "to" &&
               (is_cuda_string_name(call.positional(0), model) || is_cuda_string_name(device, model))) {
      note(call.node, "`.to(" + std::string(model.text(ts_node_is_null(device) ? call.positional(0) : device)) +
                          ")` with a hard-coded \"cuda\" string");
    } else if (is_cuda_string(device, model)) {
      note(call.node, "`device=\"cuda\"`");
    } else if (is_cuda_string_name(device, model)) {
      note(call.node, "`device=" + std::string(model.text(device)) + "` with a hard-coded \"cuda\" string");
    }
  }

  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    if (!ts_node_is_null(event.value) && Syntax::get().kind(event.value) == Kind::kSubscript &&
        ctx.text(event.value).find("LOCAL_RANK") != std::string_view::npos &&
        mentions_local_rank(event.value, ctx.model())) {
      ctx.add_fact(kFactCudaByDesign);
      by_design_ = true;
    }
  }

  void on_module_end(RuleContext& ctx) override {
    if (uses_.empty() || by_design_) {
      uses_.clear();
      module_level_training_ = false;
      return;
    }
    std::string message =
        uses_.front().second +
        " assumes a CUDA device, and the program never checks for one "
        "(`torch.cuda.is_available()`): it crashes on machines without a GPU; choose the device "
        "once, e.g. `torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")`, and pass it on";
    if (uses_.size() > 1) {
      message += " (" + std::to_string(uses_.size() - 1) + " more hard-coded CUDA use" + (uses_.size() > 2 ? "s" : "") +
                 " in this file)";
    }
    using K = ProjectCondition::Kind;
    const SemanticModel& model = ctx.model();
    std::vector<ProjectCondition> conditions;
    if (model.has_main_guard() || module_level_training_) {
      // An entry script is its own program: a check in another script does not help it.
      // A helper torchlint cannot see named like `get_device` counts as a check.
      std::vector<std::string> roots{model.function().qualname};
      conditions = {{K::kReachableLacks, roots, kFactChecksDevice, "device"},
                    {K::kReachableLacks, roots, kFactCudaByDesign, ""}};
    } else {
      conditions = {{K::kProjectLacks, {}, kFactChecksDevice, ""}, {K::kProjectLacks, {}, kFactCudaByDesign, ""}};
    }
    ctx.report(uses_.front().first, std::move(message), std::nullopt, std::move(conditions));
    uses_.clear();
    module_level_training_ = false;
  }

 private:
  void note(TSNode node, std::string what) { uses_.emplace_back(node, std::move(what)); }

  static bool under_device_condition(const SemanticModel& model) {
    for (TSNode c : model.enclosing_conditions()) {
      std::string text = ascii_lower(model.text(c));
      for (std::string_view word : {"cuda", "gpu", "device", "cpu", "available", "accelerator"}) {
        if (text.find(word) != std::string::npos) return true;
      }
    }
    return false;
  }

  static bool by_design(const CallEvent& call, RuleContext& ctx) {
    const SemanticModel& model = ctx.model();
    std::string_view src = model.source();
    std::string_view v;
    if (call.qualname && call.qualname->ends_with("init_process_group")) {
      TSNode backend = call.keyword("backend", src);
      if (ts_node_is_null(backend)) backend = call.positional(0);
      if (string_literal_value(backend, src, v) && v.find("nccl") != std::string_view::npos) return true;
    }
    if (call.qualname == "deepspeed.init_distributed") return true;
    if (call.method == "add_argument" && string_literal_value(call.positional(0), src, v) &&
        (v == "--local_rank" || v == "--local-rank")) {
      return true;
    }
    // The literal "LOCAL_RANK" is a slice of the call's text: skip the walk when it is absent.
    return model.text(call.node).find("LOCAL_RANK") != std::string_view::npos && mentions_local_rank(call.node, model);
  }

  std::vector<std::pair<TSNode, std::string>> uses_;
  bool by_design_ = false;
  bool module_level_training_ = false;  // a script without a main guard that trains
};

}  // namespace
}  // namespace python

python::RuleEntry hardcoded_cuda_rule() { return python::rule_entry<python::HardcodedCuda>(catalog_entry("TL402")); }

}  // namespace torchlint
