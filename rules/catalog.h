#pragma once
// The rule catalog (rules/catalog.def) as data: every rule's RuleInfo with its doc, and
// the checklist the rules serve. A pure-data library: linking it pulls in no front-end.
#include <string_view>
#include <vector>

#include "core/checklist.h"
#include "core/registry.h"
#include "core/rule_info.h"

namespace torchlint {

// Every rule of the catalog, in code order, docs attached.
const std::vector<RuleInfo>& rule_catalog();
// The catalog's entry for `code`; a code missing from the catalog is a programming error
// (an implementation registered against a code nobody declared) and throws logic_error.
const RuleInfo& catalog_entry(std::string_view code);
// Registers every catalog entry in `registry`.
void register_catalog(RuleRegistry& registry);
// The checklist shipped with this build (checklists/pytorch-best-practices.toml, embedded).
const Checklist& builtin_checklist();

}  // namespace torchlint
