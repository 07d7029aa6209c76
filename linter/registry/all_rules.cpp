#include "all_rules.h"

#include "catalog.h"
#include "registry/checkpoint_rules.h"

namespace torchlint {

// One line per rule in rules/rules.def.
#define TORCHLINT_RULE(factory) python::RuleEntry factory();
#include "rules.def"
#undef TORCHLINT_RULE

const std::vector<python::RuleEntry>& python_rules() {
  static const std::vector<python::RuleEntry> rules = [] {
    return std::vector<python::RuleEntry>{
#define TORCHLINT_RULE(factory) factory(),
#include "rules.def"
#undef TORCHLINT_RULE
    };
  }();
  return rules;
}

void register_all_rules(RuleRegistry& registry) { register_catalog(registry); }

}  // namespace torchlint
