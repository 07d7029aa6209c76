#include "catalog.h"

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "rule_docs.h"

namespace torchlint {

const std::vector<RuleInfo>& rule_catalog() {
  static const std::vector<RuleInfo> rules = [] {
    using enum Language;
    std::vector<RuleInfo> all = {
#define TORCHLINT_LIST(...) \
  { __VA_ARGS__ }
#define TORCHLINT_CATALOG(code_, name_, severity_, on, fixable_, security, precision_, checklist, languages_) \
  RuleInfo{.code = code_,                                                                                     \
           .name = name_,                                                                                     \
           .severity = Severity::severity_,                                                                   \
           .default_enabled = on,                                                                             \
           .checklist_items = TORCHLINT_LIST checklist,                                                       \
           .languages = TORCHLINT_LIST languages_,                                                            \
           .fixable = fixable_,                                                                               \
           .security_severity = security,                                                                     \
           .precision = precision_},
#define TORCHLINT_ENGINE_RULE(code, role)
#include "catalog.def"
#undef TORCHLINT_ENGINE_RULE
#undef TORCHLINT_CATALOG
#undef TORCHLINT_LIST
    };
    const std::pair<std::string_view, EngineRule> engine_rules[] = {
#define TORCHLINT_CATALOG(...)
#define TORCHLINT_ENGINE_RULE(code, role) {code, EngineRule::role},
#include "catalog.def"
#undef TORCHLINT_ENGINE_RULE
#undef TORCHLINT_CATALOG
    };
    for (auto& r : all) {
      r.doc = rule_doc(r.code);
      for (const auto& [code, role] : engine_rules) {
        if (r.code == code) r.engine_rule = role;
      }
    }
    return all;
  }();
  return rules;
}

const RuleInfo& catalog_entry(std::string_view code) {
  for (const auto& r : rule_catalog()) {
    if (r.code == code) return r;
  }
  throw std::logic_error("rule " + std::string(code) + " is not in rules/catalog.def");
}

void register_catalog(RuleRegistry& registry) {
  for (const auto& r : rule_catalog()) registry.add(r);
}

std::string_view builtin_checklist_toml();  // generated: checklist_data.cpp

const Checklist& builtin_checklist() {
  static const Checklist checklist = [] {
    std::string error;
    auto parsed = parse_checklist(builtin_checklist_toml(), error);
    if (!parsed) throw std::logic_error("embedded checklist is invalid: " + error);
    return *parsed;
  }();
  return checklist;
}

}  // namespace torchlint
