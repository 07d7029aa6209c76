// TL210 deprecated-api: imports and uses of torch, functorch and torchvision APIs that the
// targeted release removed (an error) or deprecates (a warning), from deprecated_api.def.
#include <array>
#include <string>
#include <unordered_map>

#include "catalog.h"
#include "python/rule.h"
#include "python/shared/api_rename.h"

namespace torchlint {
namespace python {
namespace {

struct DeprecatedApi {
  std::string_view symbol;  // without a trailing ".*"
  bool whole_module;        // "module.*": the module and everything in it
  std::string_view deprecated, removed, replacement;
  bool drop_in;
  std::string_view note;
};

constexpr std::string_view strip_star(std::string_view s) { return s.ends_with(".*") ? s.substr(0, s.size() - 2) : s; }
constexpr std::string_view last_part(std::string_view s) { return s.substr(s.rfind('.') + 1); }

constexpr DeprecatedApi kApis[] = {
#define TORCHLINT_DEPRECATED(symbol, deprecated, removed, replacement, drop_in, note) \
  {strip_star(symbol), std::string_view(symbol).ends_with(".*"), deprecated, removed, replacement, drop_in, note},
#include "deprecated_api.def"
#undef TORCHLINT_DEPRECATED
};

// The last component of each symbol: a file that spells none of them uses none of them.
constexpr auto kTriggerNames = [] {
  std::array<std::string_view, std::size(kApis)> names{};
  for (size_t i = 0; i < std::size(kApis); ++i) names[i] = last_part(kApis[i].symbol);
  return names;
}();

// The entry for a qualified name: the symbol itself, or a name inside a whole module.
// Asked for every resolved call of a file that mentions a trigger (`range`, `norm`, ...
// are common words): one hash lookup, then the few whole modules.
const DeprecatedApi* find_api(std::string_view q) {
  static const auto by_symbol = [] {
    std::unordered_map<std::string_view, const DeprecatedApi*> m;
    for (const auto& api : kApis) {
      if (!api.whole_module) m.emplace(api.symbol, &api);
    }
    return m;
  }();
  if (auto it = by_symbol.find(q); it != by_symbol.end()) return it->second;
  for (const auto& api : kApis) {
    if (api.whole_module && q.starts_with(api.symbol) &&
        (q.size() == api.symbol.size() || q[api.symbol.size()] == '.')) {
      return &api;
    }
  }
  return nullptr;
}

enum class Status { kCurrent, kDeprecated, kRemoved };

class DeprecatedApiRule final : public Rule {
 public:
  static constexpr auto& kTriggers = kTriggerNames;

  void on_call(const CallEvent& call, RuleContext& ctx) override {
    if (!call.qualname) return;
    const DeprecatedApi* api = find_api(*call.qualname);
    if (!api || api->whole_module) return;  // a module's contents are reported at its import
    std::optional<Fix> fix;
    if (api->drop_in) fix = rename::callee_fix(call.callee, api->replacement, ctx.model());
    report(*api, call.callee, "", ctx, std::move(fix));
  }

  void on_decorator(const DecoratorEvent& dec, RuleContext& ctx) override {
    if (!dec.qualname) return;
    if (const DeprecatedApi* api = find_api(*dec.qualname); api && !api->whole_module)
      report(*api, dec.node, "", ctx, {});
  }

  void on_import(const ImportEvent& event, RuleContext& ctx) override {
    const DeprecatedApi* api = find_api(event.qualified_name);
    if (!api) return;
    std::optional<Fix> fix;
    if (api->drop_in && status(*api, ctx) != Status::kCurrent) {
      fix = rename::from_import_fix(event, ctx.model(), [&](const std::string& q) -> std::optional<std::string> {
        const DeprecatedApi* other = find_api(q);
        if (!other || !other->drop_in || other->whole_module || status(*other, ctx) == Status::kCurrent)
          return std::nullopt;
        return std::string(other->replacement);
      });
    }
    report(*api, event.name, "import of ", ctx, std::move(fix));
  }

 private:
  static bool is_torchvision(const DeprecatedApi& api) { return api.symbol.starts_with("torchvision."); }

  static TorchVersion target(const DeprecatedApi& api, RuleContext& ctx) {
    return is_torchvision(api) ? ctx.options().target_torchvision : ctx.options().target_torch;
  }

  // What the API is in the oldest release the project supports. A deprecation newer than
  // that release is not reported: the replacement may not exist there yet.
  static Status status(const DeprecatedApi& api, RuleContext& ctx) {
    TorchVersion t = target(api, ctx);
    if (!api.removed.empty() && *TorchVersion::parse(api.removed) <= t) return Status::kRemoved;
    if (!api.deprecated.empty() && *TorchVersion::parse(api.deprecated) <= t) return Status::kDeprecated;
    return Status::kCurrent;
  }

  static void report(const DeprecatedApi& api, TSNode node, std::string_view what, RuleContext& ctx,
                     std::optional<Fix> fix) {
    Status s = status(api, ctx);
    if (s == Status::kCurrent) return;
    const bool vision = is_torchvision(api);
    std::string package = vision ? "torchvision " : "torch ";
    std::string target_name = vision ? "target-torchvision " : "target-torch ";
    std::string name = "`" + std::string(api.symbol) + "`";
    std::string message = what.empty() ? name + " " : std::string(what) + name + ", which ";
    if (s == Status::kRemoved) {
      message +=
          "was removed in " + package + std::string(api.removed) + " (" + target_name + target(api, ctx).str() + ")";
    } else {
      message += "is deprecated since " + package + std::string(api.deprecated);
      if (!api.removed.empty()) message += " and removed in " + std::string(api.removed);
    }
    message += ": use `" + std::string(api.replacement) + "`";
    if (!api.note.empty()) message += " (" + std::string(api.note) + ")";
    if (s == Status::kRemoved) {
      // The old name fails at import or call time: a rename is no longer optional.
      ctx.report_as(Severity::kError, node, std::move(message), std::move(fix));
    } else {
      ctx.report(node, std::move(message), std::move(fix));
    }
  }
};

}  // namespace
}  // namespace python

python::RuleEntry deprecated_api_rule() {
  return python::rule_entry<python::DeprecatedApiRule>(catalog_entry("TL210"));
}

}  // namespace torchlint
