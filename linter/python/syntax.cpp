#include "syntax.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_map>

#include "core/name_table.h"
#include "core/text.h"

namespace torchlint::python {

Syntax::Syntax() : language_(tree_sitter_python()) {
  static const std::unordered_map<std::string_view, Kind> by_name = {
      {"module", Kind::kModule},
      {"import_statement", Kind::kImportStatement},
      {"import_from_statement", Kind::kImportFromStatement},
      {"future_import_statement", Kind::kFutureImportStatement},
      {"aliased_import", Kind::kAliasedImport},
      {"dotted_name", Kind::kDottedName},
      {"relative_import", Kind::kRelativeImport},
      {"import_prefix", Kind::kImportPrefix},
      {"wildcard_import", Kind::kWildcardImport},
      {"function_definition", Kind::kFunctionDefinition},
      {"class_definition", Kind::kClassDefinition},
      {"decorated_definition", Kind::kDecoratedDefinition},
      {"decorator", Kind::kDecorator},
      {"with_statement", Kind::kWithStatement},
      {"with_item", Kind::kWithItem},
      {"as_pattern", Kind::kAsPattern},
      {"for_statement", Kind::kForStatement},
      {"while_statement", Kind::kWhileStatement},
      {"if_statement", Kind::kIfStatement},
      {"elif_clause", Kind::kElifClause},
      {"else_clause", Kind::kElseClause},
      {"conditional_expression", Kind::kConditionalExpression},
      {"expression_statement", Kind::kExpressionStatement},
      {"assignment", Kind::kAssignment},
      {"augmented_assignment", Kind::kAugmentedAssignment},
      {"call", Kind::kCall},
      {"attribute", Kind::kAttribute},
      {"identifier", Kind::kIdentifier},
      {"argument_list", Kind::kArgumentList},
      {"keyword_argument", Kind::kKeywordArgument},
      {"list_splat", Kind::kListSplat},
      {"dictionary_splat", Kind::kDictionarySplat},
      {"string", Kind::kString},
      {"concatenated_string", Kind::kOther},
      {"integer", Kind::kInteger},
      {"float", Kind::kFloat},
      {"true", Kind::kTrue},
      {"false", Kind::kFalse},
      {"none", Kind::kNone},
      {"comment", Kind::kComment},
      {"lambda", Kind::kLambda},
      {"comparison_operator", Kind::kComparisonOperator},
      {"block", Kind::kBlock},
      {"parameters", Kind::kParameters},
      {"typed_parameter", Kind::kTypedParameter},
      {"default_parameter", Kind::kDefaultParameter},
      {"typed_default_parameter", Kind::kTypedDefaultParameter},
      {"list_splat_pattern", Kind::kListSplatPattern},
      {"dictionary_splat_pattern", Kind::kDictionarySplatPattern},
      {"tuple", Kind::kTuple},
      {"pattern_list", Kind::kPatternList},
      {"parenthesized_expression", Kind::kParenthesizedExpression},
      {"subscript", Kind::kSubscript},
      {"binary_operator", Kind::kBinaryOperator},
      {"unary_operator", Kind::kUnaryOperator},
      {"expression_list", Kind::kExpressionList},
      {"return_statement", Kind::kReturnStatement},
      {"pass_statement", Kind::kSimpleStatement},
      {"assert_statement", Kind::kSimpleStatement},
      {"raise_statement", Kind::kSimpleStatement},
      {"delete_statement", Kind::kSimpleStatement},
      {"global_statement", Kind::kSimpleStatement},
      {"nonlocal_statement", Kind::kSimpleStatement},
      {"break_statement", Kind::kSimpleStatement},
      {"continue_statement", Kind::kSimpleStatement},
      {"print_statement", Kind::kLegacyStatement},
      {"exec_statement", Kind::kLegacyStatement},
      {"type_alias_statement", Kind::kSimpleStatement},
      {"ERROR", Kind::kError},
  };
  uint32_t count = ts_language_symbol_count(language_);
  kinds_.assign(count, Kind::kOther);
  for (uint32_t s = 0; s < count; ++s) {
    if (ts_language_symbol_type(language_, static_cast<TSSymbol>(s)) != TSSymbolTypeRegular) continue;
    const char* name = ts_language_symbol_name(language_, static_cast<TSSymbol>(s));
    if (!name) continue;
    auto it = by_name.find(name);
    if (it != by_name.end()) kinds_[s] = it->second;
  }
  static const NameSet expressions = {
      "assignment",
      "augmented_assignment",
      "binary_operator",
      "boolean_operator",
      "comparison_operator",
      "unary_operator",
      "not_operator",
      "subscript",
      "slice",
      "list",
      "tuple",
      "dictionary",
      "set",
      "pair",
      "keyword_argument",
      "parenthesized_expression",
      "conditional_expression",
      "expression_list",
      "pattern_list",
      "tuple_pattern",
      "list_pattern",
      "concatenated_string",
      "type",
      "generic_type",
      "union_type",
      "default_parameter",
      "typed_parameter",
      "typed_default_parameter",
      "list_splat",
      "dictionary_splat",
      "await",
      "yield",
      "list_comprehension",
      "dictionary_comprehension",
      "set_comprehension",
      "generator_expression",
      "named_expression",
      "parameters",
      "argument_list",
      "lambda",
  };
  static const NameSet named_tokens = {
      "comment",
      "ellipsis",
      "escape_interpolation",
      "escape_sequence",
      "false",
      "float",
      "identifier",
      "integer",
      "line_continuation",
      "none",
      "string_end",
      "string_start",
      "true",
      "type_conversion",
  };
  token_.assign(count, false);
  for (uint32_t s = 0; s < count; ++s) {
    TSSymbolType type = ts_language_symbol_type(language_, static_cast<TSSymbol>(s));
    const char* name = ts_language_symbol_name(language_, static_cast<TSSymbol>(s));
    token_[s] = type == TSSymbolTypeAnonymous || (type == TSSymbolTypeRegular && name && named_tokens.contains(name));
  }
  expression_.assign(count, false);
  for (uint32_t s = 0; s < count; ++s) {
    if (ts_language_symbol_type(language_, static_cast<TSSymbol>(s)) != TSSymbolTypeRegular) continue;
    const char* name = ts_language_symbol_name(language_, static_cast<TSSymbol>(s));
    if (name && expressions.contains(name)) expression_[s] = true;
  }
  // ERROR is symbol 65535 (ts_builtin_sym_error), outside the table: handled by callers
  // through ts_node_is_error / has_error.
  auto f = [&](const char* n) {
    return ts_language_field_id_for_name(language_, n, static_cast<uint32_t>(std::string_view(n).size()));
  };
  fields_ =
      Fields{f("name"),       f("body"),         f("function"),    f("arguments"),   f("object"),      f("attribute"),
             f("left"),       f("right"),        f("value"),       f("condition"),   f("module_name"), f("alias"),
             f("parameters"), f("superclasses"), f("consequence"), f("alternative"), f("definition"),  f("type"),
             f("operators"),  f("key"),          f("subscript")};
  uint32_t field_count = ts_language_field_count(language_);
  field_names_.assign(field_count + 1, std::string_view());
  for (uint32_t id = 1; id <= field_count; ++id) {
    const char* name = ts_language_field_name_for_id(language_, static_cast<TSFieldId>(id));
    if (name) field_names_[id] = name;
  }
  field_ids_.emplace(field_names_.begin(), field_names_.end(), [](std::string_view n) { return n; });
}

namespace {

// One cursor per thread, reset to each node it starts from: creating a cursor allocates its
// stack. Callers call nothing that could use the cursor while they hold it.
TSTreeCursor& cursor_at(TSNode node) {
  struct CursorHolder {
    TSTreeCursor cursor{};
    bool made = false;
    ~CursorHolder() {
      if (made) ts_tree_cursor_delete(&cursor);
    }
  };
  thread_local CursorHolder holder;
  if (holder.made) {
    ts_tree_cursor_reset(&holder.cursor, node);
  } else {
    holder.cursor = ts_tree_cursor_new(node);
    holder.made = true;
  }
  return holder.cursor;
}

}  // namespace

void append_named_children(TSNode node, std::vector<TSNode>& out) {
  if (ts_node_is_null(node)) return;
  TSTreeCursor& cursor = cursor_at(node);
  for (bool more = ts_tree_cursor_goto_first_child(&cursor); more; more = ts_tree_cursor_goto_next_sibling(&cursor)) {
    TSNode child = ts_tree_cursor_current_node(&cursor);
    if (ts_node_is_named(child)) out.push_back(child);
  }
}

namespace {

// Moves `cursor` down to the first child of its node whose range holds [start, end) and
// is not empty; false (the cursor then somewhere below its node) when none does.
// tree-sitter 0.20's goto_first_child_for_byte counts the padding of a child into its end,
// so it can stop one child early: the siblings after it are checked too.
bool goto_child_holding(TSTreeCursor& cursor, uint32_t start, uint32_t end) {
  if (ts_tree_cursor_goto_first_child_for_byte(&cursor, start) < 0) return false;
  do {
    TSNode child = ts_tree_cursor_current_node(&cursor);
    uint32_t child_start = ts_node_start_byte(child), child_end = ts_node_end_byte(child);
    if (child_start > start) return false;
    if (end <= child_end && child_start < child_end) return true;
  } while (ts_tree_cursor_goto_next_sibling(&cursor));
  return false;
}

}  // namespace

std::vector<TSNode> ancestors(TSNode node) {
  std::vector<TSNode> out;
  if (ts_node_is_null(node)) return out;
  uint32_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
  TSTreeCursor& cursor = cursor_at(ts_tree_root_node(node.tree));
  for (;;) {
    TSNode current = ts_tree_cursor_current_node(&cursor);
    if (ts_node_eq(current, node)) return out;
    out.push_back(current);
    if (!goto_child_holding(cursor, start, end)) break;
  }
  // An empty node (tree-sitter's MISSING) at the edge of a sibling: ask tree-sitter.
  out.clear();
  for (TSNode p = ts_node_parent(node); !ts_node_is_null(p); p = ts_node_parent(p)) out.push_back(p);
  std::reverse(out.begin(), out.end());
  return out;
}

TSNode child_containing(TSNode parent, TSNode node) {
  if (ts_node_is_null(parent) || ts_node_is_null(node)) return {};
  TSTreeCursor& cursor = cursor_at(parent);
  if (!goto_child_holding(cursor, ts_node_start_byte(node), ts_node_end_byte(node))) return {};
  return ts_tree_cursor_current_node(&cursor);
}

void append_named_children_reversed(TSNode node, std::vector<TSNode>& out) {
  size_t first = out.size();
  append_named_children(node, out);
  std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
}

bool string_literal_value(TSNode node, std::string_view source, std::string_view& out) {
  const Syntax& syn = Syntax::get();
  if (ts_node_is_null(node) || syn.kind(node) != Kind::kString) return false;
  std::string_view text = node_text(node, source);
  size_t i = 0;
  while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) {
    char c = ascii_lower_char(text[i]);
    if (c == 'f' || c == 'b') return false;  // f-strings are not constants; bytes are not str
    ++i;
  }
  text.remove_prefix(i);
  for (std::string_view q : {"\"\"\"", "'''", "\"", "'"}) {
    if (text.size() >= 2 * q.size() && text.starts_with(q) && text.ends_with(q)) {
      out = text.substr(q.size(), text.size() - 2 * q.size());
      return true;
    }
  }
  return false;
}

}  // namespace torchlint::python
