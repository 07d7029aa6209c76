// TL601 no-grad-clipping: a recurrent or Transformer model is trained and the project never
// clips gradients.

#include "catalog.h"
#include "core/text.h"
#include "python/api_tables.h"
#include "python/rule.h"
#include "python/shared/training_loop.h"

namespace torchlint {
namespace python {
namespace {

using namespace loop_util;

// The layers whose training is prone to exploding gradients.
bool is_recurrent_or_attention(std::string_view q) { return api::exploding_gradient_layers().contains(q); }

// clip_grad_norm_/clip_grad_value_ in any spelling (torch.nn.utils, accelerate, FSDP,
// Lightning's clip_gradients), or a trainer configured to clip.
bool clips(const CallEvent& call, const SemanticModel& model) {
  std::string_view name = call.method.empty() ? last_dotted_part(model.text(call.callee)) : call.method;
  if (name == "clip_grad_norm_" || name == "clip_grad_value_" || name == "clip_grad_norm" ||
      name == "clip_grads_with_norm_" || name == "clip_gradients") {
    return true;
  }
  for (std::string_view kw : {"gradient_clip_val", "max_grad_norm", "clip_grad_norm", "gradient_clipping"}) {
    if (!ts_node_is_null(call.keyword(kw, model.source()))) return true;
  }
  return false;
}

class NoGradClipping final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (clips(call, ctx.model())) ctx.add_fact("clips-grad");
    if (call.qualname && is_recurrent_or_attention(*call.qualname)) ctx.add_fact("builds-recurrent");
  }

  void on_loop_end(const LoopState& loop, RuleContext& ctx) override {
    // L-BFGS loops step with a closure that back-propagates: stepping is what counts.
    if (!loop.steps_optimizer || reported_) return;
    const SemanticModel& model = ctx.model();
    TSNode anchor{};
    for (const auto& e : loop.events) {
      if (e.kind == LoopEventKind::kOptimizerStep) {
        anchor = e.node;
        break;
      }
    }
    if (ts_node_is_null(anchor)) return;
    using K = ProjectCondition::Kind;
    // The models this loop runs forward, by what they were built from.
    std::vector<std::string> classes;  // project classes (maybe recurrent)
    std::string model_name;
    bool direct = false, unknown = false, known = false;
    for (const auto& e : loop.events) {
      if (e.kind != LoopEventKind::kForward) continue;
      ValueInfo v = model.infer_value(field(e.node, Syntax::get().fields().function));
      if ((v.kind == ValueKind::kModel || v.kind == ValueKind::kInstance) && !v.type.empty()) {
        known = true;
        if (is_recurrent_or_attention(v.type)) {
          direct = true;
        } else if (v.type.starts_with("torch.")) {
          continue;  // nn.Linear, nn.Sequential of known layers, a wrapper
        } else {
          classes.push_back(v.type);
        }
      } else {
        unknown = true;  // `model` passed in as a parameter
      }
      if (model_name.empty() || direct) model_name = e.receiver;
      if (direct) break;
    }
    std::vector<ProjectCondition> conditions;
    if (!direct) {
      if (!classes.empty()) {
        // Recurrent when its constructor (or a submodule's) builds the layers.
        conditions.push_back({K::kReachableHas, classes, "builds-recurrent", ""});
      } else if (unknown && !known) {
        // Built elsewhere: the project builds recurrent or attention layers somewhere.
        conditions.push_back({K::kProjectHas, {}, "builds-recurrent", ""});
      } else {
        return;
      }
    }
    conditions.push_back({K::kProjectLacks, {}, "clips-grad", ""});
    reported_ = true;  // the project-wide problem, once per file
    ctx.report(anchor,
               "this loop trains `" + model_name +
                   "`, a recurrent/attention model, and the project never clips gradients: one exploding gradient "
                   "can wreck the weights; call `torch.nn.utils.clip_grad_norm_(" +
                   model_name +
                   ".parameters(), max_norm)` between backward() and step() (after `scaler.unscale_(optimizer)` "
                   "with AMP)",
               std::nullopt, std::move(conditions));
  }

 private:
  bool reported_ = false;
};

}  // namespace
}  // namespace python

python::RuleEntry no_grad_clipping_rule() { return python::rule_entry<python::NoGradClipping>(catalog_entry("TL601")); }

}  // namespace torchlint
