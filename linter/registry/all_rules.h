#pragma once
// Every rule this build has, for every front-end.
#include <vector>

#include "core/checklist.h"
#include "core/registry.h"
#include "python/rule.h"

namespace torchlint {

// Registers every rule's RuleInfo (with its doc) in `registry`.
void register_all_rules(RuleRegistry& registry);
// The checklist shipped with this build (checklists/pytorch-best-practices.toml, embedded).
const Checklist& builtin_checklist();

// The Python rules with their factories.
const std::vector<python::RuleEntry>& python_rules();

}  // namespace torchlint
