// The syntax helpers rules build on: field() with and without its cache, and the cursor
// based child lists, against tree-sitter's own per-index answers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "python/analyzer.h"
#include "python/syntax.h"

using namespace torchlint::python;

namespace {

struct Tree {
  std::string source;
  TSTree* tree;
  explicit Tree(std::string text) : source(std::move(text)), tree(parse_python(source)) {}
  ~Tree() { ts_tree_delete(tree); }
  TSNode root() const { return ts_tree_root_node(tree); }
  std::string text(TSNode n) const { return std::string(node_text(n, source)); }
};

// The first node of kind `k` in document order.
TSNode first_of(TSNode root, Kind k) {
  TSNode found{};
  walk_named(root, [&](TSNode n, uint32_t) {
    if (!ts_node_is_null(found)) return false;
    if (Syntax::get().kind(n) == k) found = n;
    return ts_node_is_null(found);
  });
  return found;
}

std::vector<std::string> texts(const Tree& t, const std::vector<TSNode>& nodes) {
  std::vector<std::string> out;
  for (TSNode n : nodes) out.push_back(t.text(n));
  return out;
}

}  // namespace

TEST_CASE("named_children lists what ts_node_named_child lists, comments included") {
  Tree t("f(a, b,  # why\n  key=d, *rest)\n");
  TSNode args = first_of(t.root(), Kind::kArgumentList);
  REQUIRE_FALSE(ts_node_is_null(args));
  std::vector<TSNode> by_index;
  for (uint32_t i = 0; i < ts_node_named_child_count(args); ++i) by_index.push_back(ts_node_named_child(args, i));
  std::vector<TSNode> listed = named_children(args);
  CHECK(texts(t, listed) == texts(t, by_index));
  CHECK(texts(t, listed) == std::vector<std::string>{"a", "b", "# why", "key=d", "*rest"});

  std::vector<TSNode> stack{args};
  append_named_children_reversed(args, stack);
  CHECK(texts(t, stack) == std::vector<std::string>{t.text(args), "*rest", "key=d", "# why", "b", "a"});

  CHECK(named_children(TSNode{}).empty());
  CHECK(named_children(first_of(t.root(), Kind::kIdentifier)).empty());
}

TEST_CASE("field() gives the same answers inside and outside a cache scope, across trees") {
  const Fields& f = Syntax::get().fields();
  for (const char* source : {"x = obj.attr(1)\n", "y = other.name(2, 3)\n"}) {
    Tree t(source);
    TSNode call = first_of(t.root(), Kind::kCall);
    REQUIRE_FALSE(ts_node_is_null(call));
    std::string uncached = t.text(field(call, f.function));
    FieldCache::Scope scope;
    for (int i = 0; i < 3; ++i) {
      CHECK(t.text(field(call, f.function)) == uncached);
      CHECK(t.text(field(call, f.arguments)) == t.text(ts_node_child_by_field_id(call, f.arguments)));
      CHECK(ts_node_is_null(field(call, f.left)));  // a field calls do not have
    }
    CHECK(Syntax::get().field_id("function") == f.function);
    CHECK(Syntax::get().field_id("no_such_field") == 0);
  }
}

TEST_CASE("child_containing and ancestors agree with ts_node_parent") {
  Tree t(
      "import os\n\n\nclass A:\n    def f(self, x):\n        for i in range(3):\n            if x:\n"
      "                y = g(x[i]).h  # c\n        return y\n");
  // Every node's chain of parents, computed by tree-sitter, against one descent.
  std::vector<TSNode> all;
  walk_named(t.root(), [&](TSNode n, uint32_t) {
    all.push_back(n);
    return true;
  });
  REQUIRE(all.size() > 20);
  for (TSNode n : all) {
    std::vector<TSNode> expected;
    for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); p = ts_node_parent(p)) expected.insert(expected.begin(), p);
    std::vector<TSNode> got = ancestors(n);
    INFO(ts_node_type(n), " ", t.text(n), " ", ts_node_start_byte(n));
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(ts_node_eq(got[i], expected[i]));
    // Down from each ancestor, the child on the way to `n`.
    for (size_t i = 0; i < got.size(); ++i) {
      TSNode next = i + 1 < got.size() ? got[i + 1] : n;
      CHECK(ts_node_eq(child_containing(got[i], n), next));
    }
  }
  TSNode call = first_of(t.root(), Kind::kCall);
  TSNode cls = first_of(t.root(), Kind::kClassDefinition);
  CHECK(ts_node_is_null(child_containing(call, cls)));  // not inside
  CHECK(ts_node_is_null(child_containing(TSNode{}, call)));
  CHECK(ancestors(t.root()).empty());
  CHECK(ancestors(TSNode{}).empty());
}

TEST_CASE("ancestors of an empty MISSING node") {
  Tree t("def f(:\n  pass\n");  // (parameters "(" (MISSING ")"))
  TSNode missing{};
  // walk_named visits named nodes only; an unnamed MISSING token needs a cursor walk.
  TSTreeCursor c = ts_tree_cursor_new(t.root());
  for (bool more = true; more;) {
    TSNode n = ts_tree_cursor_current_node(&c);
    if (ts_node_is_missing(n)) missing = n;
    if (ts_tree_cursor_goto_first_child(&c)) continue;
    while (!ts_tree_cursor_goto_next_sibling(&c)) {
      if (!ts_tree_cursor_goto_parent(&c)) {
        more = false;
        break;
      }
    }
  }
  ts_tree_cursor_delete(&c);
  REQUIRE_FALSE(ts_node_is_null(missing));
  std::vector<TSNode> expected;
  for (TSNode p = ts_node_parent(missing); !ts_node_is_null(p); p = ts_node_parent(p))
    expected.insert(expected.begin(), p);
  std::vector<TSNode> got = ancestors(missing);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(ts_node_eq(got[i], expected[i]));
}

namespace {

// The S-expression of a tree, with byte ranges: equal strings mean equal trees.
std::string shape(TSNode n) {
  std::string out = "(" + std::string(ts_node_type(n)) + " " + std::to_string(ts_node_start_byte(n)) + "-" +
                    std::to_string(ts_node_end_byte(n));
  for (uint32_t i = 0; i < ts_node_child_count(n); ++i) out += " " + shape(ts_node_child(n, i));
  return out + ")";
}

std::string parsed_with(torchlint::ParseMemo& memo, const std::string& text) {
  TSTree* tree = parse_with_memo(memo, text);
  std::string s = shape(ts_tree_root_node(tree));
  ts_tree_delete(tree);
  return s;
}

}  // namespace

TEST_CASE("re-parsing from the memo's tree gives the tree a fresh parse gives") {
  // The language server's edits: a keystroke, a deleted line, a pasted block, a line that
  // breaks the syntax and its repair, an edit on the last line, everything replaced.
  std::vector<std::string> versions = {
      "import torch\n\ndef f(x):\n    return torch.load(x)\n",
      "import torch\n\ndef f(x):\n    return torch.load(x, weights_only=True)\n",
      "import torch\n\ndef f(x):\n    y = (x +\n    return torch.load(x, weights_only=True)\n",
      "import torch\n\ndef f(x):\n    y = (x + 1)\n    return torch.load(x, weights_only=True)\n",
      "import torch\nimport numpy as np\n\n\ndef g():\n    pass\n\ndef f(x):\n    y = (x + 1)\n    return y\n",
      "import torch\nimport numpy as np\n\n\ndef g():\n    pass\n\ndef f(x):\n    y = (x + 1)\n    return y  # é\n",
      "x = 1",
      "",
      "class M(torch.nn.Module):\n    def forward(self, x):\n        return x\n",
  };
  torchlint::ParseMemo memo;
  for (const auto& text : versions) {
    TSTree* fresh = parse_python(text);
    std::string expected = shape(ts_tree_root_node(fresh));
    ts_tree_delete(fresh);
    CHECK(parsed_with(memo, text) == expected);
  }
  // A memo another front-end filled is not trusted: the parse starts from scratch.
  torchlint::ParseMemo foreign;
  foreign.owner = &foreign;
  CHECK(parsed_with(foreign, versions[0]).starts_with("(module 0-"));
}
