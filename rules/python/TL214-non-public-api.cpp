// TL214 non-public-api: a private torch module's function that torch also exports publicly.
#include <string>

#include "catalog.h"
#include "python/rule.h"
#include "python/shared/api_rename.h"

namespace torchlint {
namespace python {
namespace {

struct PublicName {
  std::string_view private_name, public_name;
};

// Private spellings whose public name is the same function (a safe rename).
constexpr PublicName kPublicNames[] = {
    {"torch.utils.data._utils.collate.default_collate", "torch.utils.data.default_collate"},
    {"torch.utils.data._utils.collate.default_convert", "torch.utils.data.default_convert"},
};

std::optional<std::string> public_name(std::string_view q) {
  for (const auto& p : kPublicNames) {
    if (q == p.private_name) return std::string(p.public_name);
  }
  return std::nullopt;
}

std::string message(std::string_view private_name, std::string_view public_name) {
  return "`" + std::string(private_name) +
         "` lives in a private module that may change without notice; use the "
         "public `" +
         std::string(public_name) + "`";
}

class NonPublicApi final : public Rule {
 public:
  static constexpr std::string_view kTriggers[] = {"default_collate", "default_convert"};

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (!call.qualname) return;
    if (auto name = public_name(*call.qualname)) {
      ctx.report(call.callee, message(*call.qualname, *name), rename::callee_fix(call.callee, *name, ctx.model()));
    }
  }

  void on_import(const ImportEvent& event, RuleContext& ctx) override {
    if (auto name = public_name(event.qualified_name)) {
      ctx.report(event.name, message(event.qualified_name, *name),
                 rename::from_import_fix(event, ctx.model(), [](const std::string& q) { return public_name(q); }));
    }
  }
};

}  // namespace
}  // namespace python

python::RuleEntry non_public_api_rule() { return python::rule_entry<python::NonPublicApi>(catalog_entry("TL214")); }

}  // namespace torchlint
