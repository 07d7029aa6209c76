// TL603 requires-grad-typo: `x.require_grad = ...`, an attribute autograd never reads.
#include <cctype>
#include <string>
#include <vector>

#include "catalog.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

// Whether the file uses `require_grad` as a name of its own: an attribute it reads back
// (`if args.require_grad:`) or a parameter or keyword (`Head(require_grad=True)`). Then the
// assignments set a setting of the project's, not a tensor flag.
bool used_as_own_name(std::string_view src) {
  static constexpr std::string_view kName = "require_grad";
  for (size_t at = src.find(kName); at != std::string_view::npos; at = src.find(kName, at + 1)) {
    size_t end = at + kName.size();
    if (end < src.size() && (std::isalnum(static_cast<unsigned char>(src[end])) || src[end] == '_')) continue;
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(src[at - 1])) || src[at - 1] == '_')) continue;
    size_t next = end;
    while (next < src.size() && is_space(src[next])) ++next;
    bool assigned = next < src.size() && src[next] == '=' && (next + 1 >= src.size() || src[next + 1] != '=');
    size_t before = at;
    while (before > 0 && is_space(src[before - 1])) --before;
    char prev = before > 0 ? src[before - 1] : '\n';
    if (prev == '.' && !assigned) return true;                  // read: `args.require_grad`
    if ((prev == '(' || prev == ',') && assigned) return true;  // `f(require_grad=...)`, `def f(x, require_grad=True)`
  }
  return false;
}

class RequiresGradTypo final : public Rule {
 public:
  static constexpr std::string_view kTriggers[] = {"require_grad"};

  void on_assign(const AssignEvent& event, RuleContext& ctx) override {
    const Syntax& syn = Syntax::get();
    if (event.op != "=" || syn.kind(event.target) != Kind::kAttribute) return;
    TSNode attribute = field(event.target, syn.fields().attribute);
    if (ctx.text(attribute) != "require_grad") return;
    // `self.require_grad = flag`: a class's own setting, named as its author chose.
    if (ctx.text(field(event.target, syn.fields().object)) == "self") return;
    Fix fix;
    fix.message = "Set `requires_grad`";
    fix.edits.push_back({ts_node_start_byte(attribute), ts_node_end_byte(attribute), "requires_grad"});
    // The typo did nothing; the fixed line changes what autograd does.
    fix.unsafe = true;
    pending_.push_back({event.target,
                        "`" + std::string(ctx.text(event.target)) +
                            "` sets an attribute autograd never reads: the tensor's `requires_grad` is unchanged "
                            "(did you mean `requires_grad`?)",
                        std::move(fix)});
  }

  void on_module_end(RuleContext& ctx) override {
    if (!pending_.empty() && !used_as_own_name(ctx.model().source())) {
      for (auto& p : pending_) ctx.report(p.node, std::move(p.message), std::move(p.fix));
    }
    pending_.clear();
  }

 private:
  struct Pending {
    TSNode node;
    std::string message;
    Fix fix;
  };
  std::vector<Pending> pending_;
};

}  // namespace
}  // namespace python

python::RuleEntry requires_grad_typo_rule() {
  return python::rule_entry<python::RequiresGradTypo>(catalog_entry("TL603"));
}

}  // namespace torchlint
