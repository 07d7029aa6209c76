#pragma once
// What a stack of layers looks like, for the architecture rules TL502 (normalization),
// TL503 (residuals) and TL504 (legacy activations), which derive from StackRule (at the
// end). Each rule keeps its own Tracker: what it reported is part of the tracker's state.
//
// Two shapes of stack are understood:
//  - an `nn.Sequential(...)` literal, summarised from its arguments (nested Sequentials
//    flattened, blocks defined earlier in the same file looked up);
//  - an nn.Module class, whose `self.x = ...` attributes are summarised as they are
//    assigned and whose `forward` is interpreted as a small dataflow over local names
//    (the longest chain of weight layers, joins of earlier values, legacy activations
//    feeding weight layers, and their use as gates).
// Anything not understood (a custom block from another file, a project helper called in
// forward, `*layers`) makes the answer "unknown", and the rules stay silent on unknowns.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/name_table.h"
#include "python/api_tables.h"
#include "python/rule.h"

namespace torchlint::python::nn_stack {

inline TSNode child_by(TSNode n, std::string_view name) { return field(n, Syntax::get().field_id(name)); }
// Identifies a node: calls chained on a call (`f(x).view(...)`) share their start.
inline uint64_t start_of(TSNode n) { return (uint64_t{ts_node_start_byte(n)} << 32) | ts_node_end_byte(n); }

inline constexpr std::string_view kSequential = "torch.nn.Sequential";
inline constexpr std::string_view kModuleList = "torch.nn.ModuleList";

// "torch.nn.Conv2d" -> "Conv2d"; empty for anything that is not a torch.nn class.
inline std::string_view nn_class(std::string_view q) {
  if (!q.starts_with("torch.nn.")) return {};
  std::string_view last = q.substr(9);
  if (last.empty() || last.find('.') != std::string_view::npos || last[0] < 'A' || last[0] > 'Z') return {};
  return last;
}

enum class Layer : uint8_t {
  kWeight,       // Conv*/Linear: what "deep" counts
  kNorm,         // BatchNorm, LayerNorm, GroupNorm, InstanceNorm, RMSNorm, ...
  kLegacyAct,    // Sigmoid, Tanh
  kSelfNormAct,  // SELU: self-normalizing networks need no normalization layers
  kActivation,   // ReLU, GELU, SiLU, ...
  kNeutral,      // dropout, pooling, reshaping, padding, embeddings, recurrent layers
  kBlock,        // a module class defined earlier in this file
  kUnknown,
};

inline Layer classify_layer(std::string_view q) {
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

// Weight reparametrisations that normalise the wrapped layer's weight.
inline bool is_weight_norm_wrapper(std::string_view q) {
  return q == "torch.nn.utils.spectral_norm" || q == "torch.nn.utils.weight_norm" ||
         q == "torch.nn.utils.parametrizations.spectral_norm" || q == "torch.nn.utils.parametrizations.weight_norm" ||
         q == "torch.nn.utils.spectral_norm.spectral_norm" || q == "torch.nn.utils.weight_norm.weight_norm";
}

struct Leaf {
  Layer kind = Layer::kUnknown;
  TSNode node{};
  int weights = 0;  // kWeight: 1; kBlock: the block's depth
};

// A flattened chain of layers.
struct Stack {
  int weights = 0;
  bool norm = false;
  bool self_norm = false;
  bool skip = false;      // holds a block with a skip connection
  bool unknown = false;   // holds something torchlint cannot see into
  bool reported = false;  // holds a stack the rule already reported
  std::vector<Leaf> leaves;

  void append(const Stack& s) {
    weights += s.weights;
    norm |= s.norm;
    self_norm |= s.self_norm;
    skip |= s.skip;
    unknown |= s.unknown;
    reported |= s.reported;
    leaves.insert(leaves.end(), s.leaves.begin(), s.leaves.end());
  }
  // One of two alternatives (`a if c else b`, an attribute assigned in two branches).
  static Stack either(const Stack& a, const Stack& b) {
    Stack s = a.weights >= b.weights ? a : b;
    s.norm = a.norm || b.norm;
    s.self_norm = a.self_norm || b.self_norm;
    s.skip = a.skip || b.skip;
    s.unknown = a.unknown || b.unknown;
    s.reported = a.reported || b.reported;
    return s;
  }
  bool ends_with_legacy() const { return !leaves.empty() && leaves.back().kind == Layer::kLegacyAct; }
};

// What a module class defined earlier in the file contributes when used as a block.
struct BlockSummary {
  bool known = false;
  int depth = 0;
  bool norm = false;
  bool self_norm = false;
  bool skip = false;
  bool reported = false;  // the rule reported it, or a stack inside it
};

enum class AttrKind : uint8_t {
  kNotModule,      // numbers, strings, tensors, parameters
  kKnown,          // layers summarised as a Stack
  kUnknownModule,  // a construction torchlint cannot see into (a custom block, `norm_layer(d)`)
  kOpaque,         // a name or expression: unknown until forward calls it
};

struct Attr {
  AttrKind kind = AttrKind::kNotModule;
  Stack stack;
};

struct ClassAcc {
  std::unordered_map<std::string, Attr> attrs;
  bool functional_norm = false;  // F.batch_norm, F.layer_norm, F.normalize, ... in a method
  bool reported = false;         // the rule already reported a Sequential literal in the class
  bool dynamic = false;          // add_module / register_module / setattr: names not seen
};

// What calling a resolved function does to the values flowing through forward.
enum class CallCat : uint8_t {
  kNoName,   // callee not resolvable: a method on a value (`x.view`) or a local callable
  kPure,     // torch / functional / builtins: output depends on inputs, not a layer
  kShape,    // reshaping and dropout: the output is the input's activation
  kJoin,     // torch.cat, torch.stack, torch.add, sum(): combines earlier values
  kMul,      // torch.mul: gating
  kNormFn,   // functional normalization
  kLegacy,   // torch.sigmoid / torch.tanh
  kUnknown,  // a project function or another library: may hold layers
};

inline CallCat categorize(const std::optional<std::string>& qualname) {
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

// Calls whose result is certainly not a module (values, tensors, parameters).
inline bool call_returns_non_module(std::string_view s) {
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

// A Sigmoid/Tanh applied in forward, and which of the two it is.
struct LegacyUse {
  TSNode node{};
  std::string name;
};

class Tracker {
 public:
  // Summarises a layer expression (an nn.Sequential call, a layer, a block). With
  // `mark_nested`, Sequential calls met inside are remembered so that their own call
  // events are not judged again.
  Stack summarize(TSNode expr, const SemanticModel& m, bool mark_nested = false, int depth = 0) {
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

  bool nested(TSNode call) const { return nested_.contains(start_of(call)); }

  // The rule reported the Sequential `call`: stacks built from it, and the class it is
  // in, are not reported again.
  void reported_sequential(TSNode call, const SemanticModel& m) {
    reported_.insert(start_of(call));
    if (ClassAcc* acc = current_class(m)) acc->reported = true;
  }
  // The rule reported class `qualname`: classes using it as a block are not reported again.
  void reported_class(const std::string& qualname) { blocks_[qualname].reported = true; }

  // Helpers whose body is one `return <layers>` are summarised, so that
  // `nn.Sequential(conv(3, 64), ...)` sees through `conv`.
  void on_function_end(const FunctionState& fn, const SemanticModel& m) {
    if (fn.is_module_level || ts_node_is_null(fn.node)) return;
    TSNode body = child_by(fn.node, "body");
    TSNode ret{};
    bool first = true;
    for (TSNode st : named_children(body)) {
      bool is_first = first;
      first = false;
      if (is_type(st, "comment")) continue;
      if (is_type(st, "expression_statement") && is_type(ts_node_named_child(st, 0), "string") &&
          ts_node_is_null(ret) && is_first) {
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

  // The accumulator of the nn.Module class whose method is being traversed, or null.
  ClassAcc* current_class(const SemanticModel& m) {
    const ClassInfo* cls = m.enclosing_class();
    if (!cls || !cls->is_module) return nullptr;
    return &classes_[cls->qualname];
  }

  void on_call(const CallEvent& call, const SemanticModel& m) {
    ClassAcc* acc = current_class(m);
    if (!acc) return;
    CallCat cat = categorize(call.qualname);
    calls_[start_of(call.node)] = cat;
    if (cat == CallCat::kNormFn) acc->functional_norm = true;
    // Submodules registered by name are beyond the attribute summaries.
    bool on_self =
        !ts_node_is_null(call.receiver) && is_type(call.receiver, "identifier") && m.text(call.receiver) == "self";
    if (on_self && (call.method == "add_module" || call.method == "register_module")) acc->dynamic = true;
    if (call.qualname && (*call.qualname == "builtins.setattr" || *call.qualname == "builtins.vars"))
      acc->dynamic = true;
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

  void on_assign(const AssignEvent& event, const SemanticModel& m) {
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

  // The analysis of one module class, at its end.
  struct ClassFlow {
    bool analysed = false;  // forward understood
    bool plain_bases = false;
    int depth = 0;                 // longest chain of weight layers through forward
    bool join = false;             // forward adds, concatenates or stacks values
    bool inherits_report = false;  // runs a stack or block the rule already reported
    bool any_norm = false;         // a norm layer attribute, or functional normalization
    bool self_norm = false;
    bool unknown_modules = false;          // submodules torchlint cannot see into
    std::vector<LegacyUse> hidden_legacy;  // legacy activations feeding weight layers (not gates)
    ClassAcc* acc = nullptr;
  };

  ClassFlow analyse(const ClassInfo& cls, TSNode class_node, const SemanticModel& m);

 private:
  Attr classify_value(TSNode v, const SemanticModel& m) {
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

  static bool returns_value(TSNode call, const std::optional<std::string>& q, const SemanticModel& m) {
    if (q) return call_returns_non_module(*q);
    TSNode callee = child_by(call, "function");
    if (!is_type(callee, "attribute")) return false;
    return api::value_methods().contains(m.text(child_by(callee, "attribute")));
  }

  // An argument of `.append(...)` that may be a module: a construction, or a name
  // holding one.
  bool adds_module(const CallEvent& call, const SemanticModel& m) {
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

  bool holds_construction(TSNode v, const SemanticModel& m, int depth) {
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

  std::unordered_map<std::string, ClassAcc> classes_;
  std::unordered_map<std::string, BlockSummary> blocks_;
  std::unordered_map<std::string, Stack> helpers_;
  std::unordered_map<uint64_t, CallCat> calls_;
  std::unordered_set<uint64_t> nested_;
  std::unordered_set<uint64_t> reported_;

  friend class Interp;  // the forward dataflow of a module class (nn_stack.cpp)
};

// The frame the three rules share: a tracker of their own fed by every event (its
// "reported" marks are the rule's), and each nn.Sequential literal (not nested in
// another) and each module class handed to the rule once.
class StackRule : public Rule {
 public:
  // Every finding needs a stack of several weight layers: a block class defined in the file
  // is as deep as the weight layers in it, and a block from elsewhere is unknown.
  static constexpr const auto& kTriggers = api::names::nn_weight_layers;

  void on_call(const CallEvent& call, RuleContext& ctx) final {
    const SemanticModel& m = ctx.model();
    tracker_.on_call(call, m);
    if (call.qualname != kSequential || tracker_.nested(call.node)) return;
    on_sequential(call, tracker_.summarize(call.node, m, /*mark_nested=*/true), ctx);
  }
  void on_assign(const AssignEvent& event, RuleContext& ctx) final { tracker_.on_assign(event, ctx.model()); }
  void on_function_end(const FunctionState& fn, RuleContext& ctx) final { tracker_.on_function_end(fn, ctx.model()); }
  void on_class_end(const ClassInfo& cls, TSNode node, RuleContext& ctx) final {
    on_module_class(cls, node, tracker_.analyse(cls, node, ctx.model()), ctx);
  }

 protected:
  virtual void on_sequential(const CallEvent& call, const Stack& stack, RuleContext& ctx) = 0;
  virtual void on_module_class(const ClassInfo& cls, TSNode node, const Tracker::ClassFlow& flow, RuleContext& ctx) = 0;
  Tracker tracker_;
};

}  // namespace torchlint::python::nn_stack
