// TL108 eval-mode-missing: a freshly built model with dropout or batch norm is exported
// or used for inference without eval().
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "catalog.h"
#include "core/text.h"
#include "python/api_tables.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

// Layers that behave differently in training mode (and functions that build them).
constexpr const char* kFactTrainModeLayers = "builds-train-mode-layers";
// Some `.eval()` / `.train(False)` call: a helper that may put the model in eval mode.
constexpr const char* kFactCallsEval = "calls-eval";

bool is_train_mode_layer(std::string_view q) {
  // Asked for every call: most are decided by the prefix, without hashing the name.
  if (!q.starts_with("torch.nn.") && !q.starts_with("torchvision.ops.")) return false;
  return api::train_mode_layers().contains(q);
}

// Models from libraries, built in training mode with dropout and/or batch norm.
// transformers' `from_pretrained` returns a model already in eval mode: not listed.
bool is_library_model(std::string_view q) {
  if (q.starts_with("torchvision.models.")) {
    std::string_view name = last_dotted_part(q);
    return !name.empty() && name[0] >= 'a' && name[0] <= 'z' && !name.starts_with("get_") &&
           !name.starts_with("list_") && q.find("._utils") == std::string_view::npos &&
           q.find("feature_extraction") == std::string_view::npos;
  }
  if (q == "timm.create_model" || q == "timm.models.create_model") return true;
  if (q.starts_with("transformers.")) {
    if (q.ends_with(".from_config")) return true;
    std::string_view name = last_dotted_part(q);
    return !name.empty() && name[0] >= 'A' && name[0] <= 'Z' && !name.ends_with("Config") &&
           (name.find("Model") != std::string_view::npos || name.find("For") != std::string_view::npos);
  }
  return false;
}

bool is_export(std::string_view q) {
  if (!q.starts_with("torch.jit.") && !q.starts_with("torch.onnx.") && !q.starts_with("torch.export.")) return false;
  return api::export_functions().contains(q);
}

// nn.Module methods that neither change the mode nor hide what a helper does.
bool is_plain_module_method(std::string_view m) { return api::plain_module_methods().contains(m); }

bool is_false(TSNode n) { return !ts_node_is_null(n) && Syntax::get().kind(n) == Kind::kFalse; }
bool is_true(TSNode n) { return !ts_node_is_null(n) && Syntax::get().kind(n) == Kind::kTrue; }

struct Tracked {
  uint32_t line = 0;
  std::string type;           // the class or constructor, for the message
  std::string project_class;  // qualname when the layers must be confirmed by the project pass
  bool eval = false;
  bool weights = false;      // pretrained or load_state_dict: inference is plausible
  bool unknown_use = false;  // handed to code torchlint cannot follow
  bool reported = false;
  std::vector<std::string> helpers;  // project functions it was handed to (may call eval())
  TSNode forward{};                  // first forward pass with loaded weights in training mode
  std::vector<std::string> forward_helpers;
};

class EvalModeMissing final : public Rule {
 public:
  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    const Syntax& syn = Syntax::get();
    if (event.op != "=" || syn.kind(event.target) != Kind::kIdentifier) return;
    FunctionData& data = current(ctx);
    std::string_view name = ctx.text(event.target);
    if (!ctx.model().function().is_module_level) data.assigned.insert(name);
    std::optional<Tracked> tracked =
        ts_node_is_null(event.value) ? std::nullopt : analyse(name, event.value, ctx, data.models);
    if (tracked) {
      tracked->line = ts_node_start_point(event.node).row + 1;
      data.models.insert_or_assign(name, std::move(*tracked));
    } else if (!data.models.empty()) {
      data.models.erase(name);
    }
  }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    std::string_view src = model.source();
    const Syntax& syn = Syntax::get();
    if (call.qualname && (is_train_mode_layer(*call.qualname) || is_library_model(*call.qualname))) {
      ctx.add_fact(kFactTrainModeLayers);
      layer_functions_.insert(model.function().qualname);
    }
    if (is_super_init(call, ctx) && inherits_train_mode_layers(ctx)) {
      ctx.add_fact(kFactTrainModeLayers);
      layer_functions_.insert(model.function().qualname);
    }
    bool to_eval = call.method == "eval" ||
                   (call.method == "train" && (is_false(call.positional(0)) || is_false(call.keyword("mode", src))));
    bool to_train = call.method == "train" && !to_eval;
    if (to_eval) ctx.add_fact(kFactCallsEval);

    FunctionData& data = current(ctx);
    Models& models = data.models;
    const FunctionState& fn = model.function();
    bool in_function = !fn.is_module_level;

    // Mode changes on a tracked model (`model.eval()`, `model.module.eval()`); an eval()
    // on anything else (`m.eval()` over `model.modules()`) may concern it too.
    if (to_eval || to_train) {
      std::string_view root = receiver_root(call, ctx);
      Tracked* t = root.empty() ? nullptr : find(models, root);
      if (t) {
        t->eval = to_eval;
      } else if (to_eval) {
        for (auto& entry : models) entry.second.eval = true;
        if (in_function) {
          // A parameter or a module-level model put in eval mode inside this function;
          // an eval() on anything else (`m.eval()` over `model.modules()`) may be either.
          const Models& globals = module_data(ctx).models;
          if (!root.empty() && is_parameter(root, ctx)) {
            data.params.evaluated.insert(root);
          } else if (!root.empty() && globals.contains(root)) {
            global_eval_.insert(root);
          } else {
            data.params.any_eval = true;
            global_eval_any_ = true;
          }
        }
      }
      return;
    }
    if (Tracked* t = models.empty() ? nullptr : find(models, receiver_root(call, ctx))) {
      if (call.method == "load_state_dict") {
        t->weights = true;
      } else if (call.method == "forward") {
        note_forward(*t, call, ctx);
      } else if (!is_plain_module_method(call.method)) {
        if (!t->project_class.empty()) {
          t->helpers.push_back(t->project_class + "." + std::string(call.method));
        } else {
          t->unknown_use = true;
        }
      }
    }

    bool export_call = call.qualname && is_export(*call.qualname);
    // A forward pass: `model(x)`, `model.forward(x)`.
    TSNode forwarded{};
    if (syn.kind(call.callee) == Kind::kIdentifier) forwarded = call.callee;
    if (call.method == "forward" && !ts_node_is_null(call.receiver) && syn.kind(call.receiver) == Kind::kIdentifier) {
      forwarded = call.receiver;
    }
    if (!ts_node_is_null(forwarded)) {
      std::string_view name = model.text(forwarded);
      if (Tracked* t = find(models, name)) {
        if (call.method != "forward") note_forward(*t, call, ctx);
      } else if (in_function) {
        note_outside_use(data, name, call, {}, ctx);
      }
    }

    // The model handed to an export API or to other code; at module level only a tracked
    // model matters.
    if (!in_function && models.empty()) return;
    for (size_t i = 0, position = 0; i < call.arg_count; ++i) {
      const CallArgument& arg = call.args[i];
      bool keyword = arg.kind == Kind::kKeywordArgument;
      size_t index = keyword ? SIZE_MAX : position++;
      TSNode value = arg.value;
      if (ts_node_is_null(value) || syn.kind(value) != Kind::kIdentifier) continue;
      std::string_view name = model.text(value);
      std::string_view kw = keyword ? arg.name : std::string_view();
      bool exported = export_call && (keyword ? (kw == "model" || kw == "mod" || kw == "obj" || kw == "func")
                                              : ts_node_eq(value, call.positional(0)));
      Tracked* t = find(models, name);
      if (!t) {
        if (!in_function) continue;
        if (exported) {
          note_outside_use(data, name, call, *call.qualname, ctx);
        } else if (!call.qualname || !ctx.model().is_external_package(
                                         std::string_view(*call.qualname).substr(0, call.qualname->find('.')))) {
          // Handed to code that may switch modes: follow it no further.
          if (is_parameter(name, ctx)) {
            data.params.unknown.insert(name);
          } else if (module_data(ctx).models.contains(name)) {
            global_unknown_.insert(name);
          }
        }
        continue;
      }
      if (exported) {
        if (!t->eval && !t->unknown_use && !t->reported) {
          t->reported = true;
          report_export(name, *t, call, ctx);
        }
        continue;
      }
      if (!call.qualname) {
        t->unknown_use = true;  // `trainer.fit(model)`, `accelerator.prepare(model)`
        continue;
      }
      std::string_view top = std::string_view(*call.qualname).substr(0, call.qualname->find('.'));
      if (ctx.model().is_external_package(top)) continue;
      // A function of this file: its evaluation of the parameter is judged with this model.
      if (call.qualname->starts_with(model.module_name() + ".")) {
        call_sites_.push_back({*call.qualname, index, std::string(kw), std::string(name), *t,
                               fn.steps_optimizer || fn.calls_backward, fn.name,
                               ts_node_start_point(call.node).row + 1});
      }
      t->helpers.push_back(*call.qualname);
    }
  }

  void on_function_end(const FunctionState& fn, RuleContext& ctx) override {
    if (fn.calls_backward || fn.steps_optimizer) trains_.insert(fn.qualname);
    // Calls within this file only: base-class constructors are followed inside the file.
    const std::string prefix = ctx.model().module_name() + ".";
    for (const auto& c : fn.facts.calls) {
      if (c.callee.starts_with(prefix) && !c.callee.ends_with(kModuleFunction))
        callees_[fn.qualname].push_back(c.callee);
    }
    flush(fn, ctx);
  }

  void on_module_end(RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    report_outside_uses(ctx);
    flush(model.function(), ctx);
    functions_.clear();
    current_ = nullptr;
    current_node_ = {};
    outside_uses_.clear();
    call_sites_.clear();
    global_eval_.clear();
    global_unknown_.clear();
    global_eval_any_ = false;
    trains_.clear();
    callees_.clear();
    layer_functions_.clear();
  }

 private:
  // Names are views of the file's text, which outlives the rule's state for that file.
  using Models = std::unordered_map<std::string_view, Tracked>;
  using Names = std::unordered_set<std::string_view>;

  struct ParamState {
    Names evaluated;        // parameters put in eval mode in the function
    Names unknown;          // parameters handed to other code first
    bool any_eval = false;  // some eval() torchlint cannot attribute
  };
  // What the rule knows of one function (by qualname; the module's code is one too).
  struct FunctionData {
    Models models;   // models built here and still tracked (until the function ends)
    Names assigned;  // local names
    ParamState params;
    Names outside;                          // names whose first outside use was recorded
    const std::string* qualname = nullptr;  // the key of this entry
    std::string name;                       // the function's short name
  };

  // The data of the function being traversed. Looked up once per function, not per event:
  // the node identifies the function while it is traversed.
  FunctionData& current(RuleContext& ctx) {
    const FunctionState& fn = ctx.model().function();
    if (!current_ || current_node_.id != fn.node.id || current_fn_ != &fn) {
      current_ = &entry(fn.qualname, fn.name);
      current_node_ = fn.node;
      current_fn_ = &fn;
    }
    return *current_;
  }
  FunctionData& module_data(RuleContext& ctx) {
    if (module_scope_.empty()) module_scope_ = ctx.model().module_name() + "." + std::string(kModuleFunction);
    return entry(module_scope_, kModuleFunction);
  }
  FunctionData& entry(const std::string& qualname, std::string_view name) {
    auto [it, inserted] = functions_.try_emplace(qualname);
    if (inserted) {
      it->second.qualname = &it->first;
      it->second.name = std::string(name);
    }
    return it->second;
  }

  // What an assigned value makes of the name: a new model in training mode, the same
  // model moved (`model.to(device)`), or something torchlint does not track.
  static std::optional<Tracked> analyse(std::string_view target, TSNode value, RuleContext& ctx, Models& models) {
    const SemanticModel& model = ctx.model();
    const Syntax& syn = Syntax::get();
    std::optional<bool> mode;  // the outermost .eval()/.train() in the chain decides
    TSNode node = value;
    for (int depth = 0; depth < 16; ++depth) {
      if (syn.kind(node) == Kind::kParenthesizedExpression) {
        node = ts_node_named_child(node, 0);
        continue;
      }
      if (syn.kind(node) != Kind::kCall) break;
      TSNode callee = field(node, syn.fields().function);
      if (syn.kind(callee) != Kind::kAttribute) break;
      std::string_view method = model.text(field(callee, syn.fields().attribute));
      if (!api::module_mode_chain_methods().contains(method)) break;
      if (!mode && (method == "eval" || method == "train")) {
        TSNode args = field(node, syn.fields().arguments);
        TSNode first = ts_node_is_null(args) ? TSNode{} : ts_node_named_child(args, 0);
        mode = method == "eval" || is_false(first);
      }
      node = field(callee, syn.fields().object);
    }
    Tracked t;
    if (syn.kind(node) == Kind::kIdentifier) {
      auto it = models.find(model.text(node));
      if (it == models.end()) return std::nullopt;
      // An alias (`net = model`) shares the mode: stop following both.
      if (it->first != target) {
        it->second.unknown_use = true;
        return std::nullopt;
      }
      t = it->second;
    } else if (syn.kind(node) == Kind::kCall) {
      auto q = model.resolve_qualified_name(field(node, syn.fields().function));
      if (!q) return std::nullopt;
      std::string_view src = model.source();
      TSNode args = field(node, syn.fields().arguments);
      auto keyword = [&](std::string_view name) -> TSNode {
        uint32_t n = ts_node_is_null(args) ? 0 : ts_node_named_child_count(args);
        for (uint32_t i = 0; i < n; ++i) {
          TSNode a = ts_node_named_child(args, i);
          if (syn.kind(a) == Kind::kKeywordArgument && node_text(field(a, syn.fields().name), src) == name) {
            return field(a, syn.fields().value);
          }
        }
        return {};
      };
      if (is_library_model(*q)) {
        t.type = std::string(last_dotted_part(*q));
        if (q->starts_with("timm.")) {
          std::string_view arch;
          TSNode first = ts_node_is_null(args) ? TSNode{} : ts_node_named_child(args, 0);
          if (string_literal_value(first, src, arch)) t.type = "timm `" + std::string(arch) + "`";
        }
        TSNode weights = keyword("weights");
        t.weights = is_true(keyword("pretrained")) || (!ts_node_is_null(weights) && syn.kind(weights) != Kind::kNone);
      } else {
        ValueInfo v = model.infer_value(node);
        // A project class: a Module of this file, or a class imported from the project.
        const ClassInfo* local = model.class_info(v.type);
        bool project = (v.kind == ValueKind::kModel && local) || (v.kind == ValueKind::kInstance && !local);
        if (!project || v.type != *q) return std::nullopt;
        t.type = std::string(last_dotted_part(*q));
        t.project_class = *q;
      }
    } else {
      return std::nullopt;
    }
    if (mode) t.eval = *mode;
    return t;
  }

  // `super().__init__(...)`: the project pass cannot follow it to the base class.
  static bool is_super_init(const CallEvent& call, RuleContext& ctx) {
    const Syntax& syn = Syntax::get();
    if (call.method != "__init__" || ts_node_is_null(call.receiver) || syn.kind(call.receiver) != Kind::kCall)
      return false;
    TSNode callee = field(call.receiver, syn.fields().function);
    return syn.kind(callee) == Kind::kIdentifier && ctx.text(callee) == "super";
  }

  // Whether a base class of the class being built (a class of this file, or a torchvision
  // model class) builds dropout or batch-norm layers.
  bool inherits_train_mode_layers(RuleContext& ctx) const {
    const SemanticModel& model = ctx.model();
    const ClassInfo* cls = model.enclosing_class();
    if (!cls || model.function().name != "__init__") return false;
    std::vector<std::string> stack;
    for (const auto& b : cls->bases) {
      if (b.starts_with("torchvision.models.") || b.starts_with("timm.models.")) return true;
      stack.push_back(b + ".__init__");
    }
    std::unordered_set<std::string> seen(stack.begin(), stack.end());
    while (!stack.empty()) {
      std::string f = std::move(stack.back());
      stack.pop_back();
      if (layer_functions_.contains(f)) return true;
      auto it = callees_.find(f);
      if (it == callees_.end()) continue;
      for (const auto& c : it->second) {
        std::string target = callees_.contains(c) ? c : c + ".__init__";
        if (seen.insert(target).second) stack.push_back(target);
      }
    }
    return false;
  }

  static Tracked* find(Models& models, std::string_view name) {
    if (models.empty()) return nullptr;
    auto it = models.find(name);
    return it == models.end() ? nullptr : &it->second;
  }

  // `model` in `model.eval()`, `model.module.eval()`, `model.backbone.load_state_dict(...)`.
  static std::string_view receiver_root(const CallEvent& call, RuleContext& ctx) {
    const Syntax& syn = Syntax::get();
    TSNode r = call.receiver;
    for (int depth = 0; depth < 4 && !ts_node_is_null(r) && syn.kind(r) == Kind::kAttribute; ++depth) {
      r = field(r, syn.fields().object);
    }
    if (ts_node_is_null(r) || syn.kind(r) != Kind::kIdentifier) return {};
    return ctx.text(r);
  }

  static bool is_parameter(std::string_view name, RuleContext& ctx) {
    const Binding* b = ctx.model().lookup(name);
    return b && b->kind == BindingKind::kParameter;
  }

  // Position of parameter `name` among the function's parameters (`self` not counted).
  static std::optional<size_t> parameter_index(const FunctionState& fn, std::string_view name, RuleContext& ctx) {
    const Syntax& syn = Syntax::get();
    TSNode params = field(fn.node, syn.fields().parameters);
    uint32_t n = ts_node_is_null(params) ? 0 : ts_node_named_child_count(params);
    size_t index = 0;
    for (uint32_t i = 0; i < n; ++i) {
      TSNode p = ts_node_named_child(params, i);
      Kind k = syn.kind(p);
      TSNode id{};
      if (k == Kind::kIdentifier) id = p;
      if (k == Kind::kTypedParameter) id = ts_node_named_child(p, 0);
      if (k == Kind::kDefaultParameter || k == Kind::kTypedDefaultParameter) id = field(p, syn.fields().name);
      if (ts_node_is_null(id)) return std::nullopt;  // *args, keyword-only markers: positions unknown
      std::string_view text = ctx.text(id);
      if (i == 0 && fn.enclosing_class >= 0 && (text == "self" || text == "cls")) continue;
      if (text == name) return index;
      ++index;
    }
    return std::nullopt;
  }

  // A forward pass or export inside a function of a model it did not build: a parameter
  // (judged with the models this file passes in) or a module-level model.
  void note_outside_use(FunctionData& data, std::string_view name, const CallEvent& call, std::string_view api,
                        RuleContext& ctx) {
    if (data.assigned.contains(name) || data.outside.contains(name)) return;
    const FunctionState& fn = ctx.model().function();
    // Checked before building the record: most calls are not a first use.
    std::optional<size_t> parameter;
    if (is_parameter(name, ctx)) {
      const ParamState& ps = data.params;
      if (ps.any_eval || ps.evaluated.contains(name) || ps.unknown.contains(name)) return;
      parameter = parameter_index(fn, name, ctx);
      if (!parameter) return;
    }
    data.outside.insert(name);  // the first use decides
    outside_uses_.push_back(OutsideUse{call.node, &data, name, std::string(api), parameter});
  }

  void report_outside_uses(RuleContext& ctx) {
    Models& globals = module_data(ctx).models;
    for (const auto& u : outside_uses_) {
      const std::string& function = *u.function->qualname;
      const std::string& function_name = u.function->name;
      const std::string name(u.name);
      if (trains_.contains(function)) continue;
      if (u.parameter) {
        for (const auto& site : call_sites_) {
          if (site.callee != function) continue;
          if (site.keyword.empty() ? site.index != *u.parameter : site.keyword != name) continue;
          const Tracked& t = site.model;
          if (t.eval || t.unknown_use || !(t.weights || site.caller_trains)) continue;
          std::string what = u.api.empty() ? "runs inference on" : "exports";
          ctx.report(u.node,
                     "`" + function_name + "` " + what + " `" + name + "` in training mode: `" + site.caller +
                         "` passes " + describe(site.model_name, t) + " on line " + std::to_string(site.line) +
                         " without calling `" + site.model_name +
                         ".eval()` first, so dropout stays active and batch norm uses per-batch statistics; call `" +
                         name + ".eval()` here or before the call",
                     std::nullopt, conditions(t, t.helpers));
          break;
        }
        continue;
      }
      Tracked* t = find(globals, name);
      if (!t || t->eval || t->unknown_use || global_eval_any_) continue;
      if (global_eval_.contains(name) || global_unknown_.contains(name)) continue;
      if (u.api.empty() && !t->weights) continue;
      std::string what = u.api.empty() ? "runs inference on" : "exports";
      ctx.report(u.node,
                 "`" + function_name + "` " + what + " the module-level " + describe(name, *t) +
                     " in training mode: nothing in this file calls `" + name +
                     ".eval()`, so dropout stays active and batch norm uses per-batch statistics; call `" + name +
                     ".eval()` once after loading the weights",
                 std::nullopt, conditions(*t, t->helpers));
    }
  }

  static void note_forward(Tracked& t, const CallEvent& call, RuleContext&) {
    if (t.eval || !t.weights || t.unknown_use || !ts_node_is_null(t.forward)) return;
    t.forward = call.node;
    t.forward_helpers = t.helpers;
  }

  static std::vector<ProjectCondition> conditions(const Tracked& t, const std::vector<std::string>& helpers) {
    using K = ProjectCondition::Kind;
    std::vector<ProjectCondition> out;
    if (!t.project_class.empty()) out.push_back({K::kReachableHas, {t.project_class}, kFactTrainModeLayers, ""});
    if (!helpers.empty()) out.push_back({K::kReachableLacks, helpers, kFactCallsEval, "eval"});
    return out;
  }

  static std::string describe(std::string_view name, const Tracked& t) {
    std::string what = t.project_class.empty() ? "`" + t.type + "`" : "a `" + t.type + "`";
    if (t.type.starts_with("timm")) what = t.type;
    return "`" + std::string(name) + "` (" + what + " built on line " + std::to_string(t.line) + ")";
  }

  void report_export(std::string_view model_name, const Tracked& t, const CallEvent& call, RuleContext& ctx) {
    const std::string name(model_name);
    const std::string& full = *call.qualname;
    ctx.report(call.node,
               describe(name, t) + " is exported with `" + full +
                   "` while still in training mode: its dropout and batch-norm layers keep their training behaviour "
                   "(random masks, per-batch statistics) in the exported model; call `" +
                   name + ".eval()` before exporting",
               std::nullopt, conditions(t, t.helpers));
  }

  void flush(const FunctionState& fn, RuleContext& ctx) {
    auto it = functions_.find(fn.qualname);
    if (it == functions_.end() || it->second.models.empty()) return;
    Models models = std::move(it->second.models);
    it->second.models.clear();
    // A function that trains runs its forward passes in training mode on purpose.
    if (fn.calls_backward || fn.steps_optimizer) return;
    std::vector<std::pair<std::string, const Tracked*>> found;
    for (const auto& [name, t] : models) {
      if (!ts_node_is_null(t.forward) && !t.reported) found.emplace_back(name, &t);
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
      return ts_node_start_byte(a.second->forward) < ts_node_start_byte(b.second->forward);
    });
    for (const auto& [name, t] : found) {
      ctx.report(t->forward,
                 describe(name, *t) +
                     " has loaded weights but runs inference in training mode: dropout drops "
                     "activations at random and batch norm normalises with (and updates) per-batch "
                     "statistics; call `" +
                     name + ".eval()` first",
                 std::nullopt, conditions(*t, t->forward_helpers));
    }
  }

  struct OutsideUse {
    TSNode node{};
    const FunctionData* function = nullptr;  // where it is used (entries live until the file ends)
    std::string_view name;
    std::string api;  // the export API, empty for a forward pass
    std::optional<size_t> parameter;
  };
  struct CallSite {
    std::string callee;
    size_t index = SIZE_MAX;  // positional index, SIZE_MAX for a keyword
    std::string keyword;
    std::string model_name;
    Tracked model;  // the model's state at the call
    bool caller_trains = false;
    std::string caller;
    uint32_t line = 0;
  };

  std::string module_scope_;
  std::unordered_map<std::string, FunctionData> functions_;  // by qualname
  FunctionData* current_ = nullptr;
  TSNode current_node_{};
  const FunctionState* current_fn_ = nullptr;
  std::vector<OutsideUse> outside_uses_;
  std::vector<CallSite> call_sites_;
  Names global_eval_;             // names put in eval mode inside functions
  Names global_unknown_;          // names handed to other code inside functions
  bool global_eval_any_ = false;  // an eval() on something torchlint cannot name
  std::unordered_set<std::string> trains_;
  // This file's functions: what they call, and which build train-mode layers directly.
  std::unordered_map<std::string, std::vector<std::string>> callees_;
  std::unordered_set<std::string> layer_functions_;
};

}  // namespace
}  // namespace python

python::RuleEntry eval_mode_missing_rule() {
  return python::rule_entry<python::EvalModeMissing>(catalog_entry("TL108"));
}

}  // namespace torchlint
