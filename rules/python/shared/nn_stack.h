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
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

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

// What the torch.nn class `q` is as a layer; kUnknown for anything else (Transformer
// layers, attention, containers, a project's classes).
Layer classify_layer(std::string_view q);

// Weight reparametrisations that normalise the wrapped layer's weight.
bool is_weight_norm_wrapper(std::string_view q);

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

  void append(const Stack& s);
  // One of two alternatives (`a if c else b`, an attribute assigned in two branches).
  static Stack either(const Stack& a, const Stack& b);
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

// What a call of `qualname` (null: not resolvable) does in forward.
CallCat categorize(const std::optional<std::string>& qualname);

// Calls whose result is certainly not a module (values, tensors, parameters).
bool call_returns_non_module(std::string_view s);

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
  Stack summarize(TSNode expr, const SemanticModel& m, bool mark_nested = false, int depth = 0);

  bool nested(TSNode call) const { return nested_.contains(start_of(call)); }

  // The rule reported the Sequential `call`: stacks built from it, and the class it is
  // in, are not reported again.
  void reported_sequential(TSNode call, const SemanticModel& m);
  // The rule reported class `qualname`: classes using it as a block are not reported again.
  void reported_class(const std::string& qualname) { blocks_[qualname].reported = true; }

  // Helpers whose body is one `return <layers>` are summarised, so that
  // `nn.Sequential(conv(3, 64), ...)` sees through `conv`.
  void on_function_end(const FunctionState& fn, const SemanticModel& m);

  // The accumulator of the nn.Module class whose method is being traversed, or null.
  ClassAcc* current_class(const SemanticModel& m);

  void on_call(const CallEvent& call, const SemanticModel& m);

  void on_assign(const AssignEvent& event, const SemanticModel& m);

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
  Attr classify_value(TSNode v, const SemanticModel& m);

  static bool returns_value(TSNode call, const std::optional<std::string>& q, const SemanticModel& m);

  // An argument of `.append(...)` that may be a module: a construction, or a name
  // holding one.
  bool adds_module(const CallEvent& call, const SemanticModel& m);

  bool holds_construction(TSNode v, const SemanticModel& m, int depth);

  std::unordered_map<std::string, ClassAcc> classes_;
  std::unordered_map<std::string, BlockSummary> blocks_;
  std::unordered_map<std::string, Stack> helpers_;
  std::unordered_map<uint64_t, CallCat> calls_;
  std::unordered_set<uint64_t> nested_;
  std::unordered_set<uint64_t> reported_;

  friend class Interp;  // the forward dataflow of a module class (analyse, nn_stack.cpp)
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
