#include "all_rules.h"

#include <stdexcept>

#include "registry/checkpoint_rules.h"
#include "rule_docs.h"

namespace torchlint {

// One line per rule in rules/rules.def.
#define TORCHLINT_RULE(factory) python::RuleEntry factory();
#include "rules.def"
#undef TORCHLINT_RULE

const std::vector<python::RuleEntry>& python_rules() {
  static const std::vector<python::RuleEntry> rules = [] {
    std::vector<python::RuleEntry> all = {
#define TORCHLINT_RULE(factory) factory(),
#include "rules.def"
#undef TORCHLINT_RULE
    };
    for (auto& r : all) r.info.doc = rule_doc(r.info.code);
    return all;
  }();
  return rules;
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

void register_all_rules(RuleRegistry& registry) {
  for (const auto& r : python_rules()) registry.add(r.info);
  register_checkpoint_rules(registry);
}

}  // namespace torchlint
