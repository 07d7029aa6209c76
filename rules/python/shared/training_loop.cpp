#include "training_loop.h"

#include <algorithm>
#include <cstring>

#include "python/api_tables.h"

namespace torchlint::python::loop_util {

bool guarded_within(TSNode node, TSNode stop) {
  const Fields& f = Syntax::get().fields();
  TSNode n = stop;
  for (int depth = 0; depth < 512; ++depth) {
    TSNode next = child_containing(n, node);
    if (ts_node_is_null(next) || ts_node_eq(next, node)) return false;
    const char* t = ts_node_type(next);
    if (std::strcmp(t, "if_statement") == 0) {
      if (!contains(field(next, f.condition), node)) return true;
    } else if (std::strcmp(t, "conditional_expression") == 0) {
      // body if condition else alternative: only the condition always runs.
      if (!contains(ts_node_named_child(next, 1), node)) return true;
    } else if (std::strcmp(t, "boolean_operator") == 0) {
      if (!contains(field(next, f.left), node)) return true;
    } else if (std::strcmp(t, "elif_clause") == 0 || std::strcmp(t, "else_clause") == 0 ||
               std::strcmp(t, "except_clause") == 0 || std::strcmp(t, "except_group_clause") == 0 ||
               std::strcmp(t, "case_clause") == 0 || std::strcmp(t, "lambda") == 0 ||
               std::strcmp(t, "function_definition") == 0 || std::strcmp(t, "while_statement") == 0) {
      return true;
    }
    n = next;
  }
  return false;
}

bool in_except_within(TSNode node, TSNode stop) {
  TSNode n = stop;
  for (int depth = 0; depth < 512; ++depth) {
    TSNode next = child_containing(n, node);
    if (ts_node_is_null(next) || ts_node_eq(next, node)) return false;
    if (is_type(next, "except_clause") || is_type(next, "except_group_clause")) return true;
    n = next;
  }
  return false;
}

TSNode NestedLoops::nested_in(TSNode loop, TSNode node) const {
  // `closed_` holds disjoint loops in the order they ended, so in source order: those
  // inside `loop` are at its end (behind `loop` itself once it is closed). Looking from
  // the end and stopping at the first other loop keeps a long file's loop ends from
  // walking every earlier loop of the file for every event.
  for (auto it = closed_.rbegin(); it != closed_.rend(); ++it) {
    TSNode l = *it;
    if (ts_node_eq(loop, l)) continue;
    if (!contains(loop, l)) break;
    if (contains(l, node)) return l;
  }
  return {};
}

void NestedLoops::close(TSNode loop) {
  std::erase_if(closed_, [&](TSNode l) { return contains(loop, l); });
  closed_.push_back(loop);
}

std::vector<IterationEvent> iteration(const LoopState& loop, const NestedLoops& nested) {
  std::vector<IterationEvent> out;
  out.reserve(loop.events.size());
  if (loop.guarded.size() != loop.events.size()) loop.guarded.assign(loop.events.size(), -1);
  for (size_t i = 0; i < loop.events.size(); ++i) {
    const LoopEvent& e = loop.events[i];
    IterationEvent ie;
    ie.event = &e;
    ie.nested = !ts_node_is_null(nested.nested_in(loop.node, e.node));
    if (!ie.nested && !e.conditional && loop.guarded[i] < 0)
      loop.guarded[i] = guarded_within(e.node, loop.node) ? 1 : 0;
    ie.guarded = !ie.nested && (e.conditional || loop.guarded[i] == 1);
    out.push_back(ie);
  }
  return out;
}

bool is_closure_step(const LoopEvent& e, std::string_view source) {
  TSNode callee = field(e.node, Syntax::get().fields().function);
  TSNode args = field(e.node, Syntax::get().fields().arguments);
  if (ts_node_is_null(args) || ts_node_named_child_count(args) == 0) return false;
  TSNode object = is_type(callee, "attribute") ? field(callee, Syntax::get().fields().object) : TSNode{};
  TSNode first = ts_node_named_child(args, 0);
  if (is_type(first, "keyword_argument")) return true;  // step(closure=...)
  // scaler.step(opt): the argument is the optimizer the event names.
  return node_text(first, source) != e.receiver && !ts_node_is_null(object) &&
         key(node_text(object, source)).find("scaler") == std::string::npos;
}

TSNode backward_loss(const LoopEvent& e) {
  const Fields& f = Syntax::get().fields();
  TSNode args = field(e.node, f.arguments);
  if (!ts_node_is_null(args) && ts_node_named_child_count(args) > 0) {
    TSNode first = ts_node_named_child(args, 0);
    if (!is_type(first, "keyword_argument")) return first;
  }
  TSNode callee = field(e.node, f.function);
  if (!is_type(callee, "attribute")) return {};
  TSNode object = field(callee, f.object);
  if (is_type(object, "call")) {
    TSNode inner_args = field(object, f.arguments);
    if (!ts_node_is_null(inner_args) && ts_node_named_child_count(inner_args) > 0)
      return ts_node_named_child(inner_args, 0);
  }
  return object;
}

void identifiers_in(TSNode expr, std::string_view source, std::unordered_set<std::string>& out) {
  if (ts_node_is_null(expr)) return;
  std::vector<TSNode> stack{expr};
  for (int guard = 0; !stack.empty() && guard < 4096; ++guard) {
    TSNode n = stack.back();
    stack.pop_back();
    if (is_type(n, "identifier")) {
      out.emplace(node_text(n, source));
      continue;
    }
    // `a.b`: only the root names a variable.
    if (is_type(n, "attribute")) {
      stack.push_back(field(n, Syntax::get().fields().object));
      continue;
    }
    if (is_type(n, "keyword_argument")) {
      stack.push_back(field(n, Syntax::get().fields().value));
      continue;
    }
    append_named_children(n, stack);
  }
}

bool is_loop_variable(TSNode node, std::string_view name, std::string_view source) {
  std::vector<TSNode> path = ancestors(node);
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    TSNode n = *it;
    if (is_type(n, "function_definition")) return false;
    if (!is_type(n, "for_statement")) continue;
    std::unordered_set<std::string> targets;
    identifiers_in(field(n, Syntax::get().fields().left), source, targets);
    if (targets.contains(std::string(name))) return true;
  }
  return false;
}

std::unordered_set<std::string> backward_names(const LoopState& loop, std::string_view source) {
  std::unordered_set<std::string> out;
  for (const auto& e : loop.events) {
    if (e.kind == LoopEventKind::kBackward) identifiers_in(backward_loss(e), source, out);
  }
  return out;
}

bool is_loss_function(std::string_view qualname) {
  if (!qualname.starts_with("torch.nn.functional.")) return false;
  std::string_view fn = qualname.substr(20);
  return api::functional_losses().contains(fn);
}

bool is_criterion_callee(TSNode callee, const std::optional<std::string>& q, const SemanticModel& model) {
  if (ts_node_is_null(callee)) return false;
  if (model.infer_value(callee).kind == ValueKind::kLoss) return true;
  if (q && is_loss_function(*q)) return true;
  Kind k = Syntax::get().kind(callee);
  if (k != Kind::kIdentifier && k != Kind::kAttribute) return false;
  std::string n = key(model.text(callee));
  return n == "criterion" || n.starts_with("criterion_") || n == "loss_fn" || n == "loss_func" ||
         n == "loss_function" || n == "loss_fct" || n == "lossfn" || n.ends_with("_criterion") ||
         n.ends_with("_loss_fn");
}

bool is_criterion_call(TSNode call, const SemanticModel& model) {
  TSNode callee = field(call, Syntax::get().fields().function);
  return !ts_node_is_null(callee) && is_criterion_callee(callee, model.resolve_qualified_name(callee), model);
}

Origin TensorNames::origin(std::string_view name, const SemanticModel& model) const {
  const Names* names = names_.find_current(model);
  if (!names) return Origin::kUnknown;
  auto it = names->find(name);
  return it == names->end() ? Origin::kUnknown : it->second;
}

Origin TensorNames::classify(TSNode expr, const SemanticModel& model, int depth) const {
  if (ts_node_is_null(expr) || depth > 24) return Origin::kUnknown;
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  const Kind k = syn.kind(expr);
  if (k == Kind::kIdentifier) return origin(model.text(expr), model);
  if (k == Kind::kInteger || k == Kind::kFloat) return Origin::kPython;
  if (k == Kind::kParenthesizedExpression) return classify(ts_node_named_child(expr, 0), model, depth + 1);
  if (k == Kind::kUnaryOperator) return classify(ts_node_named_child(expr, 0), model, depth + 1);
  if (k == Kind::kBinaryOperator) {
    Origin a = classify(field(expr, f.left), model, depth + 1);
    Origin b = classify(field(expr, f.right), model, depth + 1);
    for (Origin o : {Origin::kLoss, Origin::kOutput, Origin::kDetached}) {
      if (a == o || b == o) return o;
    }
    return a == Origin::kPython && b == Origin::kPython ? Origin::kPython : Origin::kUnknown;
  }
  if (k == Kind::kComparisonOperator) {
    // `preds == labels`: a tensor when an operand is one.
    for (TSNode operand : named_children(expr)) {
      Origin o = classify(operand, model, depth + 1);
      if (o == Origin::kLoss || o == Origin::kOutput || o == Origin::kDetached) return Origin::kOutput;
    }
    return Origin::kUnknown;
  }
  if (k == Kind::kSubscript) {
    Origin o = classify(field(expr, f.value), model, depth + 1);
    // outputs["loss"] of a Hugging Face model
    TSNode index = ts_node_named_child(expr, 1);
    std::string_view literal;
    if (o == Origin::kOutput && string_literal_value(index, model.source(), literal) &&
        literal.find("loss") != std::string_view::npos) {
      return Origin::kLoss;
    }
    return o == Origin::kPython ? Origin::kUnknown : o;
  }
  if (k == Kind::kAttribute) {
    Origin o = classify(field(expr, f.object), model, depth + 1);
    std::string_view attr = model.text(field(expr, f.attribute));
    if (attr == "data" && (o == Origin::kLoss || o == Origin::kOutput || o == Origin::kDetached))
      return Origin::kDetached;
    if (attr == "shape" || attr == "device" || attr == "dtype" || attr == "grad_fn" || attr == "requires_grad")
      return Origin::kUnknown;
    // outputs.loss of a Hugging Face model
    if (o == Origin::kOutput && ascii_ifind(attr, "loss") != std::string_view::npos) return Origin::kLoss;
    return o == Origin::kOutput || o == Origin::kDetached ? o : Origin::kUnknown;
  }
  if (k == Kind::kCall) {
    TSNode callee = field(expr, f.function);
    const auto q = model.resolve_qualified_name(callee);  // once: the checks below share it
    if (q && (*q == "builtins.float" || *q == "builtins.int" || *q == "builtins.len" || *q == "builtins.round" ||
              *q == "builtins.bool" || *q == "builtins.str")) {
      return Origin::kPython;
    }
    if (is_criterion_callee(callee, q, model)) return Origin::kLoss;
    if (!model.forward_pass_target(expr, true).empty()) return Origin::kOutput;
    if (q && q->starts_with("torch.")) {
      // torch.max(outputs, 1), torch.sigmoid(logits): computed from the first argument.
      TSNode args = field(expr, f.arguments);
      TSNode first =
          ts_node_is_null(args) || ts_node_named_child_count(args) == 0 ? TSNode{} : ts_node_named_child(args, 0);
      Origin o = classify(first, model, depth + 1);
      return o == Origin::kLoss || o == Origin::kOutput || o == Origin::kDetached ? Origin::kOutput : Origin::kUnknown;
    }
    if (!ts_node_is_null(callee) && syn.kind(callee) == Kind::kAttribute) {
      std::string_view method = model.text(field(callee, f.attribute));
      Origin o = classify(field(callee, f.object), model, depth + 1);
      if (o == Origin::kUnknown || o == Origin::kPython) return Origin::kUnknown;
      if (method == "item" || method == "tolist" || method == "numpy") return Origin::kPython;
      if (method == "detach" || method == "detach_") return Origin::kDetached;
      if (method == "cpu" || method == "to" || method == "numel" || method == "size" || method == "dim")
        return Origin::kUnknown;
      return o;  // mean(), sum(), argmax(), view(), ...
    }
  }
  return Origin::kUnknown;
}

void TensorNames::on_assign(const AssignEvent& a, const SemanticModel& model) {
  if (ts_node_is_null(a.target)) return;
  Kind tk = Syntax::get().kind(a.target);
  Names& names = names_.current(model);
  if (tk == Kind::kIdentifier) {
    std::string_view name = model.text(a.target);
    Origin value = classify(a.value, model);
    if (a.op != "=") {
      Origin old = origin(name, model);
      for (Origin o : {Origin::kLoss, Origin::kOutput, Origin::kDetached}) {
        if (old == o || value == o) {
          value = o;
          break;
        }
      }
    }
    set(names, name, value);
  } else if (tk == Kind::kPatternList || tk == Kind::kTuple) {
    // `out, aux = model(x)`: the parts of a forward output are outputs; `loss, n =
    // loss.item(), len(x)` pairs up; anything else makes the names unknown again.
    uint32_t n = ts_node_named_child_count(a.target);
    Kind vk = ts_node_is_null(a.value) ? Kind::kOther : Syntax::get().kind(a.value);
    bool paired = (vk == Kind::kExpressionList || vk == Kind::kTuple) && ts_node_named_child_count(a.value) == n;
    Origin whole = paired ? Origin::kUnknown : classify(a.value, model);
    std::vector<std::pair<std::string_view, Origin>> bound;
    for (uint32_t i = 0; i < n; ++i) {
      TSNode part = ts_node_named_child(a.target, i);
      if (Syntax::get().kind(part) != Kind::kIdentifier) continue;
      Origin o = paired ? classify(ts_node_named_child(a.value, i), model)
                        : (whole == Origin::kOutput ? whole : Origin::kUnknown);
      bound.emplace_back(model.text(part), o);
    }
    for (auto& [name, o] : bound) set(names, name, o);
  }
}

void TensorNames::set(Names& names, std::string_view name, Origin o) {
  if (o != Origin::kUnknown) {
    names.insert_or_assign(name, o);
  } else if (!names.empty()) {
    names.erase(name);
  }
}

TSNode root_identifier(TSNode expr) {
  const Fields& f = Syntax::get().fields();
  for (int depth = 0; depth < 32 && !ts_node_is_null(expr); ++depth) {
    const char* t = ts_node_type(expr);
    if (std::strcmp(t, "identifier") == 0) return expr;
    if (std::strcmp(t, "attribute") == 0)
      expr = field(expr, f.object);
    else if (std::strcmp(t, "subscript") == 0)
      expr = field(expr, f.value);
    else if (std::strcmp(t, "call") == 0) {
      TSNode callee = field(expr, f.function);
      if (!is_type(callee, "attribute")) return {};
      expr = field(callee, f.object);
    } else if (std::strcmp(t, "parenthesized_expression") == 0)
      expr = ts_node_named_child(expr, 0);
    else if (std::strcmp(t, "comparison_operator") == 0 || std::strcmp(t, "binary_operator") == 0)
      expr = ts_node_named_child(expr, 0);
    else
      return {};
  }
  return {};
}

}  // namespace torchlint::python::loop_util
