// TL306 load-state-dict-without-mode: weights loaded for inference into a model left in training mode.
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "catalog.h"
#include "core/text.h"
#include "python/training_checkpoint.h"

namespace torchlint {
namespace python {
namespace {

// Whether `root` ("model", "self.net") leaves `scope` other than through its own methods
// and forward passes: returned, stored, handed to a function (which may set its mode or
// train it).
bool escapes(TSNode scope, std::string_view root, const SemanticModel& model) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  bool dotted = root.find('.') != std::string_view::npos;
  std::vector<TSNode> stack{scope};
  while (!stack.empty()) {
    TSNode n = stack.back();
    stack.pop_back();
    Kind k = syn.kind(n);
    bool match =
        dotted ? k == Kind::kAttribute && model.text(n) == root : k == Kind::kIdentifier && model.text(n) == root;
    if (!match) {
      append_named_children(n, stack);
      continue;
    }
    TSNode parent = ts_node_parent(n);
    if (ts_node_is_null(parent)) continue;
    Kind pk = syn.kind(parent);
    if (pk == Kind::kAttribute) continue;                                           // `model.eval()`, `other.model`
    if (pk == Kind::kCall && ts_node_eq(field(parent, f.function), n)) continue;    // a forward pass
    if (pk == Kind::kAssignment && ts_node_eq(field(parent, f.left), n)) continue;  // rebinding
    if (pk == Kind::kKeywordArgument && ts_node_eq(field(parent, f.name), n)) continue;
    static const char* const escaping[] = {
        "argument_list",
        "keyword_argument",
        "return_statement",
        "yield",
        "assignment",
        "augmented_assignment",
        "list",
        "tuple",
        "set",
        "dictionary",
        "pair",
        "expression_list",
        "lambda",
        "conditional_expression",
        "parenthesized_expression",
        "list_comprehension",
        "generator_expression",
        "global_statement",
        "nonlocal_statement",
        "pattern_list",
        "await",
    };
    for (const char* type : escaping) {
      if (is_type(parent, type)) return true;
    }
  }
  return false;
}

class LoadStateDictWithoutMode final : public Rule {
 public:
  // Only `load_state_dict` calls become findings.
  static constexpr std::string_view kTriggers[] = {"load_state_dict"};

  void on_start(RuleContext& ctx) override { objects_ = &ctx.analysis<TrainingObjects>(); }

  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    // `self.model = model`, `net = model.module`: the caller's model under another name.
    if (event.op != "=" || ts_node_is_null(event.value)) return;
    const SemanticModel& model = ctx.model();
    TSNode value = event.value;
    // `encoder = EncoderCNN(size).eval()`: the mode is chosen on creation and survives
    // a later load_state_dict.
    if (Syntax::get().kind(value) == Kind::kCall) {
      TSNode callee = field(value, Syntax::get().fields().function);
      if (Syntax::get().kind(callee) == Kind::kAttribute) {
        std::string_view method = model.text(field(callee, Syntax::get().fields().attribute));
        std::string target = receiver_root(event.target, model);
        if ((method == "eval" || method == "train") && !target.empty()) {
          modes_[model.function().qualname].insert(target);
          any_modes_.insert(target);
        }
      }
    }
    if (Syntax::get().kind(value) == Kind::kConditionalExpression) value = ts_node_named_child(value, 0);
    std::string source = receiver_root(value, model);
    if (source.empty() || !callers_model(source, ctx)) return;
    std::string target = receiver_root(event.target, model);
    if (!target.empty()) caller_owned_.insert(owner_key(target, ctx));
  }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    const FunctionState& fn = model.function();
    // Forward passes: weights loaded into a model that never runs (a format conversion) need no mode.
    std::string runs(call.forward_pass_target(model));
    if (!runs.empty()) {
      forwards_.insert(fn.qualname + "|" + runs);
      any_forwards_.insert(runs);
      if (const ClassInfo* cls = model.enclosing_class()) forwards_.insert(cls->qualname + "|" + runs);
    }
    if (ts_node_is_null(call.receiver)) return;
    if (call.method != "eval" && call.method != "train" && call.method != "load_state_dict") return;
    std::string root = receiver_root(call.receiver, model);
    if (root.empty()) return;
    if (call.method == "eval" || call.method == "train") {
      modes_[fn.qualname].insert(root);
      any_modes_.insert(root);
      if (const ClassInfo* cls = model.enclosing_class()) class_modes_.insert(cls->qualname + "|" + root);
      return;
    }
    if (call.method != "load_state_dict") return;
    ValueInfo value = model.infer_value(call.receiver);
    // A project class from another file is a model when its name says so (it has load_state_dict).
    bool is_model =
        value.kind == ValueKind::kModel || ((value.kind == ValueKind::kUnknown || value.kind == ValueKind::kInstance) &&
                                            names_model(last_dotted_part(root)));
    if (!is_model) return;
    Candidate c;
    c.call = call.node;
    c.root = root;
    c.function = fn.qualname;
    c.module_level = fn.is_module_level;
    if (root.starts_with("self.")) {
      const ClassInfo* cls = model.enclosing_class();
      // A submodule of an nn.Module follows its parent's mode.
      if (!cls || cls->is_module) return;
      c.class_qualname = cls->qualname;
    }
    if (callers_model(root, ctx)) return;  // the caller owns the model and its mode
    candidates_.push_back(std::move(c));
  }

  void on_function_end(const FunctionState& fn, RuleContext& ctx) override {
    bool trains = fn.steps_optimizer || fn.calls_backward;
    const ClassInfo* cls = ctx.model().enclosing_class();
    if (trains && cls) training_classes_.insert(cls->qualname);
    std::optional<bool> optimizer;  // read only when a candidate needs it
    auto has_optimizer = [&] {
      if (!optimizer) {
        optimizer = !objects_->owned_by(fn.qualname, ValueKind::kOptimizer).empty() ||
                    !objects_->parameters(ctx, ValueKind::kOptimizer).empty();
      }
      return *optimizer;
    };
    const auto& modes = modes_[fn.qualname];
    for (auto it = candidates_.begin(); it != candidates_.end();) {
      if (it->function != fn.qualname || !it->class_qualname.empty()) {
        ++it;
        continue;
      }
      // Training resumes here, the mode is set, or the model goes elsewhere.
      bool fine = trains || has_optimizer() || modes.contains(it->root) ||
                  !forwards_.contains(fn.qualname + "|" + it->root) || escapes(fn.node, it->root, ctx.model());
      if (!fine) report(*it, ctx);
      it = candidates_.erase(it);
    }
    modes_.erase(fn.qualname);
  }

  void on_class_end(const ClassInfo& cls, TSNode node, RuleContext& ctx) override {
    for (auto it = candidates_.begin(); it != candidates_.end();) {
      if (it->class_qualname != cls.qualname) {
        ++it;
        continue;
      }
      bool fine = class_modes_.contains(cls.qualname + "|" + it->root) || training_classes_.contains(cls.qualname) ||
                  !forwards_.contains(cls.qualname + "|" + it->root) ||
                  !objects_->owned_by(cls.qualname, ValueKind::kOptimizer).empty() ||
                  escapes(node, it->root, ctx.model());
      if (!fine) report(*it, ctx);
      it = candidates_.erase(it);
    }
  }

  void on_module_end(RuleContext& ctx) override {
    const FunctionState& top = ctx.model().function();
    bool trains =
        top.steps_optimizer || top.calls_backward || !objects_->owned_by(top.qualname, ValueKind::kOptimizer).empty();
    for (const auto& c : candidates_) {
      if (!c.module_level || trains) continue;
      // A global model: its mode may be set, or it may be handed on, anywhere in the file.
      if (any_modes_.contains(c.root) || !any_forwards_.contains(c.root)) continue;
      TSNode root = c.call;
      for (TSNode p = ts_node_parent(root); !ts_node_is_null(p); p = ts_node_parent(p)) root = p;
      if (escapes(root, c.root, ctx.model())) continue;
      report(c, ctx);
    }
    candidates_.clear();
  }

 private:
  struct Candidate {
    TSNode call{};
    std::string root;
    std::string function;
    std::string class_qualname;
    bool module_level = false;
  };

  // Where a name lives: the class for `self.x`, else the function.
  static std::string owner_key(const std::string& name, RuleContext& ctx) {
    const SemanticModel& model = ctx.model();
    const ClassInfo* cls = model.enclosing_class();
    return (name.starts_with("self.") && cls ? cls->qualname : model.function().qualname) + "|" + name;
  }

  bool callers_model(const std::string& root, RuleContext& ctx) const {
    if (caller_owned_.contains(owner_key(root, ctx))) return true;
    if (root.find('.') != std::string::npos) return false;
    const Binding* b = ctx.model().lookup(root);
    return b && b->kind == BindingKind::kParameter;
  }

  void report(const Candidate& c, RuleContext& ctx) {
    if (!reported_.insert(c.function + "|" + c.class_qualname + "|" + c.root).second) return;  // once per model
    ctx.report(c.call, "`" + c.root + ".load_state_dict(...)` loads weights for inference but `" + c.root +
                           "` is never put in eval mode: dropout stays active and batch norm normalises with "
                           "batch statistics, so predictions are noisy and batch-dependent; call `" +
                           c.root + ".eval()` (or `" + c.root + ".train()` if training follows)");
  }

  const TrainingObjects* objects_ = nullptr;  // shared
  std::vector<Candidate> candidates_;
  std::unordered_map<std::string, std::unordered_set<std::string>> modes_;
  std::unordered_set<std::string> any_modes_;
  std::unordered_set<std::string> class_modes_;
  std::unordered_set<std::string> training_classes_;
  std::unordered_set<std::string> reported_;
  std::unordered_set<std::string> caller_owned_;
  std::unordered_set<std::string> forwards_;      // "function|model" and "class|self.model" run forward
  std::unordered_set<std::string> any_forwards_;  // models run forward anywhere in the file
};

}  // namespace
}  // namespace python

python::RuleEntry load_state_dict_without_mode_rule() {
  return python::rule_entry<python::LoadStateDictWithoutMode>(catalog_entry("TL306"));
}

}  // namespace torchlint
