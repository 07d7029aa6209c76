#include "checker.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/suppressions.h"
#include "core/text.h"

namespace torchlint::python {

namespace {

constexpr TSSymbol kErrorSymbol = static_cast<TSSymbol>(-1);

bool is_true_literal(TSNode node) { return !ts_node_is_null(node) && Syntax::get().kind(node) == Kind::kTrue; }
bool is_false_literal(TSNode node) { return !ts_node_is_null(node) && Syntax::get().kind(node) == Kind::kFalse; }

}  // namespace

// ---------------------------------------------------------------------------------
// CallEvent helpers

TSNode CallEvent::keyword(std::string_view name, std::string_view) const {
  for (size_t i = 0; i < arg_count; ++i) {
    if (args[i].kind == Kind::kKeywordArgument && args[i].name == name) return args[i].value;
  }
  return {};
}

TSNode CallEvent::positional(size_t index) const {
  size_t seen = 0;
  for (size_t i = 0; i < arg_count; ++i) {
    Kind k = args[i].kind;
    if (k == Kind::kKeywordArgument || k == Kind::kDictionarySplat) continue;
    if (k == Kind::kListSplat) return {};  // positions after *args are unknown
    if (seen++ == index) return args[i].value;
  }
  return {};
}

size_t CallEvent::positional_count() const {
  size_t count = 0;
  for (size_t i = 0; i < arg_count; ++i) {
    Kind k = args[i].kind;
    if (k != Kind::kKeywordArgument && k != Kind::kDictionarySplat) ++count;
  }
  return count;
}

// ---------------------------------------------------------------------------------

Checker::Checker(const SourceFile& file, TSTree* tree, const AnalysisOptions& options, std::vector<ActiveRule> rules,
                 const RuleInfo& parse_error)
    : file_(file),
      tree_(tree),
      options_(options),
      rules_(std::move(rules)),
      parse_error_(parse_error),
      model_(file.text(), options.module) {}

Analysis* Checker::find_analysis(const void* key) {
  for (auto& a : analyses_) {
    if (a.key == key) return a.analysis.get();
  }
  return nullptr;
}

Analysis& Checker::add_analysis(const void* key, std::unique_ptr<Analysis> analysis, EventMask events) {
  // The analyses it builds on are created (and so fed) first.
  analysis->on_start(*this);
  analyses_.push_back({key, std::move(analysis), events});
  return *analyses_.back().analysis;
}

template <class F>
void Checker::dispatch(Event event, F&& f) {
  EventMask bit = event_bit(event);
  model_.begin_event();
  for (auto& a : analyses_) {
    if (a.events & bit) f(*a.analysis);
  }
  for (auto& r : rules_) {
    if (!(r.events & bit)) continue;
    current_rule_ = &r;
    f(*r.rule);
  }
  current_rule_ = nullptr;
  model_.end_event();
}

void Checker::report(TSNode node, std::string message, std::optional<Fix> fix,
                     std::vector<ProjectCondition> conditions) {
  if (!current_rule_) return;
  Diagnostic d;
  d.code = current_rule_->info->code;
  d.name = current_rule_->info->name;
  d.severity = current_rule_->info->severity;
  d.message = std::move(message);
  d.path = file_.path();
  d.start_byte = ts_node_start_byte(node);
  d.end_byte = ts_node_end_byte(node);
  d.statement_first_line = ts_node_start_point(node).row + 1;
  d.statement_last_line = ts_node_end_point(node).row + 1;
  if (!statements_.empty()) {
    TSNode stmt = statements_.back();
    if (ts_node_start_byte(stmt) <= d.start_byte && d.end_byte <= ts_node_end_byte(stmt)) {
      d.statement_first_line = ts_node_start_point(stmt).row + 1;
      d.statement_last_line = ts_node_end_point(stmt).row + 1;
    }
  }
  d.scope = model_.function().qualname;
  d.fix = std::move(fix);
  d.conditions = std::move(conditions);
  for (auto& c : d.conditions) {
    if (c.kind != ProjectCondition::Kind::kProgramHas && c.kind != ProjectCondition::Kind::kProjectLacks) continue;
    if (!c.scope.empty()) continue;
    c.scope = d.scope;
    if (!model_.function().is_module_level) continue;
    // Reported at module end: the innermost function holding the node.
    size_t best = SIZE_MAX;
    for (const auto& span : function_spans_) {
      if (span.start <= d.start_byte && d.end_byte <= span.end && span.end - span.start < best) {
        best = span.end - span.start;
        c.scope = span.qualname;
      }
    }
  }
  result_.diagnostics.push_back(std::move(d));
  last_reporter_ = current_rule_;
}

void Checker::relate(uint32_t start_byte, uint32_t end_byte, std::string message) {
  // Only to the rule's own finding: another rule's (or none, after a dropped report) would
  // get a location that explains nothing about it.
  if (!current_rule_ || last_reporter_ != current_rule_ || result_.diagnostics.empty()) return;
  if (end_byte == 0) return;  // no place known (a parameter's binding, say)
  RelatedLocation r;
  r.message = std::move(message);
  r.start_byte = start_byte;
  r.end_byte = std::max(start_byte, end_byte);
  result_.diagnostics.back().related.push_back(std::move(r));
}

void Checker::report_as(Severity severity, TSNode node, std::string message, std::optional<Fix> fix) {
  size_t before = result_.diagnostics.size();
  report(node, std::move(message), std::move(fix), {});
  if (result_.diagnostics.size() > before) result_.diagnostics.back().severity = severity;
}

bool Checker::holds_no_events(TSNode node) const {
  if (ts_node_has_error(node)) return false;
  uint32_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
  std::string_view text = file_.text();
  if (end > text.size() || start > end) return false;
  if (start < end && text[start] == '(') ++start;
  // The traversal asks in document order, so the search resumes where the last one ended.
  size_t i = next_mark_;
  if (i > 0 && marks_[i - 1] >= start) {
    i = static_cast<size_t>(std::lower_bound(marks_.begin(), marks_.end(), start) - marks_.begin());
  } else {
    while (i < marks_.size() && marks_[i] < start) ++i;
  }
  next_mark_ = i;
  return i == marks_.size() || marks_[i] >= end;
}

namespace {

// The offsets of the '(' and '#' bytes of `text`, ascending. memchr runs for each byte
// and the two lists are merged: a loop testing every byte costs ten times as much.
void collect_marks(std::string_view text, std::vector<uint32_t>& marks) {
  auto offsets_of = [&](char c, std::vector<uint32_t>& out) {
    const char* begin = text.data();
    const char* end = begin + text.size();
    for (const char* p = begin; p < end; ++p) {
      p = static_cast<const char*>(std::memchr(p, c, static_cast<size_t>(end - p)));
      if (!p) break;
      out.push_back(static_cast<uint32_t>(p - begin));
    }
  };
  std::vector<uint32_t> parens, hashes;
  offsets_of('(', parens);
  offsets_of('#', hashes);
  marks.resize(parens.size() + hashes.size());
  std::merge(parens.begin(), parens.end(), hashes.begin(), hashes.end(), marks.begin());
}

}  // namespace

FileResult Checker::run() {
  collect_marks(file_.text(), marks_);
  for (auto& r : rules_) {
    current_rule_ = &r;
    r.rule->on_start(*this);
  }
  current_rule_ = nullptr;
  FieldCache::Scope field_cache;
  TSNode root = ts_tree_root_node(tree_);
  arg_cursor_ = ts_tree_cursor_new(root);
  const bool has_error = ts_node_has_error(root);
  TSTreeCursor cursor = ts_tree_cursor_new(root);
  for (;;) {
    TSNode node = ts_tree_cursor_current_node(&cursor);
    if (has_error) {
      if (ts_node_is_missing(node)) {
        note_syntax_error(node, "missing `" + std::string(ts_node_type(node)) + "`");
      } else if (ts_node_symbol(node) == kErrorSymbol) {
        std::string_view text = model_.text(node);
        size_t cut = std::min<size_t>(text.find('\n'), 20);
        note_syntax_error(node, "unexpected `" + std::string(text.substr(0, cut)) + (cut < text.size() ? "...`" : "`"));
      }
    }
    ancestors_.push_back(node);
    bool descend = enter(node);
    if (descend && ts_tree_cursor_goto_first_child(&cursor)) continue;
    leave(node);
    ancestors_.pop_back();
    bool done = false;
    while (!ts_tree_cursor_goto_next_sibling(&cursor)) {
      if (!ts_tree_cursor_goto_parent(&cursor)) {
        done = true;
        break;
      }
      leave(ts_tree_cursor_current_node(&cursor));
      ancestors_.pop_back();
    }
    if (done) break;
  }
  ts_tree_cursor_delete(&cursor);
  ts_tree_cursor_delete(&arg_cursor_);
  if (has_error && !first_error_) locate_hidden_error(root);

  dispatch(Event::kModuleEnd, [&](auto& h) { h.on_module_end(*this); });
  FunctionState& top = model_.function();
  // A program starts here: a main guard, training at module level, or module-level code
  // that runs the script's own functions (`main()` at the bottom of a script).
  if (model_.has_main_guard() || top.steps_optimizer || top.calls_backward || module_calls_own_function_) {
    add_fact(top, kEntryPointFact);
  }
  top.facts.qualname = top.qualname;
  result_.facts.module = model_.module_name();
  result_.facts.functions.push_back(std::move(top.facts));
  if (first_error_) {
    Diagnostic d;
    d.code = parse_error_.code;
    d.name = parse_error_.name;
    d.severity = parse_error_.severity;
    d.path = file_.path();
    d.start_byte = ts_node_start_byte(first_error_->first);
    d.end_byte = ts_node_end_byte(first_error_->first);
    d.message = "syntax error: " + first_error_->second + "; findings for this file may be incomplete";
    result_.diagnostics.push_back(std::move(d));
  }
  return std::move(result_);
}

// tree-sitter marks some errors only with an invisible MISSING token (a missing newline
// between two statements on one line), which no cursor visits. Find the innermost node
// holding the error and, inside it, the statement that starts on the previous one's line.
void Checker::locate_hidden_error(TSNode root) {
  TSNode n = root;
  for (int depth = 0; depth < 100000; ++depth) {
    TSNode next{};
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count && ts_node_is_null(next); ++i) {
      TSNode c = ts_node_child(n, i);
      if (ts_node_has_error(c)) next = c;
    }
    if (ts_node_is_null(next)) break;
    n = next;
  }
  TSNode prev{};
  for (TSNode c : named_children(n)) {
    if (Syntax::get().kind(c) == Kind::kComment) continue;
    if (!ts_node_is_null(prev) && ts_node_start_point(c).row == ts_node_end_point(prev).row) {
      std::string_view between =
          file_.text().substr(ts_node_end_byte(prev), ts_node_start_byte(c) - ts_node_end_byte(prev));
      if (between.find(';') == std::string_view::npos) {
        note_syntax_error(c, "invalid syntax (missing newline, comma or operator before this)");
        return;
      }
    }
    prev = c;
  }
  note_syntax_error(n, "invalid syntax");
}

void Checker::note_syntax_error(TSNode node, std::string message) {
  if (first_error_ && ts_node_start_byte(first_error_->first) <= ts_node_start_byte(node)) return;
  first_error_ = {node, std::move(message)};
}

bool Checker::enter(TSNode node) {
  const TSSymbol symbol = ts_node_symbol(node);
  switch (Syntax::get().kind_of(symbol)) {
    case Kind::kLegacyStatement:
      note_syntax_error(node, "Python 2 `" + std::string(ts_node_type(node)).substr(0, 5) + "` statement");
      statements_.push_back(node);
      return true;
    case Kind::kBlock:
      if (ts_node_named_child_count(node) == 0) {
        // `for x in y:` followed by a dedent (its only statement commented out): Python
        // reports it at the statement that follows.
        TSNode owner = parent_node();
        TSNode next = ts_node_is_null(owner) ? TSNode{} : ts_node_next_named_sibling(owner);
        while (!ts_node_is_null(next) && Syntax::get().kind(next) == Kind::kComment)
          next = ts_node_next_named_sibling(next);
        note_syntax_error(ts_node_is_null(next) ? node : next, "expected an indented block");
      }
      return true;
    // Import statements hold nothing rules look at; their subtree is walked only to find
    // a syntax error inside.
    case Kind::kImportStatement:
      statements_.push_back(node);
      on_import(node);
      return ts_node_has_error(node);
    case Kind::kImportFromStatement:
      statements_.push_back(node);
      on_import_from(node);
      return ts_node_has_error(node);
    case Kind::kFutureImportStatement:
      statements_.push_back(node);
      return false;
    case Kind::kExpressionStatement:  // its assignment is read when it is left
    case Kind::kReturnStatement:
    case Kind::kSimpleStatement:
      statements_.push_back(node);
      return !holds_no_events(node);
    case Kind::kFunctionDefinition:
      on_function_enter(node);
      return true;
    case Kind::kClassDefinition:
      on_class_enter(node);
      return true;
    case Kind::kDecorator:
      on_decorator(node);
      return true;
    case Kind::kWithStatement:
      on_with_enter(node);
      return true;
    case Kind::kForStatement:
    case Kind::kWhileStatement: {
      LoopState loop;
      loop.node = node;
      loop.is_for = Syntax::get().kind(node) == Kind::kForStatement;
      if (loop.is_for) loop.iter = field(node, Syntax::get().fields().right);
      TSNode cond = field(node, Syntax::get().fields().condition);
      bool pushed = !ts_node_is_null(cond);
      if (pushed) model_.conditions_.push_back(cond);
      pushed_condition_.push_back(pushed);
      loop.condition_base = model_.conditions_.size();
      loop.depth = model_.loops_.size() - model_.function().loop_base;
      model_.loops_.push_back(std::move(loop));
      return true;
    }
    case Kind::kIfStatement:
      on_if_enter(node);
      return true;
    case Kind::kElifClause: {
      TSNode cond = field(node, Syntax::get().fields().condition);
      bool pushed = !ts_node_is_null(cond);
      if (pushed) model_.conditions_.push_back(cond);
      pushed_condition_.push_back(pushed);
      return true;
    }
    case Kind::kCall:
      on_call(node);
      return true;
    case Kind::kComment:
      on_comment(node);
      return false;
    case Kind::kString:
      // f-strings can hold calls in their interpolations; plain strings hold nothing.
      return ts_node_named_child_count(node) > 2;
    case Kind::kAttribute: {
      // `name.attr` holds nothing the traversal acts on: not worth visiting its three
      // leaves. Anything else on the left (a call, a subscript) is walked.
      if (ts_node_child_count(node) != 3 || ts_node_has_error(node)) return true;
      return Syntax::get().kind(ts_node_child(node, 0)) != Kind::kIdentifier;
    }
    default:
      // Tokens have no children worth a cursor step (the comment token is handled above).
      if (Syntax::get().is_token_symbol(symbol)) return false;
      return !Syntax::get().is_expression_symbol(symbol) || !holds_no_events(node);
  }
}

void Checker::leave(TSNode node) {
  const Syntax& syn = Syntax::get();
  switch (syn.kind(node)) {
    case Kind::kImportStatement:
    case Kind::kImportFromStatement:
    case Kind::kFutureImportStatement:
    case Kind::kReturnStatement:
    case Kind::kSimpleStatement:
    case Kind::kLegacyStatement:
      statements_.pop_back();
      break;
    case Kind::kExpressionStatement: {
      TSNode inner = ts_node_named_child(node, 0);
      if (!ts_node_is_null(inner) && syn.kind(inner) == Kind::kAssignment) on_assignment(inner);
      if (!ts_node_is_null(inner) && syn.kind(inner) == Kind::kAugmentedAssignment) {
        const Fields& f = syn.fields();
        TSNode op = field(inner, f.operators);
        if (ts_node_is_null(op)) op = ts_node_child(inner, 1);
        std::string_view op_text = model_.text(op);
        // `p -= lr * p.grad` (under no_grad): a hand-written optimizer step.
        if (op_text == "-=" && manual_update_uses_grad(model_.text(field(inner, f.right)))) note_manual_step();
        dispatch_assign({inner, field(inner, f.left), field(inner, f.right), op_text});
      }
      statements_.pop_back();
      break;
    }
    case Kind::kFunctionDefinition:
      on_function_leave(node);
      break;
    case Kind::kClassDefinition: {
      const ClassInfo& cls =
          *model_.classes_[static_cast<size_t>(model_.scopes_[model_.scope_stack_.back()].class_index)];
      dispatch(Event::kClassEnd, [&](auto& h) { h.on_class_end(cls, node, *this); });
      model_.scope_stack_.pop_back();
      break;
    }
    case Kind::kWithStatement: {
      size_t n = with_pushes_.back();
      with_pushes_.pop_back();
      model_.contexts_.resize(model_.contexts_.size() - n);
      break;
    }
    case Kind::kForStatement:
    case Kind::kWhileStatement: {
      dispatch(Event::kLoopEnd, [&](auto& h) { h.on_loop_end(model_.loops_.back(), *this); });
      model_.loops_.pop_back();
      if (pushed_condition_.back()) model_.conditions_.pop_back();
      pushed_condition_.pop_back();
      break;
    }
    case Kind::kIfStatement: {
      if (if_was_main_guard_.back()) --model_.main_guard_depth_;
      if_was_main_guard_.pop_back();
      if (pushed_condition_.back()) model_.conditions_.pop_back();
      pushed_condition_.pop_back();
      break;
    }
    case Kind::kElifClause:
      if (pushed_condition_.back()) model_.conditions_.pop_back();
      pushed_condition_.pop_back();
      break;
    default:
      break;
  }
}

// ---------------------------------------------------------------------------------
// Imports

void Checker::on_import(TSNode node) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  for (TSNode child : named_children(node)) {
    Binding b;
    b.kind = BindingKind::kImport;
    b.line = ts_node_start_point(child).row + 1;
    if (syn.kind(child) == Kind::kAliasedImport) {
      std::string_view dotted = model_.text(field(child, f.name));
      std::string_view alias = model_.text(field(child, f.alias));
      b.qualified_name = std::string(dotted);
      model_.bind(alias, std::move(b));
      record_call_edge(std::string(dotted) + "." + kModuleFunction);
      dispatch_import({node, child, {}, std::string(dotted), alias, false});
    } else if (syn.kind(child) == Kind::kDottedName) {
      // `import a.b.c` binds `a`.
      std::string_view dotted = model_.text(child);
      std::string_view first = dotted.substr(0, dotted.find('.'));
      b.qualified_name = std::string(first);
      model_.bind(first, std::move(b));
      record_call_edge(std::string(dotted) + "." + kModuleFunction);
      dispatch_import({node, child, {}, std::string(dotted), {}, false});
    }
  }
}

void Checker::dispatch_import(const ImportEvent& event) {
  dispatch(Event::kImport, [&](auto& h) {
    if constexpr (requires { h.on_import(event, *this); }) h.on_import(event, *this);
  });
}

void Checker::on_import_from(TSNode node) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  TSNode module_node = field(node, f.module_name);
  if (ts_node_is_null(module_node)) return;
  std::string module;
  if (syn.kind(module_node) == Kind::kRelativeImport) {
    // `from ..pkg import x` inside a.b.c resolves against the package a.b.
    size_t dots = 0;
    std::string_view rest;
    for (TSNode c : named_children(module_node)) {
      if (syn.kind(c) == Kind::kImportPrefix) dots = model_.text(c).size();
      if (syn.kind(c) == Kind::kDottedName) rest = model_.text(c);
    }
    std::string base = model_.package_;
    for (size_t k = 1; k < dots; ++k) {
      auto d = base.rfind('.');
      base = d == std::string::npos ? std::string() : base.substr(0, d);
    }
    module = base;
    if (!rest.empty()) module += (module.empty() ? "" : ".") + std::string(rest);
  } else {
    module = std::string(model_.text(module_node));
  }
  record_call_edge(module + "." + kModuleFunction);
  for (TSNode child : named_children(node)) {
    if (ts_node_eq(child, module_node)) continue;
    Binding b;
    b.kind = BindingKind::kImport;
    b.line = ts_node_start_point(child).row + 1;
    Kind k = syn.kind(child);
    if (k == Kind::kWildcardImport) {
      model_.star_imports_.push_back(module);
    } else if (k == Kind::kAliasedImport) {
      b.qualified_name = api::canonical_name(module + "." + std::string(model_.text(field(child, f.name))));
      std::string_view alias = model_.text(field(child, f.alias));
      ImportEvent event{node, child, module_node, b.qualified_name, alias, true};
      model_.bind(alias, std::move(b));
      dispatch_import(event);
    } else if (k == Kind::kDottedName) {
      std::string_view name = model_.text(child);
      b.qualified_name = api::canonical_name(module + "." + std::string(name));
      ImportEvent event{node, child, module_node, b.qualified_name, {}, true};
      model_.bind(name, std::move(b));
      dispatch_import(event);
    }
  }
}

// ---------------------------------------------------------------------------------
// Definitions

static ValueInfo value_from_annotation(const SemanticModel& model, TSNode type) {
  if (ts_node_is_null(type)) return {};
  TSNode expr = ts_node_named_child_count(type) > 0 ? ts_node_named_child(type, 0) : type;
  auto q = model.resolve_qualified_name(expr);
  if (!q) return {};
  if (*q == "torch.optim.Optimizer" || *q == "torch.optim.optimizer.Optimizer")
    return {ValueKind::kOptimizer, *q, false};
  if (*q == api::kDataLoaderClass) return {ValueKind::kDataLoader, *q, false};
  if (q->starts_with("torch.optim.lr_scheduler.")) return {ValueKind::kScheduler, *q, false};
  if (*q == api::kTorchDevice) return {ValueKind::kDevice, *q, false};
  if (api::is_module_base(*q)) return {ValueKind::kModel, *q, false};
  return {};
}

void Checker::on_function_enter(TSNode node) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  std::string_view name = model_.text(field(node, f.name));
  std::string qualname = model_.qualify(name);
  Binding fb;
  fb.kind = BindingKind::kFunction;
  fb.qualified_name = qualname;
  fb.line = ts_node_start_point(node).row + 1;
  int enclosing_class = model_.scopes_[model_.scope_stack_.back()].class_index;
  model_.bind(name, std::move(fb));

  auto fn = std::make_unique<FunctionState>();
  fn->node = node;
  fn->name = std::string(name);
  fn->qualname = qualname;
  fn->facts.qualname = qualname;
  fn->enclosing_class = enclosing_class;
  function_spans_.push_back({ts_node_start_byte(node), ts_node_end_byte(node), qualname});
  fn->context_base = model_.contexts_.size();
  fn->loop_base = model_.loops_.size();
  fn->condition_base = model_.conditions_.size();
  // Decorators live on the decorated_definition parent.
  TSNode parent = parent_node();
  if (!ts_node_is_null(parent) && syn.kind(parent) == Kind::kDecoratedDefinition) {
    fn->decorated = parent;
    for (TSNode dec : named_children(parent)) {
      if (syn.kind(dec) != Kind::kDecorator) continue;
      TSNode expr = ts_node_named_child(dec, 0);
      TSNode callee = syn.kind(expr) == Kind::kCall ? field(expr, f.function) : expr;
      auto q = model_.resolve_qualified_name(callee);
      if (!q) continue;
      if (*q == api::kNoGrad || *q == api::kInferenceMode) fn->grad_disabled_decorator = true;
      // A project's own wrapper of them (`@smart_inference_mode()`, `@torch_no_grad`).
      std::string_view last = std::string_view(*q).substr(q->rfind('.') + 1);
      if (last.find("inference_mode") != std::string_view::npos || last.find("no_grad") != std::string_view::npos) {
        fn->grad_disabled_decorator = true;
      }
      if (*q == api::kSetGradEnabled && syn.kind(expr) == Kind::kCall) {
        TSNode args = field(expr, f.arguments);
        if (!ts_node_is_null(args) && is_false_literal(ts_node_named_child(args, 0)))
          fn->grad_disabled_decorator = true;
      }
    }
  }
  Scope scope;
  scope.kind = ScopeKind::kFunction;
  scope.qualname = qualname;
  model_.scopes_.push_back(std::move(scope));
  model_.scope_stack_.push_back(model_.scopes_.size() - 1);
  fn->scope_index = model_.scopes_.size() - 1;
  model_.functions_.push_back(std::move(fn));

  // Parameters, with what their annotations say about them.
  for (TSNode p : named_children(field(node, f.parameters))) {
    TSNode name_node{};
    TSNode type{};
    switch (syn.kind(p)) {
      case Kind::kIdentifier:
        name_node = p;
        break;
      case Kind::kTypedParameter:
        name_node = ts_node_named_child(p, 0);
        type = field(p, f.type);
        break;
      case Kind::kDefaultParameter:
      case Kind::kTypedDefaultParameter:
        name_node = field(p, f.name);
        type = field(p, f.type);
        break;
      default:
        break;
    }
    if (ts_node_is_null(name_node) || syn.kind(name_node) != Kind::kIdentifier) continue;
    Binding b;
    b.kind = BindingKind::kParameter;
    b.line = ts_node_start_point(p).row + 1;
    b.value = value_from_annotation(model_, type);
    model_.bind(model_.text(name_node), std::move(b));
  }
}

void Checker::add_fact(FunctionState& fn, std::string_view fact) {
  auto& facts = fn.facts.facts;
  if (std::find(facts.begin(), facts.end(), fact) == facts.end()) facts.emplace_back(fact);
}

void Checker::add_fact(std::string_view fact) { add_fact(model_.function(), fact); }

// Whether `node` holds a call anywhere (a bounded walk: a `__getitem__` is small).
static bool holds_call(TSNode node, int budget = 4096) {
  const Syntax& syn = Syntax::get();
  std::vector<TSNode> work{node};
  while (!work.empty() && budget-- > 0) {
    TSNode n = work.back();
    work.pop_back();
    if (syn.kind(n) == Kind::kCall) return true;
    for (uint32_t i = 0, c = ts_node_named_child_count(n); i < c; ++i) work.push_back(ts_node_named_child(n, i));
  }
  return budget <= 0;  // too big to tell: assume it does work
}

// A `__getitem__` that makes no call at all and indexes its own attributes
// (`return self.data[index]`; `start = i * self.n; return self.data[start:start + self.n]`):
// an item is a slice of tensors already in memory, nothing is read, decoded or transformed.
static bool getitem_slices_memory(const FunctionState& fn, const SemanticModel& model) {
  const Syntax& syn = Syntax::get();
  TSNode body = field(fn.node, syn.fields().body);
  if (ts_node_is_null(body) || holds_call(body)) return false;
  bool returns = false;
  for (uint32_t i = 0, n = ts_node_named_child_count(body); i < n; ++i) {
    TSNode stmt = ts_node_named_child(body, i);
    Kind k = syn.kind(stmt);
    if (k == Kind::kComment || k == Kind::kExpressionStatement) continue;  // docstrings, assignments
    if (k == Kind::kReturnStatement) {
      returns = true;
      continue;
    }
    return false;  // branches, loops, raises: more than slicing
  }
  return returns && model.text(body).find("self.") != std::string_view::npos;
}

void Checker::on_function_leave(TSNode) {
  FunctionState& fn = model_.function();
  // What a dataset costs per item (TL201 reads it from the file that builds the
  // DataLoader, which is seldom the one that defines the dataset).
  if (fn.enclosing_class >= 0 && fn.name == "__getitem__" && getitem_slices_memory(fn, model_)) {
    add_fact(fn, kItemsInMemoryFact);
  }

  dispatch(Event::kFunctionEnd, [&](auto& h) { h.on_function_end(fn, *this); });
  model_.contexts_.resize(fn.context_base);
  result_.facts.functions.push_back(std::move(fn.facts));
  model_.scope_stack_.pop_back();
  model_.functions_.pop_back();
}

void Checker::on_class_enter(TSNode node) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  std::string_view name = model_.text(field(node, f.name));
  auto info = std::make_unique<ClassInfo>();
  info->qualname = model_.qualify(name);
  TSNode bases = field(node, f.superclasses);
  uint32_t n = ts_node_is_null(bases) ? 0 : ts_node_named_child_count(bases);
  for (uint32_t i = 0; i < n; ++i) {
    TSNode base = ts_node_named_child(bases, i);
    if (syn.kind(base) == Kind::kKeywordArgument) continue;
    auto q = model_.resolve_qualified_name(base);
    if (!q) continue;
    const ClassInfo* local = model_.class_info(*q);
    if (api::is_module_base(*q) || (local && local->is_module)) info->is_module = true;
    info->bases.push_back(*q);
  }
  Binding b;
  b.kind = BindingKind::kClass;
  b.qualified_name = info->qualname;
  b.line = ts_node_start_point(node).row + 1;
  model_.bind(name, std::move(b));
  size_t index = model_.classes_.size();
  model_.class_by_qualname_[info->qualname] = index;
  Scope scope;
  scope.kind = ScopeKind::kClass;
  scope.qualname = info->qualname;
  scope.class_index = static_cast<int>(index);
  model_.classes_.push_back(std::move(info));
  model_.scopes_.push_back(std::move(scope));
  model_.scope_stack_.push_back(model_.scopes_.size() - 1);
}

void Checker::on_decorator(TSNode node) {
  TSNode expr = ts_node_named_child(node, 0);
  if (ts_node_is_null(expr) || Syntax::get().kind(expr) == Kind::kCall) return;  // calls come through on_call
  DecoratorEvent event{expr, model_.resolve_qualified_name(expr)};
  for (auto& r : rules_) {
    if (!(r.events & event_bit(Event::kDecorator))) continue;
    current_rule_ = &r;
    r.rule->on_decorator(event, *this);
  }
  current_rule_ = nullptr;
}

// ---------------------------------------------------------------------------------
// Context-changing statements

void Checker::on_with_enter(TSNode node) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  size_t pushed = 0;
  // with_statement -> with_clause -> with_item(value: expr | as_pattern)
  for (TSNode clause : named_children(node)) {
    if (ts_node_eq(clause, field(node, f.body))) continue;
    for (TSNode item : named_children(clause)) {
      if (syn.kind(item) != Kind::kWithItem) continue;
      TSNode value = field(item, f.value);
      if (!ts_node_is_null(value) && syn.kind(value) == Kind::kAsPattern) value = ts_node_named_child(value, 0);
      if (ts_node_is_null(value) || syn.kind(value) != Kind::kCall) continue;
      auto q = model_.resolve_qualified_name(field(value, f.function));
      if (!q) continue;
      GradContext ctx = GradContext::kOther;
      if (*q == api::kNoGrad || *q == api::kInferenceMode) {
        ctx = GradContext::kNoGrad;
      } else if (*q == api::kEnableGrad) {
        ctx = GradContext::kEnableGrad;
      } else if (*q == api::kSetGradEnabled) {
        TSNode args = field(value, f.arguments);
        TSNode arg = ts_node_is_null(args) ? TSNode{} : ts_node_named_child(args, 0);
        if (is_false_literal(arg))
          ctx = GradContext::kNoGrad;
        else if (is_true_literal(arg))
          ctx = GradContext::kEnableGrad;
        else
          continue;  // decided at run time
      } else if (*q == api::kAutocast || api::deprecated_amp(*q)) {
        ctx = GradContext::kAutocast;
      } else if (*q == api::kDetectAnomaly) {
        ctx = GradContext::kDetectAnomaly;
      } else {
        continue;
      }
      model_.contexts_.emplace_back(ctx, ctx == GradContext::kNoGrad);
      ++pushed;
    }
  }
  with_pushes_.push_back(pushed);
}

static bool is_main_guard(const SemanticModel& model, TSNode cond) {
  const Syntax& syn = Syntax::get();
  if (ts_node_is_null(cond) || syn.kind(cond) != Kind::kComparisonOperator) return false;
  if (ts_node_named_child_count(cond) != 2) return false;
  bool has_name = false, has_main = false;
  for (uint32_t i = 0; i < 2; ++i) {
    TSNode c = ts_node_named_child(cond, i);
    std::string_view value;
    if (syn.kind(c) == Kind::kIdentifier && model.text(c) == "__name__") has_name = true;
    if (string_literal_value(c, model.source(), value) && value == "__main__") has_main = true;
  }
  return has_name && has_main && model.text(cond).find("==") != std::string_view::npos;
}

void Checker::on_if_enter(TSNode node) {
  TSNode cond = field(node, Syntax::get().fields().condition);
  bool main_guard = !model_.in_function() && is_main_guard(model_, cond);
  if (main_guard) {
    ++model_.main_guard_depth_;
    if (ts_node_is_null(model_.main_guard_node_)) model_.main_guard_node_ = node;
  }
  if_was_main_guard_.push_back(main_guard);
  bool pushed = !main_guard && !ts_node_is_null(cond);
  if (pushed) model_.conditions_.push_back(cond);
  pushed_condition_.push_back(pushed);
}

// ---------------------------------------------------------------------------------
// Calls: the facts they establish, then the rules

// `model.to(local_rank)`, `x.to(gpu)`: under DDP a process's device is its GPU index.
static bool names_gpu_index(std::string_view expr) {
  size_t dot = expr.rfind('.');
  std::string_view name = dot == std::string_view::npos ? expr : expr.substr(dot + 1);
  return name == "local_rank" || name == "rank" || name == "gpu" || name == "gpu_id" || name == "device_id" ||
         name == "gpu_idx" || name == "local_gpu";
}

// `train_loader`, `self.train_data`, `train_dl`: where a helper's result is kept says
// what it is for.
static bool names_training_data(std::string_view target) {
  if (target.find_first_of(",[( ") != std::string_view::npos) return false;  // one name, not a tuple
  size_t dot = target.rfind('.');
  std::string_view name = dot == std::string_view::npos ? target : target.substr(dot + 1);
  return name.starts_with("train") || name.starts_with("Train") || name.find("_train") != std::string_view::npos;
}

// The update of a hand-written optimizer reads a gradient: `p.grad`, `param.grad.data`.
bool Checker::manual_update_uses_grad(std::string_view expr) {
  for (size_t i = expr.find(".grad"); i != std::string_view::npos; i = expr.find(".grad", i + 1)) {
    size_t end = i + 5;
    if (end == expr.size() || !(std::isalnum(static_cast<unsigned char>(expr[end])) || expr[end] == '_')) return true;
  }
  return false;
}

void Checker::note_manual_step() {
  FunctionState& fn = model_.function();
  fn.steps_optimizer = true;
  add_fact(fn, "trains");
  if (model_.loops_.size() == fn.loop_base) add_fact(fn, kTrainsStepFact);
}

void Checker::record_call_edge(const std::string& callee, bool reference) {
  std::string_view top = std::string_view(callee).substr(0, callee.find('.'));
  if (top.empty() || model_.is_external_package(top)) return;
  FunctionState& fn = model_.function();
  const bool in_loop = model_.loops_.size() > fn.loop_base;
  CallFact call;
  call.callee = callee;
  if (model_.in_no_grad()) call.contexts.emplace_back("no-grad");
  if (in_loop) call.contexts.emplace_back(kInLoopContext);
  if (!fn.eval_mode.empty()) call.contexts.emplace_back(kEvalModeContext);
  if (reference) call.contexts.emplace_back(kReferenceContext);
  fn.facts.calls.push_back(std::move(call));
  for (size_t i = fn.loop_base; i < model_.loops_.size(); ++i) model_.loops_[i].callees.push_back(callee);
  if (in_loop) model_.loops_.back().direct_callees.push_back(callee);
  if (fn.is_module_level && !reference && callee.size() > model_.module_name().size() &&
      callee.starts_with(model_.module_name()) && callee[model_.module_name().size()] == '.') {
    module_calls_own_function_ = true;
  }
}

void Checker::record_callback_edges() {
  const Syntax& syn = Syntax::get();
  for (const CallArgument& a : call_args_) {
    if (ts_node_is_null(a.value)) continue;
    Kind k = syn.kind(a.value);
    if (k == Kind::kIdentifier) {
      const Binding* b = model_.lookup(model_.text(a.value));
      if (!b || (b->kind != BindingKind::kFunction && b->kind != BindingKind::kImport)) continue;
      if (!b->qualified_name.empty()) record_call_edge(b->qualified_name, /*reference=*/true);
    } else if (k == Kind::kAttribute) {
      TSNode object = field(a.value, syn.fields().object);
      if (syn.kind(object) != Kind::kIdentifier || model_.text(object) != "self") continue;
      if (auto q = model_.resolve_qualified_name(a.value)) record_call_edge(*q, /*reference=*/true);
    }
  }
}

void Checker::on_call(TSNode node) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  CallEvent event;
  event.node = node;
  event.callee = field(node, f.function);
  TSNode args = field(node, f.arguments);
  call_args_.clear();
  if (!ts_node_is_null(args) && syn.kind(args) == Kind::kArgumentList) {
    event.arguments = args;
    TSTreeCursor& cursor = arg_cursor_;
    ts_tree_cursor_reset(&cursor, args);
    for (bool more = ts_tree_cursor_goto_first_child(&cursor); more; more = ts_tree_cursor_goto_next_sibling(&cursor)) {
      TSNode arg = ts_tree_cursor_current_node(&cursor);
      if (!ts_node_is_named(arg)) continue;
      Kind k = syn.kind(arg);
      if (k == Kind::kComment) continue;
      if (k == Kind::kListSplat) event.has_args_splat = true;
      if (k == Kind::kDictionarySplat) event.has_kwargs_splat = true;
      CallArgument a{{}, arg, k};
      if (k == Kind::kKeywordArgument) {
        a.name = model_.text(field(arg, f.name));
        a.value = field(arg, f.value);
      }
      call_args_.push_back(a);
    }
  }
  event.args = call_args_.data();
  event.arg_count = call_args_.size();
  event.qualname = model_.resolve_qualified_name(event.callee);
  if (syn.kind(event.callee) == Kind::kAttribute) {
    event.method = model_.text(field(event.callee, f.attribute));
    event.receiver = field(event.callee, f.object);
  }
  TSNode parent = parent_node();
  if (!ts_node_is_null(parent)) {
    Kind pk = syn.kind(parent);
    if (pk == Kind::kAssignment && ts_node_eq(field(parent, f.right), node)) event.assigned_to = field(parent, f.left);
    if (pk == Kind::kWithItem || pk == Kind::kAsPattern) event.is_with_item = true;
    if (pk == Kind::kDecorator) event.is_decorator = true;
  }

  FunctionState& fn = model_.function();
  std::string_view receiver_text = ts_node_is_null(event.receiver) ? std::string_view() : model_.text(event.receiver);
  ValueInfo receiver = ts_node_is_null(event.receiver) ? ValueInfo{} : model_.infer_value(event.receiver);

  // Facts the project pass and the rules build on.
  // `tokenizer.pad(examples, ...)`: a collate function padding pre-tokenized text.
  if (event.method == "pad" && receiver_text.ends_with("tokenizer")) add_fact(fn, kPadsTokensFact);
  if (event.qualname) {
    const std::string& q = *event.qualname;
    switch (api::seeded_by(q)) {
      case api::Rng::kTorch:
        add_fact(fn, "seeds-torch");
        break;
      case api::Rng::kNumpy:
        add_fact(fn, "seeds-numpy");
        break;
      case api::Rng::kRandom:
        add_fact(fn, "seeds-random");
        break;
      case api::Rng::kAll:
        add_fact(fn, "seeds-torch");
        add_fact(fn, "seeds-numpy");
        add_fact(fn, "seeds-random");
        break;
      case api::Rng::kNone:
        break;
    }
    switch (api::draws_from(q)) {
      case api::Rng::kNumpy:
        add_fact(fn, "draws-numpy");
        break;
      case api::Rng::kRandom:
        add_fact(fn, "draws-random");
        break;
      default:
        break;
    }
    if (q == api::kAutogradGrad) fn.calls_autograd_grad = true;
    if (auto usage = api::usage_fact(q); !usage.empty()) add_fact(fn, usage);
    if (q == api::kSetGradEnabled && syn.kind(parent) == Kind::kExpressionStatement) {
      TSNode arg = event.positional(0);
      if (is_false_literal(arg)) fn.grad_disabled_statement = true;
      if (is_true_literal(arg)) fn.grad_disabled_statement = false;
    }
    if (q == api::kTorchDevice) {
      TSNode arg = event.positional(0);
      if (!ts_node_is_null(arg) && model_.infer_value(arg).cuda) {
        model_.uses_cuda_ = true;
        add_fact(fn, kUsesCudaFact);
      }
    }
    size_t recorded = fn.facts.calls.size();
    record_call_edge(q);
    if (fn.facts.calls.size() > recorded && !ts_node_is_null(event.assigned_to) &&
        names_training_data(model_.text(event.assigned_to))) {
      fn.facts.calls.back().contexts.emplace_back(kTrainDataContext);
    }
  } else if (receiver.kind == ValueKind::kInstance && !event.method.empty()) {
    record_call_edge(receiver.type + "." + std::string(event.method));
  } else if (receiver.kind == ValueKind::kModel && !event.method.empty() && !receiver.type.empty()) {
    // `model.train_net()` on a model class of the project: its own method. nn.Module's
    // (`train`, `to`, ...) are no project function, and such a guess that does not
    // resolve is not an unknown callee either.
    record_call_edge(receiver.type + "." + std::string(event.method), /*reference=*/true);
  }
  if (!call_args_.empty()) record_callback_edges();
  // `trainer.fit(model)` (Lightning), `trainer.train()` (HF): the framework runs the
  // training loop, and calls the hooks of the module it is given.
  if (receiver.kind == ValueKind::kInstance && api::is_framework_trainer(receiver.type) &&
      (event.method == "fit" || event.method == "train")) {
    add_fact(fn, "trains");
    TSNode module = event.keyword("model", model_.source());
    if (ts_node_is_null(module)) module = event.positional(0);
    ValueInfo given = ts_node_is_null(module) ? ValueInfo{} : model_.infer_value(module);
    if ((given.kind == ValueKind::kModel || given.kind == ValueKind::kInstance) && !given.type.empty()) {
      for (std::string_view hook : api::lightning_hooks()) {
        record_call_edge(given.type + "." + std::string(hook), /*reference=*/true);
      }
    }
  }
  auto loop_event = [&](LoopEventKind kind, std::string_view who, std::string callee = {}) {
    for (size_t i = fn.loop_base; i < model_.loops_.size(); ++i) {
      LoopState& loop = model_.loops_[i];
      LoopEvent e{kind,
                  node,
                  std::string(who),
                  callee,
                  model_.conditions_.size() > loop.condition_base,
                  event.positional_count()};
      loop.events.push_back(std::move(e));
    }
  };
  if (model_.loops_.size() > fn.loop_base) {
    if (event.method == "zero_grad") loop_event(LoopEventKind::kZeroGrad, receiver_text);
    if (event.qualname &&
        !model_.is_external_package(std::string_view(*event.qualname).substr(0, event.qualname->find('.')))) {
      loop_event(LoopEventKind::kCall, {}, *event.qualname);
    }
    std::string_view target = event.forward_pass_target(model_);
    if (!target.empty()) loop_event(LoopEventKind::kForward, target);
  }
  // `p.data.add_(p.grad, alpha=-lr)`, `p.sub_(lr * p.grad)`: training without an
  // optimizer object.
  if ((event.method == "add_" || event.method == "sub_") && event.arg_count > 0 &&
      manual_update_uses_grad(model_.text(event.arguments))) {
    note_manual_step();
  }
  if (event.method == "backward") {
    loop_event(LoopEventKind::kBackward, receiver_text);
    fn.calls_backward = true;
    add_fact(fn, "backward");
    for (size_t i = fn.loop_base; i < model_.loops_.size(); ++i) model_.loops_[i].calls_backward = true;
  } else if (event.method == "step" &&
             (receiver.kind == ValueKind::kScheduler ||
              ascii_ifind(last_dotted_part(receiver_text), "sched") != std::string_view::npos)) {
    loop_event(LoopEventKind::kSchedulerStep, receiver_text);
  } else if (event.method == "step") {
    bool optimizer = receiver.kind == ValueKind::kOptimizer ||
                     (receiver.kind == ValueKind::kGradScaler && event.positional_count() > 0) ||
                     (receiver.kind == ValueKind::kUnknown && api::receiver_names_optimizer(receiver_text)) ||
                     (receiver.kind == ValueKind::kUnknown &&
                      ascii_ifind(last_dotted_part(receiver_text), "scaler") != std::string_view::npos &&
                      event.positional_count() > 0);
    if (optimizer) {
      bool via_scaler = receiver.kind == ValueKind::kGradScaler ||
                        ascii_ifind(last_dotted_part(receiver_text), "scaler") != std::string_view::npos;
      TSNode stepped = via_scaler ? event.positional(0) : TSNode{};
      loop_event(LoopEventKind::kOptimizerStep, ts_node_is_null(stepped) ? receiver_text : model_.text(stepped));
      fn.steps_optimizer = true;
      if (!fn.first_training_byte) fn.first_training_byte = ts_node_start_byte(node);
      add_fact(fn, "trains");
      if (model_.loops_.size() == fn.loop_base) add_fact(fn, kTrainsStepFact);
      // Training with the model in eval mode on purpose (frozen batch-norm statistics, a
      // linear probe): the eval() is the training code's own choice.
      if (!fn.eval_mode.empty()) add_fact(fn, "trains-in-eval-mode");
      for (size_t i = fn.loop_base; i < model_.loops_.size(); ++i) model_.loops_[i].steps_optimizer = true;
    }
  }
  // `parser.add_argument("--device", default="cuda")`: the option's value names a GPU.
  if (event.method == "add_argument") {
    TSNode fallback = event.keyword("default", model_.source());
    if (!ts_node_is_null(fallback) && model_.infer_value(fallback).cuda) {
      std::string_view flag, v;
      for (size_t i = 0; i < event.positional_count(); ++i) {
        if (string_literal_value(event.positional(i), model_.source(), v) && (flag.empty() || v.starts_with("--")))
          flag = v;
      }
      TSNode dest = event.keyword("dest", model_.source());
      std::string name;
      if (!ts_node_is_null(dest) && string_literal_value(dest, model_.source(), v)) {
        name = std::string(v);
      } else {
        while (flag.starts_with('-')) flag.remove_prefix(1);
        name = std::string(flag);
        std::replace(name.begin(), name.end(), '-', '_');
      }
      if (!name.empty()) model_.cuda_options_.push_back(std::move(name));
    }
  }
  // Where the program names a GPU, in any form: the file knows it (GPU-only advice in this
  // file), and the function records it (the same advice elsewhere in its program).
  bool cuda = false;
  if (event.method == "cuda") {
    cuda = true;
  } else if (event.method == "to") {
    TSNode target = event.keyword("device", model_.source());
    if (ts_node_is_null(target)) target = event.positional(0);
    cuda = !ts_node_is_null(target) && (model_.infer_value(target).cuda || names_gpu_index(model_.text(target)));
  } else if (event.qualname && api::names_gpu(*event.qualname)) {
    cuda = true;
  }
  if (!cuda && event.arg_count > 0) {
    TSNode device = event.keyword("device", model_.source());
    cuda = !ts_node_is_null(device) && model_.infer_value(device).cuda;
  }
  if (cuda) {
    model_.uses_cuda_ = true;
    add_fact(fn, kUsesCudaFact);
  }

  dispatch(Event::kCall, [&](auto& h) { h.on_call(event, *this); });

  // Mode changes take effect after the call.
  if (event.method == "eval" || event.method == "train") {
    TSNode arg = event.positional(0);
    bool to_eval = event.method == "eval" || is_false_literal(arg);
    auto& modes = fn.eval_mode;
    auto it = std::find(modes.begin(), modes.end(), receiver_text);
    if (to_eval && it == modes.end()) modes.emplace_back(receiver_text);
    if (!to_eval && it != modes.end()) modes.erase(it);
  }
}

// ---------------------------------------------------------------------------------
// Assignments and comments

void Checker::bind_target(TSNode target, const ValueInfo& value, const std::string& alias_of, BindingKind kind) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  Kind k = syn.kind(target);
  if (k == Kind::kIdentifier) {
    Binding b;
    b.kind = kind;
    b.value = value;
    b.qualified_name = alias_of;
    b.line = ts_node_start_point(target).row + 1;
    model_.bind(model_.text(target), std::move(b));
  } else if (k == Kind::kAttribute) {
    TSNode object = field(target, f.object);
    if (syn.kind(object) != Kind::kIdentifier || model_.text(object) != "self") return;
    int cls = model_.function().enclosing_class;
    if (cls < 0) return;
    Binding b;
    b.kind = kind;
    b.value = value;
    b.line = ts_node_start_point(target).row + 1;
    auto& attrs = model_.classes_[static_cast<size_t>(cls)]->attributes;
    std::string attr(model_.text(field(target, f.attribute)));
    // An attribute assigned different kinds of values is unknown.
    auto it = attrs.find(attr);
    if (it != attrs.end() && it->second.value.kind != value.kind) b.value = ValueInfo{};
    attrs[attr] = std::move(b);
  } else if (k == Kind::kPatternList || k == Kind::kTuple) {
    for (TSNode element : named_children(target)) bind_target(element, ValueInfo{}, {}, BindingKind::kOther);
  }
}

void Checker::on_assignment(TSNode node) {
  const Syntax& syn = Syntax::get();
  const Fields& f = syn.fields();
  TSNode right = field(node, f.right);
  // a = b = value: every target gets the innermost value.
  TSNode targets[65];  // no heap allocation for the usual single target
  size_t target_count = 0;
  targets[target_count++] = field(node, f.left);
  for (int guard = 0; guard < 64 && !ts_node_is_null(right) && syn.kind(right) == Kind::kAssignment; ++guard) {
    targets[target_count++] = field(right, f.left);
    right = field(right, f.right);
  }
  ValueInfo value = ts_node_is_null(right) ? ValueInfo{} : model_.infer_value(right);
  // `self.device = "cuda" if torch.cuda.is_available() else "cpu"`: the program names a GPU.
  if (value.kind == ValueKind::kDevice && value.cuda) {
    model_.uses_cuda_ = true;
    add_fact(model_.function(), kUsesCudaFact);
  }
  std::string alias_of;
  if (!ts_node_is_null(right)) {
    Kind rk = syn.kind(right);
    if (rk == Kind::kAttribute || rk == Kind::kIdentifier) {
      if (auto q = model_.resolve_qualified_name(right)) alias_of = *q;
    }
  }
  // `encoder = EncoderCNN(size).eval()`: the name holds a model in eval mode.
  bool eval_on_creation = false;
  if (!ts_node_is_null(right) && syn.kind(right) == Kind::kCall) {
    TSNode callee = field(right, f.function);
    if (syn.kind(callee) == Kind::kAttribute && model_.text(field(callee, f.attribute)) == "eval")
      eval_on_creation = true;
  }
  for (size_t i = 0; i < target_count; ++i) {
    TSNode t = targets[i];
    if (ts_node_is_null(t)) continue;
    dispatch_assign({node, t, right, "="});
    bind_target(t, value, alias_of, BindingKind::kAssign);
    if (eval_on_creation) {
      auto& modes = model_.function().eval_mode;
      std::string_view name = model_.text(t);
      if (std::find(modes.begin(), modes.end(), name) == modes.end()) modes.emplace_back(name);
    }
  }
}

void Checker::dispatch_assign(const AssignEvent& event) {
  dispatch(Event::kAssign, [&](auto& h) { h.on_assign(event, *this); });
  for (auto& a : analyses_) {
    if (a.events & event_bit(Event::kAfterAssign)) a.analysis->after_assign(event, *this);
  }
}

void Checker::on_comment(TSNode node) {
  std::string_view text = model_.text(node);
  if (text.find("noqa") == std::string_view::npos && text.find("NOQA") == std::string_view::npos &&
      text.find("torchlint") == std::string_view::npos) {
    return;
  }
  TSPoint p = ts_node_start_point(node);
  std::string_view line = file_.line_text(p.row + 1);
  bool own_line =
      line.substr(0, std::min<size_t>(p.column, line.size())).find_first_not_of(" \t") == std::string_view::npos;
  uint32_t column = file_.position(ts_node_start_byte(node)).column;
  if (auto s = parse_suppression_comment(text, p.row + 1, column, own_line))
    result_.suppressions.push_back(std::move(*s));
}

}  // namespace torchlint::python
