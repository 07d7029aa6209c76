#pragma once
// Every rule this build has, for every front-end.
#include <vector>

#include "catalog.h"
#include "core/registry.h"
#include "python/rule.h"

namespace torchlint {

// Registers every rule of the catalog (with its doc) in `registry`.
void register_all_rules(RuleRegistry& registry);

// The Python rules with their factories.
const std::vector<python::RuleEntry>& python_rules();

}  // namespace torchlint
