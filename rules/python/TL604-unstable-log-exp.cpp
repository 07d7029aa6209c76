// TL604 unstable-log-exp: `log(1 + x)`, `exp(x) - 1` and `log(sum(exp(x)))` written out
// instead of log1p, expm1 and logsumexp.
#include "catalog.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

// A literal one: `1`, `1.0`, `1.`.
bool is_one(TSNode node, RuleContext& ctx) {
  node = unparenthesized(node);
  Kind k = Syntax::get().kind(node);
  if (k != Kind::kInteger && k != Kind::kFloat) return false;
  std::string_view t = ctx.text(node);
  return t == "1" || t == "1.0" || t == "1." || t == "1.00";
}

// `a <op> b` as (left, operator, right); nulls for anything else.
struct Binary {
  TSNode left{}, right{};
  std::string_view op;
};
Binary binary(TSNode node, RuleContext& ctx) {
  node = unparenthesized(node);
  if (ts_node_is_null(node) || Syntax::get().kind(node) != Kind::kBinaryOperator || ts_node_child_count(node) != 3) {
    return {};
  }
  return {ts_node_child(node, 0), ts_node_child(node, 2), ctx.text(ts_node_child(node, 1))};
}

// The call `node` is, when it calls `qualname` (through any alias).
bool calls(TSNode node, std::string_view qualname, RuleContext& ctx) {
  node = unparenthesized(node);
  if (ts_node_is_null(node) || Syntax::get().kind(node) != Kind::kCall) return false;
  auto q = ctx.model().resolve_qualified_name(field(node, Syntax::get().fields().function));
  return q && *q == qualname;
}

// A call's keyword argument `name`, or its positional argument `index`.
TSNode argument(TSNode call, std::string_view name, size_t index, RuleContext& ctx) {
  const Syntax& syn = Syntax::get();
  TSNode args = field(unparenthesized(call), syn.fields().arguments);
  size_t position = 0;
  for (TSNode a : named_children(args)) {
    Kind k = syn.kind(a);
    if (k == Kind::kComment) continue;
    if (k == Kind::kKeywordArgument) {
      if (ctx.text(field(a, syn.fields().name)) == name) return field(a, syn.fields().value);
      continue;
    }
    if (k == Kind::kListSplat || k == Kind::kDictionarySplat) return {};
    if (position++ == index) return a;
  }
  return {};
}

class UnstableLogExp final : public Rule {
 public:
  static constexpr std::string_view kTriggers[] = {"log", "exp"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (!call.qualname || call.positional_count() != 1 || call.arg_count != 1) return;
    TSNode arg = call.positional(0);
    if (*call.qualname == "torch.log") {
      Binary b = binary(arg, ctx);
      if (b.op == "+" && (is_one(b.left, ctx) || is_one(b.right, ctx))) {
        ctx.report(call.node,
                   "`torch.log(1 + x)` loses the precision of small `x` (1 + x rounds to 1); use "
                   "`torch.log1p(x)`");
      } else if (calls(arg, "torch.sum", ctx) && logsumexp_dim(arg, ctx)) {
        ctx.report(call.node,
                   "`torch.log(torch.sum(torch.exp(x), dim))` overflows for large `x` and underflows for "
                   "very negative `x`; use `torch.logsumexp(x, dim)`, which subtracts the maximum first");
      }
    } else if (*call.qualname == "torch.exp") {
      // `torch.exp(x) - 1`: the call is the left operand of a subtraction of one.
      TSNode parent = ts_node_parent(call.node);
      while (!ts_node_is_null(parent) && Syntax::get().kind(parent) == Kind::kParenthesizedExpression) {
        parent = ts_node_parent(parent);
      }
      Binary b = binary(parent, ctx);
      if (b.op == "-" && ts_node_eq(unparenthesized(b.left), call.node) && is_one(b.right, ctx)) {
        ctx.report(parent,
                   "`torch.exp(x) - 1` loses the precision of small `x` (exp(x) rounds to 1); use "
                   "`torch.expm1(x)`");
      }
    }
  }

 private:
  // `torch.sum(torch.exp(x), dim, ...)` with a dimension given: `torch.logsumexp` needs one
  // (pytorch#144339: `dim=None` is not the sum over all elements there).
  static bool logsumexp_dim(TSNode sum, RuleContext& ctx) {
    if (!calls(argument(sum, "input", 0, ctx), "torch.exp", ctx)) return false;
    TSNode dim = argument(sum, "dim", 1, ctx);
    return !ts_node_is_null(dim) && Syntax::get().kind(dim) != Kind::kNone;
  }
};

}  // namespace
}  // namespace python

python::RuleEntry unstable_log_exp_rule() { return python::rule_entry<python::UnstableLogExp>(catalog_entry("TL604")); }

}  // namespace torchlint
