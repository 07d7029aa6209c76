// TL701 serving-without-no-grad: a request handler runs the model with autograd recording.
#include <unordered_map>
#include <unordered_set>

#include "catalog.h"
#include "core/text.h"
#include "python/shared/serving.h"
#include "python/training_checkpoint.h"

namespace torchlint {
namespace python {
namespace {

class ServingWithoutNoGrad final : public Rule {
 public:
  void on_start(RuleContext& ctx) override { handlers_ = &ctx.analysis<RequestHandlers>(); }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    const FunctionState& fn = model.function();
    if (model.in_no_grad()) {
      seen_.current(model).disables_grad = true;
      return;
    }
    std::string_view target = call.forward_pass_target(model);
    if (!target.empty() && handlers_->is_library_callable(target, ctx)) target = {};
    if (!target.empty()) seen_.current(model).forward_with_grad = true;
    if (!handlers_->current_is_handler(ctx)) return;
    Pending& p = pending_[fn.qualname];
    if (!target.empty()) {
      if (ts_node_is_null(p.direct)) {
        p.direct = call.node;
        p.model = std::string(target);
      }
      return;
    }
    // A helper of the project may run the model for the handler.
    std::string callee;
    if (call.qualname && !is_library_name(*call.qualname)) {
      callee = *call.qualname;
    } else if (!call.qualname && !call.method.empty() && !ts_node_is_null(call.receiver)) {
      ValueInfo receiver = model.infer_value(call.receiver);
      if (receiver.kind == ValueKind::kInstance) callee = receiver.type + "." + std::string(call.method);
    }
    if (callee.empty()) return;
    for (const auto& h : p.helpers) {
      if (h.second == callee) return;
    }
    p.helpers.emplace_back(call.node, callee);
  }

  void on_function_end(const FunctionState& fn, RuleContext& ctx) override {
    bool trains = fn.calls_backward || fn.steps_optimizer || fn.calls_autograd_grad;
    const Seen* seen = seen_.find(fn.qualname);
    if (fn.grad_disabled_decorator || (seen && seen->disables_grad)) ctx.add_fact("disables-grad");
    if (seen && seen->forward_with_grad && !trains) ctx.add_fact("forward-with-grad");
    auto it = pending_.find(fn.qualname);
    if (it == pending_.end()) return;
    Pending p = std::move(it->second);
    pending_.erase(it);
    if (trains) return;  // an endpoint that trains or needs gradients (saliency) on purpose
    const std::string advice =
        ": every request records an autograd graph and keeps its activations alive, costing memory and "
        "latency; decorate the handler with `@torch.inference_mode()` or wrap the call in `with "
        "torch.inference_mode():`";
    if (!ts_node_is_null(p.direct)) {
      ctx.report(p.direct, "request handler `" + fn.name + "` runs `" + p.model + "` outside no_grad" + advice);
      return;
    }
    using K = ProjectCondition::Kind;
    for (const auto& [node, callee] : p.helpers) {
      std::string shown(last_dotted_part(callee));
      ctx.report(
          node, "request handler `" + fn.name + "` calls `" + shown + "`, which runs a model outside no_grad" + advice,
          std::nullopt,
          {{K::kReachableHas, {callee}, "forward-with-grad", ""}, {K::kReachableLacks, {callee}, "disables-grad", ""}});
    }
  }

 private:
  struct Pending {
    TSNode direct{};
    std::string model;
    std::vector<std::pair<TSNode, std::string>> helpers;
  };
  RequestHandlers* handlers_ = nullptr;  // shared
  std::unordered_map<std::string, Pending> pending_;
  // What the functions (by qualname, as the facts are) did: a call under no_grad, a
  // forward pass with autograd on.
  struct Seen {
    bool disables_grad = false;
    bool forward_with_grad = false;
  };
  PerFunction<Seen> seen_;
};

}  // namespace
}  // namespace python

python::RuleEntry serving_without_no_grad_rule() {
  return python::rule_entry<python::ServingWithoutNoGrad>(catalog_entry("TL701"));
}

}  // namespace torchlint
