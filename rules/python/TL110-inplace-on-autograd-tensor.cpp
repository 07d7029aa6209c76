// TL110 inplace-on-autograd-tensor: forward() modifies in place a tensor that autograd
// saved for the backward pass.
#include <unordered_map>

#include "catalog.h"
#include "python/api_tables.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

// Operations whose backward reads their *output*: modifying the result in place breaks it.
bool saves_output_function(std::string_view q) { return api::output_saving_functions().contains(q); }
bool saves_output_method(std::string_view m) { return api::output_saving_methods().contains(m); }
bool saves_output_module(std::string_view q) { return api::output_saving_modules().contains(q); }

// Operations whose backward reads their *inputs* (weights' gradients need the input).
bool saves_input_function(std::string_view q) { return api::input_saving_functions().contains(q); }
bool saves_input_method(std::string_view m) { return api::input_saving_methods().contains(m); }
bool saves_input_module(std::string_view q) { return api::input_saving_modules().contains(q); }

// Trailing-underscore methods that are not in-place arithmetic on the data.
bool is_inplace_method(std::string_view m) {
  if (m.size() < 2 || !m.ends_with("_") || m.starts_with("_")) return false;
  return !api::non_data_inplace_methods().contains(m);
}

// Results that are plain numbers or shapes, never tensors autograd saves.
bool is_scalar_method(std::string_view m) { return api::scalar_tensor_methods().contains(m); }

// Fresh tensors: modifying them in place before use is the normal way to fill them.
bool is_factory(std::string_view q) { return api::fresh_tensor_factories().contains(q); }
bool is_factory_method(std::string_view m) { return api::fresh_tensor_methods().contains(m); }

struct Saved {
  std::string by;  // the operation that saved the tensor
  uint32_t line = 0;
  bool output = false;  // saved as that operation's output (else as its input)
};

// What torchlint knows about a local name in forward.
struct Value {
  bool activation = false;     // computed from the module's input in this forward
  std::optional<Saved> saved;  // known to be saved by an operation for backward
  bool reported = false;
};

struct Attribute {
  std::string type;
  bool inplace = false;
};

class InplaceOnAutogradTensor final : public Rule {
 public:
  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    const Syntax& syn = Syntax::get();
    record_attribute(event, ctx);
    if (!in_forward(ctx) || model.in_no_grad()) return;
    State& st = state(ctx);
    Kind target = syn.kind(event.target);
    if (!ts_node_is_null(event.value)) mark_inputs(event.value, st, ctx, 0);
    if (event.op == "=" && target == Kind::kSubscript) {
      TSNode object = field(event.target, syn.fields().value);
      if (syn.kind(object) == Kind::kIdentifier) {
        inplace(std::string(model.text(object)), event.node, "`" + std::string(model.text(object)) + "[...] = ...`",
                "build a new tensor instead (`torch.where`, `torch.cat`, or assign into a `.clone()`)", st, ctx);
      }
      return;
    }
    if (target != Kind::kIdentifier) {
      if (target == Kind::kPatternList || target == Kind::kTuple) {
        // `h, _ = self.lstm(x)`: outputs of a layer call are activations.
        bool activation = !ts_node_is_null(event.value) && is_activation(event.value, st, ctx);
        for (TSNode t : named_children(event.target)) {
          if (syn.kind(t) != Kind::kIdentifier) continue;
          Value v;
          v.activation = activation;
          st.values[std::string(model.text(t))] = v;
        }
      }
      return;
    }
    std::string name(model.text(event.target));
    if (event.op != "=") {
      std::string op(event.op);
      inplace(name, event.node, "`" + name + " " + op + " ...`",
              "write `" + name + " = " + name + " " + op.substr(0, op.size() - 1) + " ...`", st, ctx);
      return;
    }
    Value v;
    if (!ts_node_is_null(event.value)) {
      v.activation = is_activation(event.value, st, ctx);
      if (auto by = output_saver(event.value, ctx)) v.saved = Saved{*by, ts_node_start_point(event.node).row + 1, true};
    }
    st.values[name] = v;
  }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& model = ctx.model();
    if (!in_forward(ctx) || model.in_no_grad()) return;
    State& st = state(ctx);
    if (!is_inplace_method(call.method) || ts_node_is_null(call.receiver)) return;
    // `nn.ReLU(inplace=True)` and `F.relu(x, inplace=True)` are the documented fast path.
    if (!ts_node_is_null(call.keyword("inplace", model.source()))) return;
    if (Syntax::get().kind(call.receiver) != Kind::kIdentifier) return;  // self.running_mean.mul_(...): buffers
    std::string name(model.text(call.receiver));
    std::string method(call.method);
    inplace(name, call.node, "`" + name + "." + method + "()`",
            "use the out-of-place `" + name + " = " + name + "." + method.substr(0, method.size() - 1) + "(...)`", st,
            ctx);
  }

  void on_function_end(const FunctionState& fn, RuleContext&) override { states_.erase(fn.qualname); }
  void on_module_end(RuleContext&) override {
    states_.clear();
    attributes_.clear();
  }

 private:
  struct State {
    bool initialised = false;
    std::unordered_map<std::string, Value> values;
  };

  bool in_forward(RuleContext& ctx) const {
    const SemanticModel& model = ctx.model();
    if (model.function().name != "forward" || model.function().enclosing_class < 0) return false;
    const ClassInfo* cls = model.enclosing_class();
    return cls && cls->is_module;
  }

  State& state(RuleContext& ctx) {
    State& st = states_[ctx.model().function().qualname];
    if (!st.initialised) init_parameters(st, ctx);
    return st;
  }

  // forward's parameters are activations unless annotated or defaulted as plain values.
  void init_parameters(State& st, RuleContext& ctx) {
    st.initialised = true;
    const Syntax& syn = Syntax::get();
    const SemanticModel& model = ctx.model();
    TSNode params = field(model.function().node, syn.fields().parameters);
    uint32_t n = ts_node_is_null(params) ? 0 : ts_node_named_child_count(params);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode p = ts_node_named_child(params, i);
      Kind k = syn.kind(p);
      TSNode name{};
      if (k == Kind::kIdentifier) name = p;
      if (k == Kind::kTypedParameter) {
        std::string_view type = model.text(field(p, syn.fields().type));
        if (type.find("Tensor") != std::string_view::npos) name = ts_node_named_child(p, 0);
      }
      if (ts_node_is_null(name)) continue;
      std::string_view text = model.text(name);
      if (text != "self") st.values[std::string(text)].activation = true;
    }
  }

  void record_attribute(const AssignEvent& event, RuleContext& ctx) {
    const Syntax& syn = Syntax::get();
    const SemanticModel& model = ctx.model();
    if (event.op != "=" || ts_node_is_null(event.value) || syn.kind(event.target) != Kind::kAttribute) return;
    TSNode object = field(event.target, syn.fields().object);
    if (syn.kind(object) != Kind::kIdentifier || model.text(object) != "self") return;
    const ClassInfo* cls = model.enclosing_class();
    if (!cls) return;
    std::string key = cls->qualname + "." + std::string(model.text(field(event.target, syn.fields().attribute)));
    if (syn.kind(event.value) != Kind::kCall) {
      attributes_.erase(key);
      return;
    }
    auto q = model.resolve_qualified_name(field(event.value, syn.fields().function));
    if (!q) {
      attributes_.erase(key);
      return;
    }
    TSNode args = field(event.value, syn.fields().arguments);
    bool inplace = false;
    uint32_t n = ts_node_is_null(args) ? 0 : ts_node_named_child_count(args);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode a = ts_node_named_child(args, i);
      if (syn.kind(a) == Kind::kKeywordArgument && model.text(field(a, syn.fields().name)) == "inplace" &&
          syn.kind(field(a, syn.fields().value)) == Kind::kTrue) {
        inplace = true;
      }
    }
    attributes_[key] = Attribute{*q, inplace};
  }

  // The type of `self.<attr>` when it is called in forward.
  const Attribute* attribute(TSNode callee, RuleContext& ctx) const {
    const Syntax& syn = Syntax::get();
    const SemanticModel& model = ctx.model();
    if (syn.kind(callee) != Kind::kAttribute) return nullptr;
    TSNode object = field(callee, syn.fields().object);
    if (syn.kind(object) != Kind::kIdentifier || model.text(object) != "self") return nullptr;
    const ClassInfo* cls = model.enclosing_class();
    if (!cls) return nullptr;
    auto it = attributes_.find(cls->qualname + "." + std::string(model.text(field(callee, syn.fields().attribute))));
    return it == attributes_.end() ? nullptr : &it->second;
  }

  // The operation when `value` is a call whose backward keeps its result.
  std::optional<std::string> output_saver(TSNode value, RuleContext& ctx) const {
    const Syntax& syn = Syntax::get();
    const SemanticModel& model = ctx.model();
    value = unparenthesized(value);
    if (syn.kind(value) != Kind::kCall) return std::nullopt;
    TSNode callee = field(value, syn.fields().function);
    if (const Attribute* a = attribute(callee, ctx)) {
      if (saves_output_module(a->type)) return "`" + std::string(model.text(callee)) + "` (`" + a->type + "`)";
      return std::nullopt;
    }
    if (auto q = model.resolve_qualified_name(callee)) {
      if (saves_output_function(*q)) return "`" + *q + "`";
      return std::nullopt;
    }
    if (syn.kind(callee) == Kind::kAttribute) {
      std::string_view method = model.text(field(callee, syn.fields().attribute));
      TSNode object = field(callee, syn.fields().object);
      if (saves_output_method(method) && syn.kind(object) == Kind::kIdentifier)
        return "`." + std::string(method) + "()`";
    }
    return std::nullopt;
  }

  // Whether `value` computes an activation: a layer or torch operation applied to the
  // module's input, a view or alias of one. Fresh tensors, numbers and shapes are not.
  bool is_activation(TSNode value, const State& st, RuleContext& ctx) const {
    const Syntax& syn = Syntax::get();
    const SemanticModel& model = ctx.model();
    value = unparenthesized(value);
    Kind k = syn.kind(value);
    if (k == Kind::kIdentifier) {
      auto it = st.values.find(std::string(model.text(value)));
      return it != st.values.end() && it->second.activation;
    }
    if (k == Kind::kSubscript) return is_activation(field(value, syn.fields().value), st, ctx);
    if (k == Kind::kConditionalExpression) {
      return is_activation(ts_node_named_child(value, 0), st, ctx) ||
             is_activation(ts_node_named_child(value, 2), st, ctx);
    }
    if (std::string_view(ts_node_type(value)) == "binary_operator") {
      return is_activation(field(value, syn.fields().left), st, ctx) ||
             is_activation(field(value, syn.fields().right), st, ctx);
    }
    if (k != Kind::kCall) return false;
    TSNode callee = field(value, syn.fields().function);
    if (syn.kind(callee) == Kind::kAttribute) {
      std::string_view method = model.text(field(callee, syn.fields().attribute));
      if (is_scalar_method(method) || is_factory_method(method)) return false;
    }
    if (auto q = model.resolve_qualified_name(callee)) {
      if (q->starts_with("torch.")) return !is_factory(*q);
      // `self.block(x)`, `self.helper(x)`: the module's own layers and methods.
      const ClassInfo* cls = model.enclosing_class();
      return cls && q->starts_with(cls->qualname + ".");
    }
    // `x.view(...)`, `x.permute(...)`, `self.layers[i](x)`: methods of activations.
    if (syn.kind(callee) == Kind::kAttribute) return is_activation(field(callee, syn.fields().object), st, ctx);
    if (syn.kind(callee) == Kind::kSubscript) {
      TSNode object = field(callee, syn.fields().value);
      return syn.kind(object) == Kind::kAttribute && model.text(field(object, syn.fields().object)) == "self";
    }
    return false;
  }

  void save_input(TSNode operand, const std::string& by, uint32_t line, State& st, RuleContext& ctx) {
    operand = unparenthesized(operand);
    if (ts_node_is_null(operand) || Syntax::get().kind(operand) != Kind::kIdentifier) return;
    auto it = st.values.find(std::string(ctx.text(operand)));
    if (it == st.values.end() || !it->second.activation || it->second.saved) return;
    it->second.saved = Saved{by, line, false};
  }

  static bool is_number(TSNode n) {
    if (ts_node_is_null(n)) return true;
    Kind k = Syntax::get().kind(n);
    return k == Kind::kInteger || k == Kind::kFloat || std::string_view(ts_node_type(n)) == "unary_operator";
  }

  // Tensors the expression hands to operations that keep them for backward.
  void mark_inputs(TSNode node, State& st, RuleContext& ctx, int depth) {
    if (ts_node_is_null(node) || depth > 24) return;
    const Syntax& syn = Syntax::get();
    const SemanticModel& model = ctx.model();
    Kind k = syn.kind(node);
    if (k == Kind::kLambda || k == Kind::kString) return;
    uint32_t line = ts_node_start_point(node).row + 1;
    if (std::string_view(ts_node_type(node)) == "binary_operator") {
      TSNode op = ts_node_child(node, 1);
      std::string_view o = ts_node_is_null(op) ? std::string_view() : model.text(op);
      TSNode left = field(node, syn.fields().left), right = field(node, syn.fields().right);
      if (o == "*" || o == "/" || o == "@") {
        // A product with a constant keeps nothing; with another tensor it keeps both.
        if (!is_number(right)) save_input(left, "`" + std::string(o) + "`", line, st, ctx);
        if (!is_number(left)) save_input(right, "`" + std::string(o) + "`", line, st, ctx);
      } else if (o == "**") {
        save_input(left, "`**`", line, st, ctx);
      }
    } else if (k == Kind::kCall) {
      TSNode callee = field(node, syn.fields().function);
      TSNode args = field(node, syn.fields().arguments);
      std::string by;
      if (const Attribute* a = attribute(callee, ctx)) {
        if (saves_input_module(a->type)) by = "`" + std::string(model.text(callee)) + "` (`" + a->type + "`)";
      } else if (auto q = model.resolve_qualified_name(callee)) {
        if (saves_input_function(*q)) by = "`" + *q + "`";
      } else if (syn.kind(callee) == Kind::kAttribute) {
        std::string_view method = model.text(field(callee, syn.fields().attribute));
        if (saves_input_method(method)) {
          by = "`." + std::string(method) + "()`";
          save_input(field(callee, syn.fields().object), by, line, st, ctx);
        }
      }
      if (!by.empty() && !ts_node_is_null(args)) {
        uint32_t n = ts_node_named_child_count(args);
        for (uint32_t i = 0; i < n; ++i) {
          TSNode a = ts_node_named_child(args, i);
          if (syn.kind(a) == Kind::kKeywordArgument) continue;
          save_input(a, by, line, st, ctx);
        }
      }
    }
    for (TSNode child : named_children(node)) mark_inputs(child, st, ctx, depth + 1);
  }

  void inplace(const std::string& name, TSNode node, const std::string& what, const std::string& fix, State& st,
               RuleContext& ctx) {
    auto it = st.values.find(name);
    if (it == st.values.end() || it->second.reported || !it->second.activation) return;
    it->second.reported = true;  // one finding per value
    if (const auto& s = it->second.saved) {
      std::string role = s->output ? "the output of " + s->by : "an input of " + s->by;
      ctx.report(node, what + " modifies `" + name + "` in place, but it is " + role + " (line " +
                           std::to_string(s->line) +
                           "), which autograd saved for the backward pass: backward fails with \"one of the "
                           "variables needed for gradient computation has been modified by an inplace operation\"; " +
                           fix);
      return;
    }
    ctx.report(node, what + " modifies the activation `" + name +
                         "` in place inside `forward`: when autograd saved it for the backward pass (outputs of "
                         "sigmoid, tanh, softmax or ReLU, inputs of products and linear layers), backward fails with "
                         "\"modified by an inplace operation\", and every alias of the tensor changes too; " +
                         fix);
  }

  std::unordered_map<std::string, State> states_;
  std::unordered_map<std::string, Attribute> attributes_;
};

}  // namespace
}  // namespace python

python::RuleEntry inplace_on_autograd_tensor_rule() {
  return python::rule_entry<python::InplaceOnAutogradTensor>(catalog_entry("TL110"));
}

}  // namespace torchlint
