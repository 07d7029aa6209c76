#pragma once
// How the checks make findings: a rule code (rules/probe/probe_rules.h) and a message; the
// rule's name and severity are the catalog's (rules/catalog.def), never the probe's own.
#include <string>
#include <string_view>

#include "catalog.h"
#include "probe.h"
#include "probe/probe_rules.h"

namespace torchlint::probe {

using namespace torchlint::probe_rules;

inline Finding make_finding(std::string_view code, std::string_view check, std::string message) {
  const RuleInfo& rule = catalog_entry(code);
  return Finding{rule.code, rule.name, rule.severity, std::string(check), std::move(message)};
}

}  // namespace torchlint::probe
