// TL501 modules-in-python-list: submodules kept in a plain list/dict attribute of an
// nn.Module, where nn.Module does not register them.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "catalog.h"
#include "python/api_tables.h"
#include "python/shared/nn_stack.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

using nn_stack::child_by;

// A fact recorded for every nn.Module subclass, so that a construction of a class
// imported from another project file can be recognised as a module in the project pass.
std::string module_class_fact(std::string_view qualname) { return "torch-module-class:" + std::string(qualname); }

// torch.nn classes that hold no parameters or buffers and behave the same in train and
// eval mode: leaving them unregistered changes nothing.
bool harmless_layer(std::string_view q) {
  nn_stack::Layer kind = nn_stack::classify_layer(q);
  if (kind == nn_stack::Layer::kActivation || kind == nn_stack::Layer::kLegacyAct ||
      kind == nn_stack::Layer::kSelfNormAct) {
    std::string_view n = nn_stack::nn_class(q);
    return n != "PReLU";  // learnable slope
  }
  if (kind != nn_stack::Layer::kNeutral) return false;
  std::string_view n = nn_stack::nn_class(q);
  // Dropout must follow train()/eval(); embeddings and recurrent layers have weights.
  return !n.starts_with("Dropout") && !n.ends_with("Dropout") && n != "Embedding" && n != "EmbeddingBag" &&
         n != "LSTM" && n != "GRU" && n != "RNN";
}

// What an element of the container is.
struct Element {
  bool module = false;
  std::string type;       // "nn.Linear", "Block"
  std::string condition;  // the fact a class imported from elsewhere must have
};

struct Candidate {
  TSNode node{};          // the assignment that creates the container
  std::string container;  // "list", "dict", "tuple"
  bool has_evidence = false;
  Element evidence;
  uint32_t evidence_line = 0;  // 0: the assignment itself
};

struct ClassState {
  std::unordered_map<std::string, Candidate> candidates;
  std::unordered_set<std::string> cancelled;
  bool registers_dynamically = false;
};

class ModulesInPythonList final : public Rule {
 public:
  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    const SemanticModel& m = ctx.model();
    ClassState* state = current(m);
    if (!state) return;
    TSNode target = event.target;
    // `self.heads["a"] = nn.Linear(...)`
    if (is_type(target, "subscript")) {
      std::string attr = self_attr(child_by(target, "value"), m);
      if (!attr.empty() && event.op == "=") add_evidence(*state, attr, element(event.value, m), event.node);
      return;
    }
    std::string attr = self_attr(target, m);
    if (attr.empty()) return;
    TSNode value = event.value;
    if (event.op == "+=") {
      Element e = first_module_in(value, m);
      if (e.module) add_evidence(*state, attr, e, event.node);
      return;
    }
    if (event.op != "=") return;
    std::string container = container_kind(value, m);
    if (container.empty()) {
      // Reassigned to something else (`nn.ModuleList(self.layers)`, None, a parameter).
      if (!is_type(value, "none")) state->cancelled.insert(attr);
      return;
    }
    auto it = state->candidates.find(attr);
    if (it == state->candidates.end()) {
      Candidate c;
      c.node = event.node;
      c.container = container;
      it = state->candidates.emplace(attr, std::move(c)).first;
    }
    Element e = first_module_in(value, m);
    if (e.module) add_evidence(*state, attr, e, TSNode{});
  }

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    const SemanticModel& m = ctx.model();
    ClassState* state = current(m);
    if (!state) return;
    bool on_self = is_type(call.receiver, "identifier") && m.text(call.receiver) == "self";
    if (on_self && (call.method == "add_module" || call.method == "register_module"))
      state->registers_dynamically = true;
    if (call.qualname && *call.qualname == "builtins.setattr") state->registers_dynamically = true;

    // `self.blocks.append(Block())`, `self.heads.update({...})`
    std::string receiver_attr = self_attr(call.receiver, m);
    if (!receiver_attr.empty()) {
      if (api::container_adders().contains(call.method) && !ts_node_is_null(call.arguments)) {
        uint32_t n = ts_node_named_child_count(call.arguments);
        for (uint32_t i = 0; i < n; ++i) {
          TSNode arg = ts_node_named_child(call.arguments, i);
          // insert(i, m) / setdefault(k, m): the index or key is not a module.
          if ((call.method == "insert" || call.method == "setdefault" || call.method == "__setitem__") && i == 0)
            continue;
          Element e = call.method == "extend" || call.method == "update" ? first_module_in(arg, m) : element(arg, m);
          if (e.module) {
            add_evidence(*state, receiver_attr, e, call.node);
            break;
          }
        }
      }
      return;
    }
    // The container handed to anything but a builtin may be registered there:
    // `nn.Sequential(*self.layers)`, `nn.ModuleList(self.layers)`, `register(self.blocks)`.
    if (call.qualname && call.qualname->starts_with("builtins.")) return;
    if (ts_node_is_null(call.arguments)) return;
    for (TSNode arg : named_children(call.arguments)) {
      if (is_type(arg, "list_splat") || is_type(arg, "dictionary_splat")) arg = ts_node_named_child(arg, 0);
      if (is_type(arg, "keyword_argument")) arg = child_by(arg, "value");
      std::string attr = self_attr(arg, m);
      if (!attr.empty()) state->cancelled.insert(attr);
    }
  }

  void on_class_end(const ClassInfo& cls, TSNode, RuleContext& ctx) override {
    if (cls.is_module) ctx.add_fact(module_class_fact(cls.qualname));
    auto it = classes_.find(cls.qualname);
    if (it == classes_.end()) return;
    ClassState state = std::move(it->second);
    classes_.erase(it);
    if (!cls.is_module || state.registers_dynamically) return;
    std::vector<std::pair<std::string, Candidate>> found;
    for (auto& [attr, c] : state.candidates) {
      if (c.has_evidence && !state.cancelled.contains(attr)) found.emplace_back(attr, c);
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
      return ts_node_start_byte(a.second.node) < ts_node_start_byte(b.second.node);
    });
    for (const auto& [attr, c] : found) {
      std::string replacement = c.container == "dict" ? "nn.ModuleDict" : "nn.ModuleList";
      std::string where = c.evidence_line ? ", added on line " + std::to_string(c.evidence_line) : "";
      std::vector<ProjectCondition> conditions;
      if (!c.evidence.condition.empty()) {
        conditions.push_back({ProjectCondition::Kind::kProjectHas, {}, c.evidence.condition, ""});
      }
      ctx.report(c.node,
                 "`self." + attr + "` keeps modules (`" + c.evidence.type + "`" + where + ") in a plain Python " +
                     c.container +
                     ": nn.Module does not register them, so `.parameters()` (the optimizer), `.to(device)`, "
                     "`.train()`/`.eval()` and `state_dict()` all miss them; use `" +
                     replacement + "`",
                 std::nullopt, std::move(conditions));
    }
  }

 private:
  ClassState* current(const SemanticModel& m) {
    const ClassInfo* cls = m.enclosing_class();
    if (!cls || !cls->is_module) return nullptr;
    return &classes_[cls->qualname];
  }

  // "layers" for `self.layers`, else empty.
  static std::string self_attr(TSNode expr, const SemanticModel& m) {
    if (!is_type(expr, "attribute")) return {};
    TSNode obj = child_by(expr, "object");
    if (!is_type(obj, "identifier") || m.text(obj) != "self") return {};
    return std::string(m.text(child_by(expr, "attribute")));
  }

  // The plain container an expression builds: "list", "dict", "tuple", or empty.
  static std::string container_kind(TSNode v, const SemanticModel& m) {
    if (is_type(v, "list") || is_type(v, "list_comprehension")) return "list";
    if (is_type(v, "dictionary") || is_type(v, "dictionary_comprehension")) return "dict";
    if (is_type(v, "tuple")) return "tuple";
    if (is_type(v, "binary_operator")) {
      // `[nn.Linear(d, d)] * n`: one module n times, still unregistered
      TSNode l = child_by(v, "left");
      if (is_type(l, "list") && m.text(child_by(v, "operator")) == "*") return "list";
      return {};
    }
    if (is_type(v, "call")) {
      auto q = m.resolve_qualified_name(child_by(v, "function"));
      if (!q) return {};
      TSNode args = child_by(v, "arguments");
      bool empty = is_type(args, "argument_list") && ts_node_named_child_count(args) == 0;
      if (!empty) return {};  // list(x) copies something torchlint does not follow
      if (*q == "builtins.list") return "list";
      if (*q == "builtins.dict" || *q == "collections.OrderedDict" || *q == "typing.OrderedDict") return "dict";
    }
    return {};
  }

  // Whether `e` certainly evaluates to a new submodule.
  Element element(TSNode e, const SemanticModel& m) const {
    Element out;
    if (ts_node_is_null(e)) return out;
    if (is_type(e, "parenthesized_expression")) return element(ts_node_named_child(e, 0), m);
    if (is_type(e, "call")) {
      auto q = m.resolve_qualified_name(child_by(e, "function"));
      if (!q) return out;
      return construction(*q, m);
    }
    if (is_type(e, "identifier")) {
      // A module built just before (`block = Block(...)`), not one passed in: wrapping a
      // given model in a list is the usual way to keep it out of state_dict().
      const Binding* b = m.lookup(m.text(e));
      if (!b || b->kind != BindingKind::kAssign || b->value.type.empty()) return out;
      if (b->value.kind != ValueKind::kModel && b->value.kind != ValueKind::kInstance) return out;
      if (b->value.type == api::kModule) return out;
      return construction(b->value.type, m);
    }
    return out;
  }

  static Element construction(const std::string& q, const SemanticModel& m) {
    Element out;
    if (!nn_stack::nn_class(q).empty()) {
      std::string_view n = nn_stack::nn_class(q);
      if (n.starts_with("Parameter") || n == "Buffer" || n.ends_with("Loss") || n.starts_with("Uninitialized"))
        return out;
      if (harmless_layer(q)) return out;
      out.module = true;
      out.type = "nn." + std::string(n);
      return out;
    }
    if (const ClassInfo* cls = m.class_info(q)) {
      if (!cls->is_module) return out;
      out.module = true;
      out.type = std::string(std::string_view(q).substr(q.rfind('.') + 1));
      return out;
    }
    // Library models built in place (`[torchvision.models.vgg16(weights=...)]`) are left
    // alone: a pretrained network wrapped in a list is the usual way to keep a frozen
    // feature extractor out of state_dict() and the optimizer.
    // A class from another project file: a module if the project pass finds it is one.
    std::string_view top = std::string_view(q).substr(0, q.find('.'));
    std::string_view last = std::string_view(q).substr(q.rfind('.') + 1);
    if (m.is_external_package(top) || last.empty() || last[0] < 'A' || last[0] > 'Z') return out;
    out.module = true;
    out.type = std::string(last);
    out.condition = module_class_fact(q);
    return out;
  }

  // The first certain module among the elements or values of a container expression.
  Element first_module_in(TSNode v, const SemanticModel& m) const {
    Element best;
    auto consider = [&](TSNode e) {
      Element x = element(e, m);
      if (x.module && (!best.module || (!best.condition.empty() && x.condition.empty()))) best = x;
    };
    if (is_type(v, "binary_operator")) v = child_by(v, "left");
    if (is_type(v, "list") || is_type(v, "tuple")) {
      for (TSNode element : named_children(v)) consider(element);
    } else if (is_type(v, "list_comprehension")) {
      // `[m for m in self.modules() if ...]` collects registered modules; only a
      // construction in the body makes new ones.
      if (is_type(child_by(v, "body"), "call")) consider(child_by(v, "body"));
    } else if (is_type(v, "dictionary")) {
      for (TSNode pair : named_children(v)) {
        if (is_type(pair, "pair")) consider(child_by(pair, "value"));
      }
    } else if (is_type(v, "dictionary_comprehension")) {
      TSNode pair = child_by(v, "body");
      if (is_type(pair, "pair") && is_type(child_by(pair, "value"), "call")) consider(child_by(pair, "value"));
    }
    return best;
  }

  static void add_evidence(ClassState& state, const std::string& attr, const Element& e, TSNode where) {
    if (!e.module) return;
    auto it = state.candidates.find(attr);
    if (it == state.candidates.end()) return;  // not a plain container (a ModuleList, say)
    Candidate& c = it->second;
    // Prefer evidence that needs no project-wide confirmation.
    if (c.has_evidence && (c.evidence.condition.empty() || !e.condition.empty())) return;
    c.has_evidence = true;
    c.evidence = e;
    c.evidence_line = ts_node_is_null(where) ? 0 : ts_node_start_point(where).row + 1;
    if (c.evidence_line == ts_node_start_point(c.node).row + 1) c.evidence_line = 0;
  }

  std::unordered_map<std::string, ClassState> classes_;
};

}  // namespace
}  // namespace python

python::RuleEntry modules_in_python_list_rule() {
  return python::rule_entry<python::ModulesInPythonList>(catalog_entry("TL501"));
}

}  // namespace torchlint
