#pragma once
// tree-sitter-python node kinds and fields, looked up once by name so the traversal
// compares small integers instead of strings. Several grammar symbols can share a
// visible name (aliases); the table maps every one of them.
#include <tree_sitter/api.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "core/name_table.h"

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
  TSFieldId name, body, function, arguments, object, attribute, left, right, value, condition, module_name, alias,
      parameters, superclasses, consequence, alternative, definition, type, operators, key, subscript;
};

class Syntax {
 public:
  // Inline: asked for on every node the traversal visits.
  static const Syntax& get() {
    static const Syntax instance;
    return instance;
  }
  const TSLanguage* language() const { return language_; }
  Kind kind(TSNode node) const { return kind_of(ts_node_symbol(node)); }
  Kind kind_of(TSSymbol s) const { return s < kinds_.size() ? kinds_[s] : Kind::kOther; }
  const Fields& fields() const { return fields_; }
  // The id of the field called `name`; 0, which no child has, for a name the grammar
  // lacks. ts_node_child_by_field_name compares `name` with every field name instead.
  TSFieldId field_id(std::string_view name) const {
    uint32_t id = field_ids_->find(name);
    return id == detail::NameIndex::kAbsent ? 0 : static_cast<TSFieldId>(id);
  }
  // An expression (or an expression-level part such as a parameter list or a keyword
  // argument): it holds no statement, whatever its text.
  bool is_expression(TSNode node) const { return is_expression_symbol(ts_node_symbol(node)); }
  bool is_expression_symbol(TSSymbol s) const { return s < expression_.size() && expression_[s]; }
  // A token: an anonymous node ("(", "def", and the two-word operators "is not" and
  // "not in", whose parts are tokens too) or a named token (identifier, number, string
  // delimiters, comment, ...). Nothing below it is an event.
  bool is_token_symbol(TSSymbol s) const { return s < token_.size() && token_[s]; }

 private:
  Syntax();
  const TSLanguage* language_;
  std::vector<Kind> kinds_;
  std::vector<bool> expression_;
  std::vector<bool> token_;
  Fields fields_{};
  std::vector<std::string_view> field_names_;   // by id; [0] is empty
  std::optional<detail::NameIndex> field_ids_;  // name -> position in field_names_
};

// Small helpers over TSNode that every part of the front-end uses.
inline std::string_view node_text(TSNode node, std::string_view source) {
  uint32_t s = ts_node_start_byte(node), e = ts_node_end_byte(node);
  if (e > source.size() || s > e) return {};
  return source.substr(s, e - s);
}

// ts_node_child_by_field_id walks the node's children and the grammar's field map on
// every call, and the traversal, the semantic model and the rules ask for the same field
// of the same node again and again (a call's `function`, an attribute's `object`): about
// two calls in three repeat one made shortly before. While a FieldCache::Scope is open
// (the Checker's run over one tree), answers are kept in a small direct-mapped table per
// thread. Outside a scope, and for entries of an earlier scope, field() asks tree-sitter.
class FieldCache {
 public:
  class Scope {
   public:
    Scope() { state().begin(); }
    ~Scope() { state().end(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
  };

  static TSNode child(TSNode node, TSFieldId id) {
    State& s = state();
    if (!s.active) return ts_node_child_by_field_id(node, id);
    // Node ids are addresses of subtrees within one tree; the start byte and the tree
    // tell apart the (inline) leaves that share storage.
    Entry& e = s.entries[slot(node, id)];
    if (e.epoch == s.epoch && e.id == node.id && e.tree == node.tree && e.start == node.context[0] && e.field == id) {
      return e.result;
    }
    TSNode result = ts_node_child_by_field_id(node, id);
    e = {node.id, node.tree, node.context[0], s.epoch, id, result};
    return result;
  }

 private:
  struct Entry {
    const void* id;
    const TSTree* tree;
    uint32_t start;
    uint32_t epoch;  // 0: never written
    TSFieldId field;
    TSNode result;
  };
  static constexpr size_t kSlots = 2048;
  struct State {
    bool active = false;
    uint32_t epoch = 0;
    Entry entries[kSlots] = {};
    void begin() {
      active = true;
      if (++epoch == 0) {  // wrapped: forget everything rather than trust an old epoch
        for (Entry& e : entries) e.epoch = 0;
        epoch = 1;
      }
    }
    void end() { active = false; }
  };
  static State& state() {
    thread_local State s;
    return s;
  }
  static size_t slot(TSNode node, TSFieldId id) {
    auto a = reinterpret_cast<uintptr_t>(node.id);
    return ((a >> 3) ^ (a >> 13) ^ (static_cast<size_t>(id) * 0x9E37u)) & (kSlots - 1);
  }
};

inline TSNode field(TSNode node, TSFieldId id) { return FieldCache::child(node, id); }

// Whether `node` is a non-null node of grammar type `type` ("keyword_argument"), for the
// types the Kind enum does not name.
inline bool is_type(TSNode node, const char* type) {
  return !ts_node_is_null(node) && std::strcmp(ts_node_type(node), type) == 0;
}
// `x` for `(x)`, `((x))`; the node itself otherwise (a null node too).
inline TSNode unparenthesized(TSNode node) {
  while (!ts_node_is_null(node) && Syntax::get().kind(node) == Kind::kParenthesizedExpression) {
    node = ts_node_named_child(node, 0);
  }
  return node;
}

// Appends the named children of `node` (none for a null node) to `out`, in document order.
// One pass with a cursor: a loop over ts_node_named_child(node, i) restarts from the first
// child on every call, which makes a walk over a long list or block quadratic.
void append_named_children(TSNode node, std::vector<TSNode>& out);
// The named children of `node` as a list, for a loop whose body may itself list children.
inline std::vector<TSNode> named_children(TSNode node) {
  std::vector<TSNode> out;
  append_named_children(node, out);
  return out;
}
// The same, last child first: pushed on a stack, they pop in document order.
void append_named_children_reversed(TSNode node, std::vector<TSNode>& out);
// The child of `parent`, named or not, whose byte range holds `node`'s (null when none
// does, and never an empty child). One descent with a cursor, which skips the children
// before it by their ranges; a loop over ts_node_child(parent, i) would be quadratic.
TSNode child_containing(TSNode parent, TSNode node);
// The ancestors of `node`, from the root of its tree down to its parent. One descent from
// the root: ts_node_parent makes one descent per call, so walking up k levels with it
// costs k descents.
std::vector<TSNode> ancestors(TSNode node);

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
