#pragma once
// The checklist scorecard: every checklist item with a status and its evidence, built from
// the findings of all analysers and the facts the project pass collected.
#include <set>
#include <string>
#include <vector>

#include "checklist.h"
#include "diagnostic.h"
#include "registry.h"
#include "rule_selection.h"

namespace torchlint {

enum class ItemStatus { kPassed, kFailed, kNotApplicable, kManual, kNotChecked };
std::string_view item_status_name(ItemStatus s);  // "passed", "failed", ...

struct ItemResult {
  const ChecklistItem* item = nullptr;
  ItemStatus status = ItemStatus::kNotChecked;
  std::vector<const Diagnostic*> evidence;  // findings of the item's rules that fail it, in output order
  std::vector<const Diagnostic*> advisory;  // its findings below the failing severity (`--fail-on`)
  std::vector<std::string> checked_by;      // rules that ran for it
  std::string reason;                       // why not applicable / not checked / manual
  Severity worst = Severity::kInfo;
};

struct Scorecard {
  std::vector<ItemResult> items;  // checklist order
  size_t passed = 0, failed = 0, not_applicable = 0, manual = 0, not_checked = 0;
  int score = 0;  // passed items per 100 decided (passed + failed) items
};

struct ScorecardInputs {
  const Checklist& checklist;
  const RuleRegistry& registry;
  const RuleSet& enabled;
  const std::vector<Diagnostic>& findings;
  const std::set<std::string>& facts;   // project facts ("trains", "serves-http", ...)
  const std::set<Language>& analysers;  // which analysers ran
  // Rules whose analyser ran but which could not check anything this time (a probe check
  // skipped on a CPU-only machine): they do not count as having checked an item.
  const std::set<std::string>* rules_not_run = nullptr;
  // Findings at or above this severity fail an item; those below are advice shown with a
  // passed item (`audit --fail-on`; by default info findings never fail an item).
  Severity fail_on = Severity::kWarning;
};

Scorecard build_scorecard(const ScorecardInputs& in);

}  // namespace torchlint
