#pragma once
// tree-sitter-python node kinds and fields, looked up once by name so the traversal
// compares small integers instead of strings. Several grammar symbols can share a
// visible name (aliases); the table maps every one of them.
#include <tree_sitter/api.h>

#include <cstdint>
#include <string_view>
#include <vector>

extern "C" const TSLanguage* tree_sitter_python(void);

namespace torchlint::python {

enum class Kind : uint8_t {
  kOther,
  kModule,
  kImportStatement,
  kImportFromStatement,
  kFutureImportStatement,
  kAliasedImport,
  kDottedName,
  kRelativeImport,
  kImportPrefix,
  kWildcardImport,
  kFunctionDefinition,
  kClassDefinition,
  kDecoratedDefinition,
  kDecorator,
  kWithStatement,
  kWithItem,
  kAsPattern,
  kForStatement,
  kWhileStatement,
  kIfStatement,
  kElifClause,
  kElseClause,
  kConditionalExpression,
  kExpressionStatement,
  kAssignment,
  kAugmentedAssignment,
  kCall,
  kAttribute,
  kIdentifier,
  kArgumentList,
  kKeywordArgument,
  kListSplat,
  kDictionarySplat,
  kString,
  kInteger,
  kFloat,
  kTrue,
  kFalse,
  kNone,
  kComment,
  kLambda,
  kComparisonOperator,
  kBlock,
  kParameters,
  kTypedParameter,
  kDefaultParameter,
  kTypedDefaultParameter,
  kListSplatPattern,
  kDictionarySplatPattern,
  kTuple,
  kPatternList,
  kParenthesizedExpression,
  kSubscript,
  kBinaryOperator,
  kUnaryOperator,
  kExpressionList,
  kReturnStatement,
  kSimpleStatement,  // statements without a body (pass, assert, raise, del, ...)
  kLegacyStatement,  // Python 2 print/exec statements, which tree-sitter-python still accepts
  kError,
  kCount
};

struct Fields {
  TSFieldId name, body, function, arguments, object, attribute, left, right, value, condition,
      module_name, alias, parameters, superclasses, consequence, alternative, definition, type, operators;
};

class Syntax {
 public:
  // Inline: asked for on every node the traversal visits.
  static const Syntax& get() {
    static const Syntax instance;
    return instance;
  }
  const TSLanguage* language() const { return language_; }
  Kind kind(TSNode node) const {
    TSSymbol s = ts_node_symbol(node);
    return s < kinds_.size() ? kinds_[s] : Kind::kOther;
  }
  const Fields& fields() const { return fields_; }
  // An expression (or an expression-level part such as a parameter list or a keyword
  // argument): it holds no statement, whatever its text.
  bool is_expression(TSNode node) const {
    TSSymbol s = ts_node_symbol(node);
    return s < expression_.size() && expression_[s];
  }

 private:
  Syntax();
  const TSLanguage* language_;
  std::vector<Kind> kinds_;
  std::vector<bool> expression_;
  Fields fields_{};
};

// Small helpers over TSNode that every part of the front-end uses.
inline std::string_view node_text(TSNode node, std::string_view source) {
  uint32_t s = ts_node_start_byte(node), e = ts_node_end_byte(node);
  if (e > source.size() || s > e) return {};
  return source.substr(s, e - s);
}
inline TSNode field(TSNode node, TSFieldId id) { return ts_node_child_by_field_id(node, id); }
// `x` for `(x)`, `((x))`; the node itself otherwise (a null node too).
inline TSNode unparenthesized(TSNode node) {
  while (!ts_node_is_null(node) && Syntax::get().kind(node) == Kind::kParenthesizedExpression) {
    node = ts_node_named_child(node, 0);
  }
  return node;
}

// Visits `root` and its named descendants in document order, without recursion;
// `visit(node, depth)` (depth 0 for `root`) returns whether to visit the node's children.
// Cheaper than recursing with ts_node_named_child(i), which walks the siblings from the
// first one on every call.
template <class Visit>
void walk_named(TSNode root, Visit&& visit) {
  if (ts_node_is_null(root)) return;
  TSTreeCursor cursor = ts_tree_cursor_new(root);
  uint32_t depth = 0;
  for (;;) {
    TSNode node = ts_tree_cursor_current_node(&cursor);
    bool descend = ts_node_is_named(node) && visit(node, depth);
    if (descend && ts_tree_cursor_goto_first_child(&cursor)) {
      ++depth;
      continue;
    }
    bool done = false;
    while (!done) {
      if (depth == 0) {
        done = true;
        break;
      }
      if (ts_tree_cursor_goto_next_sibling(&cursor)) break;
      ts_tree_cursor_goto_parent(&cursor);
      --depth;
    }
    if (done) break;
  }
  ts_tree_cursor_delete(&cursor);
}

// The value of a plain string literal without prefix and quotes; false for f-strings,
// concatenations and anything else torchlint cannot read as one constant.
bool string_literal_value(TSNode node, std::string_view source, std::string_view& out);

}  // namespace torchlint::python
