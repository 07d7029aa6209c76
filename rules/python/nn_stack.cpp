// The forward dataflow of a module class (Tracker::analyse): how deep the stack of weight
// layers between normalizations runs through forward(), and which values are outputs of
// legacy activations. Compiled once here rather than in each of the rules that share
// nn_stack.h (TL501-TL506).
#include "nn_stack.h"

namespace torchlint::python::nn_stack {

// Interp is the class Tracker befriends, so it lives in this namespace (not an anonymous one).
// ------------------------------------------------------------------------------------
// The forward dataflow.

struct Value {
  int depth = 0;                 // weight layers applied along the way
  std::vector<uint64_t> legacy;  // legacy activations this value is the output of
  const Stack* layer = nullptr;  // a loop variable over a container attribute
};

static Value merge(const Value& a, const Value& b) {
  Value v;
  v.depth = std::max(a.depth, b.depth);
  v.legacy = a.legacy;
  for (uint64_t x : b.legacy) {
    if (std::find(v.legacy.begin(), v.legacy.end(), x) == v.legacy.end()) v.legacy.push_back(x);
  }
  v.layer = a.layer == b.layer ? a.layer : nullptr;
  return v;
}

using Env = std::unordered_map<std::string, Value>;

class Interp {
 public:
  Interp(const ClassAcc& acc, const std::unordered_map<std::string, TSNode>& methods,
         const std::unordered_map<uint64_t, CallCat>& calls, const SemanticModel& m)
      : acc_(acc), methods_(methods), calls_(calls), m_(m) {}

  bool ok = true;
  bool inherits_report = false;
  int max_depth = 0;
  bool join = false;
  bool functional_norm = false;
  std::unordered_map<uint64_t, LegacyUse> acts;
  std::unordered_set<uint64_t> hidden, gating;

  Value run_method(TSNode fn, const std::vector<std::pair<std::string, Value>>& keyword_args,
                   const std::vector<Value>& positional) {
    if (!ok) return {};
    if (active_.size() >= 4 || std::find(active_.begin(), active_.end(), start_of(fn)) != active_.end()) {
      ok = false;
      return {};
    }
    active_.push_back(start_of(fn));
    Env env;
    TSNode params = child_by(fn, "parameters");
    uint32_t n = ts_node_is_null(params) ? 0 : ts_node_named_child_count(params);
    size_t next = 0;
    bool first = true;
    for (uint32_t i = 0; i < n; ++i) {
      TSNode p = ts_node_named_child(params, i);
      std::string_view type = ts_node_type(p);
      TSNode name_node{};
      if (type == "identifier")
        name_node = p;
      else if (type == "typed_parameter")
        name_node = ts_node_named_child(p, 0);
      else if (type == "default_parameter" || type == "typed_default_parameter")
        name_node = child_by(p, "name");
      else if (type == "list_splat_pattern" || type == "dictionary_splat_pattern") {
        if (!positional.empty() || !keyword_args.empty()) ok = false;  // spread arguments: not followed
        continue;
      } else {
        continue;  // `*`, `/` separators
      }
      if (!is_type(name_node, "identifier")) continue;
      std::string name(m_.text(name_node));
      if (first) {  // self
        first = false;
        continue;
      }
      Value v;
      if (next < positional.size()) v = positional[next++];
      for (const auto& [k, kv] : keyword_args) {
        if (k == name) v = kv;
      }
      env[name] = v;
    }
    Value ret;
    exec_block(child_by(fn, "body"), env, ret);
    active_.pop_back();
    return ret;
  }

 private:
  void note(const Value& v) { max_depth = std::max(max_depth, v.depth); }

  void mark(std::unordered_set<uint64_t>& set, const Value& v) {
    for (uint64_t x : v.legacy) set.insert(x);
  }

  void exec_block(TSNode block, Env& env, Value& ret) {
    if (!ok || ts_node_is_null(block)) return;
    for (TSNode stmt : named_children(block)) {
      if (!ok) break;
      exec_stmt(stmt, env, ret);
    }
  }

  void bind(TSNode target, const Value& v, Env& env) {
    if (is_type(target, "identifier")) {
      env[std::string(m_.text(target))] = v;
    } else if (is_type(target, "pattern_list") || is_type(target, "tuple_pattern") || is_type(target, "tuple") ||
               is_type(target, "list_pattern") || is_type(target, "list")) {
      uint32_t n = ts_node_named_child_count(target);
      for (uint32_t i = 0; i < n; ++i) {
        Value part = v;
        part.layer = nullptr;
        bind(ts_node_named_child(target, i), part, env);
      }
    } else if (is_type(target, "list_splat_pattern")) {
      bind(ts_node_named_child(target, 0), v, env);
    }
    // attributes and subscripts (`self.cache = x`, `outs[i] = x`) hold no chain state
  }

  void exec_assignment(TSNode node, Env& env) {
    TSNode right = child_by(node, "right");
    if (ts_node_is_null(right)) return;  // annotation only
    Value v;
    if (is_type(right, "assignment")) {
      exec_assignment(right, env);
      TSNode inner = right;
      while (is_type(child_by(inner, "right"), "assignment")) inner = child_by(inner, "right");
      v = eval(child_by(inner, "left"), env);
    } else {
      v = eval(right, env);
    }
    bind(child_by(node, "left"), v, env);
  }

  void exec_stmt(TSNode stmt, Env& env, Value& ret) {
    if (!ok) return;
    std::string_view type = ts_node_type(stmt);
    if (type == "comment" || type == "pass_statement" || type == "raise_statement" || type == "assert_statement" ||
        type == "delete_statement") {
      return;
    }
    if (type == "expression_statement") {
      TSNode inner = ts_node_named_child(stmt, 0);
      if (is_type(inner, "assignment")) {
        exec_assignment(inner, env);
      } else if (is_type(inner, "augmented_assignment")) {
        TSNode op = child_by(inner, "operator");
        std::string_view ops = m_.text(op);
        Value r = eval(child_by(inner, "right"), env);
        TSNode left = child_by(inner, "left");
        Value l = is_type(left, "identifier") ? eval(left, env) : Value{};
        if (ops == "+=" || ops == "-=") join = true;
        if (ops == "*=") {
          mark(gating, r);
          mark(gating, l);
        }
        Value v = merge(l, r);
        v.legacy.clear();
        if (is_type(left, "identifier")) env[std::string(m_.text(left))] = v;
      } else if (is_type(inner, "yield") || is_type(inner, "await")) {
        ok = false;
      } else {
        eval(inner, env);
      }
      return;
    }
    if (type == "return_statement") {
      TSNode value = ts_node_named_child(stmt, 0);
      if (!ts_node_is_null(value)) ret = merge(ret, eval(value, env));
      return;
    }
    if (type == "if_statement") {
      eval(child_by(stmt, "condition"), env);
      Env base = env;
      std::vector<Env> outs;
      Env first = base;
      exec_block(child_by(stmt, "consequence"), first, ret);
      outs.push_back(std::move(first));
      bool has_else = false;
      for (TSNode c : named_children(stmt)) {
        if (is_type(c, "elif_clause")) {
          eval(child_by(c, "condition"), base);
          Env branch = base;
          exec_block(child_by(c, "consequence"), branch, ret);
          outs.push_back(std::move(branch));
        } else if (is_type(c, "else_clause")) {
          has_else = true;
          Env branch = base;
          exec_block(child_by(c, "body"), branch, ret);
          outs.push_back(std::move(branch));
        }
      }
      if (!has_else) outs.push_back(base);
      env.clear();
      for (const Env& e : outs) {
        for (const auto& [k, v] : e) {
          auto it = env.find(k);
          env[k] = it == env.end() ? v : merge(it->second, v);
        }
      }
      return;
    }
    if (type == "with_statement") {
      exec_block(child_by(stmt, "body"), env, ret);
      return;
    }
    if (type == "for_statement") {
      exec_for(stmt, env, ret);
      return;
    }
    ok = false;  // while, try, match, nested definitions, global/nonlocal
  }

  // `for layer in self.layers: x = layer(x)` (or over enumerate(self.layers)): the
  // container's layers chain one after another.
  void exec_for(TSNode stmt, Env& env, Value& ret) {
    TSNode left = child_by(stmt, "left");
    TSNode right = child_by(stmt, "right");
    if (!ts_node_is_null(child_by(stmt, "alternative"))) {
      ok = false;
      return;
    }
    TSNode loop_var = left;
    if (is_type(right, "call")) {
      auto q = m_.resolve_qualified_name(child_by(right, "function"));
      TSNode args = child_by(right, "arguments");
      if (!q || *q != "builtins.enumerate" || !is_type(args, "argument_list") || ts_node_named_child_count(args) != 1 ||
          !is_type(left, "pattern_list") || ts_node_named_child_count(left) != 2) {
        ok = false;
        return;
      }
      right = ts_node_named_child(args, 0);
      loop_var = ts_node_named_child(left, 1);
    }
    const Attr* attr = self_attr(right);
    if (!attr || attr->kind != AttrKind::kKnown || !is_type(loop_var, "identifier")) {
      ok = false;
      return;
    }
    // The body must thread one value through the layers: only assignments to names.
    TSNode body = child_by(stmt, "body");
    for (TSNode s : named_children(body)) {
      if (is_type(s, "comment")) continue;
      TSNode inner = is_type(s, "expression_statement") ? ts_node_named_child(s, 0) : TSNode{};
      if (!is_type(inner, "assignment") || !is_type(child_by(inner, "left"), "identifier")) {
        ok = false;
        return;
      }
    }
    Value layer;
    layer.layer = &attr->stack;
    env[std::string(m_.text(loop_var))] = layer;
    exec_block(body, env, ret);
  }

  // The attribute `self.name` names, or null.
  const Attr* self_attr(TSNode expr) const {
    if (!is_type(expr, "attribute")) return nullptr;
    TSNode obj = child_by(expr, "object");
    if (!is_type(obj, "identifier") || m_.text(obj) != "self") return nullptr;
    auto it = acc_.attrs.find(std::string(m_.text(child_by(expr, "attribute"))));
    return it == acc_.attrs.end() ? nullptr : &it->second;
  }

  Value apply_stack(const Stack& stack, const Value& in, TSNode call) {
    Value out;
    out.depth = in.depth + stack.weights;
    if (stack.weights > 0) mark(hidden, in);
    if (stack.skip) join = true;
    if (stack.reported) inherits_report = true;
    if (stack.ends_with_legacy()) {
      out.legacy.push_back(start_of(call));
      auto q = m_.resolve_qualified_name(child_by(stack.leaves.back().node, "function"));
      acts[start_of(call)] = {call, q ? std::string(nn_class(*q)) : "Sigmoid/Tanh"};
    } else if (stack.weights == 0) {
      out.legacy = in.legacy;  // dropout, identity, another activation
    }
    note(out);
    return out;
  }

  Value eval_args(TSNode args, Env& env, std::vector<Value>* positional,
                  std::vector<std::pair<std::string, Value>>* keywords) {
    Value all;
    if (ts_node_is_null(args)) return all;
    if (!is_type(args, "argument_list")) {
      ok = false;  // f(x for x in y)
      return all;
    }
    for (TSNode a : named_children(args)) {
      if (is_type(a, "comment")) continue;
      if (is_type(a, "keyword_argument")) {
        Value v = eval(child_by(a, "value"), env);
        if (keywords) keywords->emplace_back(std::string(m_.text(child_by(a, "name"))), v);
        all = merge(all, v);
        continue;
      }
      if (is_type(a, "list_splat") || is_type(a, "dictionary_splat")) {
        if (positional) ok = false;  // spread into a method: parameters unknown
        all = merge(all, eval(ts_node_named_child(a, 0), env));
        continue;
      }
      Value v = eval(a, env);
      if (positional) positional->push_back(v);
      all = merge(all, v);
    }
    all.layer = nullptr;
    return all;
  }

  Value eval_call(TSNode call, Env& env) {
    TSNode callee = child_by(call, "function");
    TSNode args = child_by(call, "arguments");
    if (is_type(callee, "attribute")) {
      TSNode obj = child_by(callee, "object");
      if (is_type(obj, "identifier") && m_.text(obj) == "self") {
        std::string name(m_.text(child_by(callee, "attribute")));
        auto method = methods_.find(name);
        if (method != methods_.end()) {
          std::vector<Value> positional;
          std::vector<std::pair<std::string, Value>> keywords;
          eval_args(args, env, &positional, &keywords);
          if (!ok) return {};
          Value r = run_method(method->second, keywords, positional);
          note(r);
          return r;
        }
        const Attr* attr = self_attr(callee);
        if (!attr || attr->kind != AttrKind::kKnown) {
          ok = false;  // a submodule torchlint cannot see into, or an inherited method
          return {};
        }
        return apply_stack(attr->stack, eval_args(args, env, nullptr, nullptr), call);
      }
    }
    if (is_type(callee, "identifier")) {
      auto it = env.find(std::string(m_.text(callee)));
      if (it != env.end() && it->second.layer) {
        const Stack* stack = it->second.layer;
        return apply_stack(*stack, eval_args(args, env, nullptr, nullptr), call);
      }
    }
    auto cat_it = calls_.find(start_of(call));
    CallCat cat = cat_it == calls_.end() ? CallCat::kUnknown : cat_it->second;
    if (cat == CallCat::kNoName) {
      if (!is_type(callee, "attribute")) {
        ok = false;  // a local callable
        return {};
      }
      TSNode obj = child_by(callee, "object");
      if (const Attr* attr = self_attr(obj); attr && attr->kind != AttrKind::kNotModule) {
        ok = false;  // a method of a submodule (`self.encoder.encode(x)`)
        return {};
      }
      if (is_type(obj, "identifier") && m_.text(obj) == "self") {
        ok = false;
        return {};
      }
      if (is_type(obj, "call")) {
        auto q = m_.resolve_qualified_name(child_by(obj, "function"));
        if (q && *q == "builtins.super") {
          ok = false;  // the base class's forward
          return {};
        }
      }
      Value recv = eval(obj, env);
      Value in = merge(recv, eval_args(args, env, nullptr, nullptr));
      std::string_view method = m_.text(child_by(callee, "attribute"));
      Value out;
      out.depth = in.depth;
      if (method == "sigmoid" || method == "tanh" || method == "sigmoid_" || method == "tanh_") {
        out.legacy.push_back(start_of(call));
        acts[start_of(call)] = {call, method.starts_with("sigmoid") ? "Sigmoid" : "Tanh"};
      } else if (method == "add" || method == "add_" || method == "append" || method == "extend") {
        // `outputs.append(h)` collects values to combine later
        join = true;
      } else if (method == "std" || method == "var" || method == "rsqrt" || method == "norm") {
        functional_norm = true;  // hand-written normalization
      } else if (method == "mul" || method == "mul_" || method == "multiply" || method == "addcmul" ||
                 method == "addcmul_" || method == "lerp" || method == "lerp_") {
        mark(gating, in);
      } else if (api::shape_and_cast_methods().contains(method)) {
        out.legacy = in.legacy;
      }
      note(out);
      return out;
    }
    Value in = eval_args(args, env, nullptr, nullptr);
    Value out;
    out.depth = in.depth;
    switch (cat) {
      case CallCat::kJoin:
        join = true;
        break;
      case CallCat::kNormFn:
        functional_norm = true;
        break;
      case CallCat::kLegacy: {
        out.legacy.push_back(start_of(call));
        auto q = m_.resolve_qualified_name(callee);
        acts[start_of(call)] = {call, q && q->ends_with("tanh") ? "Tanh" : "Sigmoid"};
        break;
      }
      case CallCat::kMul:
        mark(gating, in);
        break;
      case CallCat::kShape:
        out.legacy = in.legacy;
        break;
      case CallCat::kPure:
        break;
      case CallCat::kUnknown:
      case CallCat::kNoName:
        ok = false;
        return {};
    }
    note(out);
    return out;
  }

  Value eval(TSNode e, Env& env) {
    if (!ok || ts_node_is_null(e)) return {};
    if (++eval_depth_ > 400) ok = false;  // generated code: not worth following
    Value v = ok ? eval_inner(e, env) : Value{};
    --eval_depth_;
    return v;
  }

  Value eval_inner(TSNode e, Env& env) {
    std::string_view type = ts_node_type(e);
    if (type == "identifier") {
      auto it = env.find(std::string(m_.text(e)));
      return it == env.end() ? Value{} : it->second;
    }
    if (type == "call") return eval_call(e, env);
    if (type == "attribute") {
      TSNode obj = child_by(e, "object");
      if (is_type(obj, "identifier") && m_.text(obj) == "self") return {};  // a submodule or value used as a value
      Value v = eval(obj, env);
      v.layer = nullptr;
      return v;
    }
    if (type == "binary_operator") {
      Value l = eval(child_by(e, "left"), env);
      Value r = eval(child_by(e, "right"), env);
      std::string_view op = m_.text(child_by(e, "operator"));
      Value v = merge(l, r);
      v.layer = nullptr;
      if (op == "+") join = true;
      if (op == "*") {
        mark(gating, v);
        v.legacy.clear();
      } else if (op != "-" && op != "/") {
        v.legacy.clear();
      }
      return v;
    }
    if (type == "parenthesized_expression" || type == "unary_operator" || type == "not_operator" ||
        type == "keyword_argument" || type == "list_splat" || type == "dictionary_splat" || type == "await") {
      if (type == "await") {
        ok = false;
        return {};
      }
      if (type == "keyword_argument") return eval(child_by(e, "value"), env);
      return eval(ts_node_named_child(e, 0), env);
    }
    if (type == "subscript") {
      Value v = eval(child_by(e, "value"), env);
      v.layer = nullptr;
      return v;
    }
    if (type == "tuple" || type == "list" || type == "expression_list" || type == "set" || type == "dictionary" ||
        type == "pair" || type == "conditional_expression" || type == "comparison_operator" ||
        type == "boolean_operator") {
      Value v;
      for (TSNode child : named_children(e)) v = merge(v, eval(child, env));
      v.layer = nullptr;
      if (type == "comparison_operator" || type == "boolean_operator") v.legacy.clear();
      return v;
    }
    static const NameSet literals = {
        "integer", "float", "string", "concatenated_string", "true", "false", "none", "ellipsis", "comment", "slice",
    };
    if (literals.contains(type)) return {};
    ok = false;  // comprehensions, lambdas, walrus: beyond this dataflow
    return {};
  }

  const ClassAcc& acc_;
  const std::unordered_map<std::string, TSNode>& methods_;
  const std::unordered_map<uint64_t, CallCat>& calls_;
  const SemanticModel& m_;
  std::vector<uint64_t> active_;
  int eval_depth_ = 0;
};

// Bases whose own forward and layers cannot hide anything: nn.Module and Lightning.
static bool plain_module_bases(const ClassInfo& cls) {
  if (cls.bases.empty()) return false;
  for (const std::string& b : cls.bases) {
    if (b != api::kModule && b != "lightning.LightningModule" && b != "pytorch_lightning.LightningModule" &&
        b != "lightning.pytorch.LightningModule" && b != "pytorch_lightning.core.LightningModule") {
      return false;
    }
  }
  return true;
}

Tracker::ClassFlow Tracker::analyse(const ClassInfo& cls, TSNode class_node, const SemanticModel& m) {
  ClassFlow flow;
  if (!cls.is_module) return flow;
  ClassAcc& acc = classes_[cls.qualname];
  flow.acc = &acc;
  flow.plain_bases = plain_module_bases(cls);
  flow.any_norm = acc.functional_norm;
  for (const auto& [name, attr] : acc.attrs) {
    if (attr.kind == AttrKind::kKnown) {
      flow.any_norm |= attr.stack.norm;
      flow.self_norm |= attr.stack.self_norm;
      flow.unknown_modules |= attr.stack.unknown;
    }
    if (attr.kind == AttrKind::kUnknownModule) flow.unknown_modules = true;
  }
  if (acc.dynamic) flow.unknown_modules = true;

  std::unordered_map<std::string, TSNode> methods;
  TSNode body = child_by(class_node, "body");
  for (TSNode c : named_children(body)) {
    if (is_type(c, "decorated_definition")) c = child_by(c, "definition");
    if (!is_type(c, "function_definition")) continue;
    std::string name(m.text(child_by(c, "name")));
    methods[name] = c;
  }
  auto fwd = methods.find("forward");
  if (fwd != methods.end() && flow.plain_bases) {
    Interp interp(acc, methods, calls_, m);
    std::vector<Value> none;
    interp.run_method(fwd->second, {}, none);
    flow.analysed = interp.ok;
    if (interp.ok) {
      flow.depth = interp.max_depth;
      flow.join = interp.join;
      flow.inherits_report = interp.inherits_report || acc.reported;
      flow.any_norm |= interp.functional_norm;
      std::vector<LegacyUse> hidden;
      for (uint64_t act : interp.hidden) {
        if (!interp.gating.contains(act)) hidden.push_back(interp.acts[act]);
      }
      std::sort(hidden.begin(), hidden.end(),
                [](const LegacyUse& a, const LegacyUse& b) { return start_of(a.node) < start_of(b.node); });
      flow.hidden_legacy = std::move(hidden);
    }
  }
  // A hand-written norm layer (`class LayerNorm(nn.Module)`) normalises whatever its
  // forward looks like.
  std::string lower_name = cls.qualname.substr(cls.qualname.rfind('.') + 1);
  for (char& c : lower_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower_name.find("norm") != std::string::npos) flow.any_norm = true;
  BlockSummary summary;
  summary.known = flow.analysed && !flow.unknown_modules;
  summary.depth = flow.depth;
  summary.norm = flow.any_norm;
  summary.self_norm = flow.self_norm;
  summary.skip = flow.join;
  summary.reported = flow.inherits_report || acc.reported;
  blocks_[cls.qualname] = summary;
  return flow;
}

}  // namespace torchlint::python::nn_stack
