// The stacks of layers of nn_stack.h (TL501-TL506), compiled once here rather than in
// each rule that includes it: what a layer or call is, Tracker's summaries of Sequential
// literals, helpers and `self.x` attributes, and the forward dataflow of a module class
// (Tracker::analyse).
#include "nn_stack.h"

#include <algorithm>

#include "core/name_table.h"
#include "core/text.h"

namespace torchlint::python::nn_stack {

// ------------------------------------------------------------------------------------
// Layers, calls and stacks.

Layer classify_layer(std::string_view q) {
  std::string_view n = nn_class(q);
  if (n.empty()) return Layer::kUnknown;
  if (api::nn_weight_layers().contains(n)) return Layer::kWeight;
  if (api::nn_norm_layers().contains(n)) return Layer::kNorm;
  if (n == "Sigmoid" || n == "Tanh") return Layer::kLegacyAct;
  if (n == "SELU") return Layer::kSelfNormAct;
  if (api::nn_activation_layers().contains(n)) return Layer::kActivation;
  if (api::nn_neutral_layers().contains(n) || n.ends_with("Loss")) return Layer::kNeutral;
  return Layer::kUnknown;  // Transformer layers, attention, containers, anything newer
}

bool is_weight_norm_wrapper(std::string_view q) {
  return q == "torch.nn.utils.spectral_norm" || q == "torch.nn.utils.weight_norm" ||
         q == "torch.nn.utils.parametrizations.spectral_norm" || q == "torch.nn.utils.parametrizations.weight_norm" ||
         q == "torch.nn.utils.spectral_norm.spectral_norm" || q == "torch.nn.utils.weight_norm.weight_norm";
}

CallCat categorize(const std::optional<std::string>& qualname) {
  if (!qualname) return CallCat::kNoName;
  std::string_view q = *qualname;
  if (api::join_functions().contains(q)) return CallCat::kJoin;
  if (api::normalization_functions().contains(q) || is_weight_norm_wrapper(q)) return CallCat::kNormFn;
  if (api::legacy_activation_functions().contains(q)) return CallCat::kLegacy;
  if (api::shape_and_dropout_functions().contains(q)) return CallCat::kShape;
  if (q == "torch.mul" || q == "torch.multiply") return CallCat::kMul;
  // Layers constructed or applied inside forward, and torch utilities that run modules
  // (checkpoint, jit, hub), are beyond the dataflow.
  if (q.starts_with("torch.nn.") && !q.starts_with("torch.nn.functional.")) return CallCat::kUnknown;
  if (q.starts_with("torch.utils.") || q.starts_with("torch.jit.") || q.starts_with("torch.hub.") ||
      q.starts_with("torch.func")) {
    return CallCat::kUnknown;
  }
  if (q.starts_with("torch.") || q.starts_with("builtins.") || q.starts_with("math.") || q.starts_with("einops.") ||
      q.starts_with("numpy.")) {
    return CallCat::kPure;
  }
  return CallCat::kUnknown;
}

bool call_returns_non_module(std::string_view s) {
  if (s == "torch.nn.Parameter" || s == "torch.nn.parameter.Parameter" || s == "torch.nn.Buffer" ||
      s == "torch.nn.UninitializedParameter" || s == "torch.nn.ParameterList" || s == "torch.nn.ParameterDict") {
    return true;
  }
  if (s.starts_with("torch.nn.") || s.starts_with("torch.jit.") || s.starts_with("torch.hub.") ||
      s == "torch.compile") {
    return s.starts_with("torch.nn.functional.") || s.starts_with("torch.nn.init.");
  }
  if (s.starts_with("torch.")) return true;
  return api::value_packages().contains(s.substr(0, s.find('.')));
}

void Stack::append(const Stack& s) {
  weights += s.weights;
  norm |= s.norm;
  self_norm |= s.self_norm;
  skip |= s.skip;
  unknown |= s.unknown;
  reported |= s.reported;
  leaves.insert(leaves.end(), s.leaves.begin(), s.leaves.end());
}

Stack Stack::either(const Stack& a, const Stack& b) {
  Stack s = a.weights >= b.weights ? a : b;
  s.norm = a.norm || b.norm;
  s.self_norm = a.self_norm || b.self_norm;
  s.skip = a.skip || b.skip;
  s.unknown = a.unknown || b.unknown;
  s.reported = a.reported || b.reported;
  return s;
}

Stack Tracker::summarize(TSNode expr, const SemanticModel& m, bool mark_nested, int depth) {
  Stack s;
  if (ts_node_is_null(expr) || depth > 16) {
    s.unknown = true;
    return s;
  }
  if (is_type(expr, "parenthesized_expression"))
    return summarize(ts_node_named_child(expr, 0), m, mark_nested, depth + 1);
  if (is_type(expr, "conditional_expression") && ts_node_named_child_count(expr) == 3) {
    TSNode a = ts_node_named_child(expr, 0), b = ts_node_named_child(expr, 2);
    if (is_type(a, "none")) return summarize(b, m, mark_nested, depth + 1);
    if (is_type(b, "none")) return summarize(a, m, mark_nested, depth + 1);
    return Stack::either(summarize(a, m, mark_nested, depth + 1), summarize(b, m, mark_nested, depth + 1));
  }
  if (!is_type(expr, "call")) {
    s.unknown = true;
    return s;
  }
  TSNode callee = child_by(expr, "function");
  TSNode args = child_by(expr, "arguments");
  auto q = m.resolve_qualified_name(callee);
  if (!q) {
    s.unknown = true;
    return s;
  }
  if (*q == kSequential || *q == kModuleList) {
    if (depth > 0 && mark_nested && *q == kSequential) nested_.insert(start_of(expr));
    s.reported = reported_.contains(start_of(expr));
    if (!is_type(args, "argument_list")) {
      s.unknown = true;
      return s;
    }
    std::vector<TSNode> items;
    for (TSNode a : named_children(args)) {
      if (is_type(a, "comment")) continue;
      items.push_back(a);
    }
    if (*q == kModuleList) {
      // nn.ModuleList([...]) or nn.ModuleList([layer for ...]) (counted once: a lower bound).
      if (items.size() != 1) {
        s.unknown = !items.empty();
        return s;
      }
      TSNode list = items[0];
      if (is_type(list, "list_comprehension")) return summarize(child_by(list, "body"), m, mark_nested, depth + 1);
      if (!is_type(list, "list")) {
        s.unknown = true;
        return s;
      }
      items.clear();
      for (TSNode a : named_children(list)) {
        if (!is_type(a, "comment")) items.push_back(a);
      }
    } else if (items.size() == 1 && is_type(items[0], "call")) {
      // nn.Sequential(OrderedDict([("conv", nn.Conv2d(...)), ...]))
      auto inner = m.resolve_qualified_name(child_by(items[0], "function"));
      if (inner && (*inner == "collections.OrderedDict" || *inner == "typing.OrderedDict")) {
        TSNode oargs = child_by(items[0], "arguments");
        TSNode list = is_type(oargs, "argument_list") && ts_node_named_child_count(oargs) == 1
                          ? ts_node_named_child(oargs, 0)
                          : TSNode{};
        if (!is_type(list, "list")) {
          s.unknown = true;
          return s;
        }
        items.clear();
        for (TSNode pair : named_children(list)) {
          if (is_type(pair, "comment")) continue;
          if (!is_type(pair, "tuple") || ts_node_named_child_count(pair) != 2) {
            s.unknown = true;
            return s;
          }
          items.push_back(ts_node_named_child(pair, 1));
        }
      }
    }
    for (TSNode item : items) {
      if (is_type(item, "list_splat") || is_type(item, "dictionary_splat") || is_type(item, "keyword_argument")) {
        s.unknown = true;
        continue;
      }
      s.append(summarize(item, m, mark_nested, depth + 1));
    }
    return s;
  }
  if (is_weight_norm_wrapper(*q)) {
    TSNode first = is_type(args, "argument_list") ? ts_node_named_child(args, 0) : TSNode{};
    s = summarize(first, m, mark_nested, depth + 1);
    s.norm = true;
    return s;
  }
  Layer kind = classify_layer(*q);
  if (kind == Layer::kUnknown) {
    // `def conv3x3(cin, cout): return nn.Conv2d(cin, cout, 3, padding=1)`
    if (auto h = helpers_.find(*q); h != helpers_.end()) {
      s = h->second;
      return s;
    }
    auto it = blocks_.find(*q);
    if (it == blocks_.end() || !it->second.known) {
      s.unknown = true;
      return s;
    }
    const BlockSummary& b = it->second;
    s.weights = b.depth;
    s.norm = b.norm;
    s.self_norm = b.self_norm;
    s.skip = b.skip;
    s.reported = b.reported;
    s.leaves.push_back({Layer::kBlock, expr, b.depth});
    return s;
  }
  if (kind == Layer::kWeight) s.weights = 1;
  if (kind == Layer::kNorm) s.norm = true;
  if (kind == Layer::kSelfNormAct) s.self_norm = true;
  s.leaves.push_back({kind, expr, kind == Layer::kWeight ? 1 : 0});
  return s;
}

void Tracker::reported_sequential(TSNode call, const SemanticModel& m) {
  reported_.insert(start_of(call));
  if (ClassAcc* acc = current_class(m)) acc->reported = true;
}

void Tracker::on_function_end(const FunctionState& fn, const SemanticModel& m) {
  if (fn.is_module_level || ts_node_is_null(fn.node)) return;
  TSNode body = child_by(fn.node, "body");
  TSNode ret{};
  bool first = true;
  for (TSNode st : named_children(body)) {
    bool is_first = first;
    first = false;
    if (is_type(st, "comment")) continue;
    if (is_type(st, "expression_statement") && is_type(ts_node_named_child(st, 0), "string") && ts_node_is_null(ret) &&
        is_first) {
      continue;  // docstring
    }
    if (!ts_node_is_null(ret) || !is_type(st, "return_statement")) return;
    ret = st;
  }
  if (ts_node_is_null(ret)) return;
  TSNode value = ts_node_named_child(ret, 0);
  if (!is_type(value, "call")) return;
  Stack stack = summarize(value, m);
  if (!stack.unknown) helpers_[fn.qualname] = std::move(stack);
}

ClassAcc* Tracker::current_class(const SemanticModel& m) {
  const ClassInfo* cls = m.enclosing_class();
  if (!cls || !cls->is_module) return nullptr;
  return &classes_[cls->qualname];
}

void Tracker::on_call(const CallEvent& call, const SemanticModel& m) {
  ClassAcc* acc = current_class(m);
  if (!acc) return;
  CallCat cat = categorize(call.qualname);
  calls_[start_of(call.node)] = cat;
  if (cat == CallCat::kNormFn) acc->functional_norm = true;
  // Submodules registered by name are beyond the attribute summaries.
  bool on_self =
      !ts_node_is_null(call.receiver) && is_type(call.receiver, "identifier") && m.text(call.receiver) == "self";
  if (on_self && (call.method == "add_module" || call.method == "register_module")) acc->dynamic = true;
  if (call.qualname && (*call.qualname == "builtins.setattr" || *call.qualname == "builtins.vars")) acc->dynamic = true;
  // `self.blocks.append(...)`: the attribute's final contents are not its assignment.
  if (!ts_node_is_null(call.receiver) && is_type(call.receiver, "attribute")) {
    TSNode obj = child_by(call.receiver, "object");
    if (is_type(obj, "identifier") && m.text(obj) == "self") {
      if (api::module_container_adders().contains(call.method) && adds_module(call, m)) {
        std::string name(m.text(child_by(call.receiver, "attribute")));
        acc->attrs[name].kind = AttrKind::kUnknownModule;
      }
    }
  }
}

void Tracker::on_assign(const AssignEvent& event, const SemanticModel& m) {
  if (!is_type(event.target, "attribute")) {
    // `self.heads["a"] = nn.Linear(...)`
    if (is_type(event.target, "subscript")) {
      TSNode value = child_by(event.target, "value");
      if (is_type(value, "attribute")) {
        TSNode obj = child_by(value, "object");
        ClassAcc* acc = current_class(m);
        if (acc && is_type(obj, "identifier") && m.text(obj) == "self") {
          acc->attrs[std::string(m.text(child_by(value, "attribute")))].kind = AttrKind::kUnknownModule;
        }
      }
    }
    return;
  }
  TSNode obj = child_by(event.target, "object");
  if (!is_type(obj, "identifier") || m.text(obj) != "self") return;
  ClassAcc* acc = current_class(m);
  if (!acc) return;
  std::string name(m.text(child_by(event.target, "attribute")));
  Attr value = event.op == "=" ? classify_value(event.value, m) : Attr{AttrKind::kNotModule, {}};
  if (event.op != "=" && acc->attrs.contains(name) && acc->attrs[name].kind != AttrKind::kNotModule) {
    value.kind = AttrKind::kUnknownModule;  // `self.layers += [...]`
  }
  auto it = acc->attrs.find(name);
  if (it == acc->attrs.end()) {
    acc->attrs.emplace(std::move(name), std::move(value));
    return;
  }
  Attr& old = it->second;
  // Two assignments (branches, a reset): the attribute may hold either.
  if (old.kind == AttrKind::kNotModule) {
    // `self.norm = None` then `self.norm = nn.LayerNorm(d)`: None is never called.
    old = std::move(value);
  } else if (value.kind == AttrKind::kNotModule) {
    // keep the module
  } else if (old.kind == AttrKind::kKnown && value.kind == AttrKind::kKnown) {
    old.stack = Stack::either(old.stack, value.stack);
  } else if (old.kind == AttrKind::kUnknownModule || value.kind == AttrKind::kUnknownModule) {
    old.kind = AttrKind::kUnknownModule;
  } else {
    old.kind = AttrKind::kOpaque;
  }
}

Attr Tracker::classify_value(TSNode v, const SemanticModel& m) {
  Attr a;
  if (ts_node_is_null(v)) return a;
  static const NameSet values = {
      "integer",
      "float",
      "string",
      "concatenated_string",
      "true",
      "false",
      "none",
      "ellipsis",
      "binary_operator",
      "unary_operator",
      "comparison_operator",
      "boolean_operator",
      "not_operator",
  };
  std::string_view type = ts_node_type(v);
  if (values.contains(type)) return a;
  if (type == "call" || type == "conditional_expression" || type == "parenthesized_expression") {
    Stack s = summarize(v, m);
    if (!s.unknown) {
      a.kind = AttrKind::kKnown;
      a.stack = std::move(s);
      return a;
    }
    if (type == "call") {
      auto q = m.resolve_qualified_name(child_by(v, "function"));
      if (returns_value(v, q, m)) return a;
    }
    a.kind = AttrKind::kUnknownModule;
    return a;
  }
  if (type == "list" || type == "tuple" || type == "dictionary" || type == "set" || type == "list_comprehension" ||
      type == "dictionary_comprehension" || type == "generator_expression") {
    // Containers of constructions may hold (unregistered) modules that forward runs.
    if (holds_construction(v, m, 0)) a.kind = AttrKind::kUnknownModule;
    return a;
  }
  a.kind = AttrKind::kOpaque;
  return a;
}

bool Tracker::returns_value(TSNode call, const std::optional<std::string>& q, const SemanticModel& m) {
  if (q) return call_returns_non_module(*q);
  TSNode callee = child_by(call, "function");
  if (!is_type(callee, "attribute")) return false;
  return api::value_methods().contains(m.text(child_by(callee, "attribute")));
}

bool Tracker::adds_module(const CallEvent& call, const SemanticModel& m) {
  if (ts_node_is_null(call.arguments)) return false;
  uint32_t n = ts_node_named_child_count(call.arguments);
  for (uint32_t i = 0; i < n; ++i) {
    TSNode a = ts_node_named_child(call.arguments, i);
    if (is_type(a, "keyword_argument")) a = child_by(a, "value");
    if (is_type(a, "identifier")) {
      ValueKind k = m.infer_value(a).kind;
      if (k == ValueKind::kModel || k == ValueKind::kInstance || k == ValueKind::kLoss) return true;
      continue;
    }
    if (holds_construction(a, m, 0)) return true;
  }
  return false;
}

bool Tracker::holds_construction(TSNode v, const SemanticModel& m, int depth) {
  if (ts_node_is_null(v) || depth > 8) return false;
  if (is_type(v, "call")) {
    auto q = m.resolve_qualified_name(child_by(v, "function"));
    return !returns_value(v, q, m);
  }
  for (TSNode child : named_children(v)) {
    if (holds_construction(child, m, depth + 1)) return true;
  }
  return false;
}

// ------------------------------------------------------------------------------------
// The forward dataflow (Tracker::analyse): how deep the stack of weight layers between
// normalizations runs through forward(), and which values are outputs of legacy
// activations. Interp is the class Tracker befriends, so it lives in this namespace (not
// an anonymous one).

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
  if (ascii_ifind(last_dotted_part(cls.qualname), "norm") != std::string_view::npos) flow.any_norm = true;
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
