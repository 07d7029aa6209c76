#include "scorecard.h"

#include <algorithm>

namespace torchlint {

std::string_view item_status_name(ItemStatus s) {
  switch (s) {
    case ItemStatus::kPassed: return "passed";
    case ItemStatus::kFailed: return "failed";
    case ItemStatus::kNotApplicable: return "not-applicable";
    case ItemStatus::kManual: return "manual";
    case ItemStatus::kNotChecked: return "not-checked";
  }
  return "not-checked";
}

namespace {

bool rule_can_run(const RuleInfo& rule, const std::set<Language>& analysers) {
  return std::any_of(rule.languages.begin(), rule.languages.end(),
                     [&](Language l) { return analysers.contains(l); });
}

}  // namespace

Scorecard build_scorecard(const ScorecardInputs& in) {
  Scorecard card;
  for (const auto& item : in.checklist.items) {
    if (item.id == "TOOL") continue;  // torchlint's own health, not a practice
    ItemResult r;
    r.item = &item;
    for (const auto& code : item.rules) {
      const RuleInfo* rule = in.registry.find(code);
      if (!rule) continue;
      auto index = in.registry.index_of(rule->code);
      if (index && in.enabled.contains(*index) && rule_can_run(*rule, in.analysers)) r.checked_by.push_back(rule->code);
    }
    for (const auto& d : in.findings) {
      if (std::find(r.checked_by.begin(), r.checked_by.end(), d.code) == r.checked_by.end()) continue;
      if (r.evidence.empty() || d.severity > r.worst) r.worst = std::max(r.worst, d.severity);
      r.evidence.push_back(&d);
    }
    bool applies = item.applies_if.empty() ||
                   std::any_of(item.applies_if.begin(), item.applies_if.end(),
                               [&](const std::string& f) { return in.facts.contains(f); });
    if (!r.evidence.empty()) {
      r.status = ItemStatus::kFailed;
    } else if (item.manual) {
      r.status = ItemStatus::kManual;
      r.reason = item.evidence.empty() ? "needs a person's judgement" : "look at: " + item.evidence;
    } else if (!applies) {
      r.status = ItemStatus::kNotApplicable;
      std::string facts;
      for (const auto& f : item.applies_if) facts += (facts.empty() ? "" : " or ") + f;
      r.reason = "the project shows no sign of it (" + facts + ")";
    } else if (r.checked_by.empty()) {
      r.status = ItemStatus::kNotChecked;
      r.reason = "no rule for it ran (disabled, or its analyser did not run)";
    } else {
      r.status = ItemStatus::kPassed;
    }
    switch (r.status) {
      case ItemStatus::kPassed: ++card.passed; break;
      case ItemStatus::kFailed: ++card.failed; break;
      case ItemStatus::kNotApplicable: ++card.not_applicable; break;
      case ItemStatus::kManual: ++card.manual; break;
      case ItemStatus::kNotChecked: ++card.not_checked; break;
    }
    card.items.push_back(std::move(r));
  }
  size_t decided = card.passed + card.failed;
  card.score = decided ? static_cast<int>((100 * card.passed + decided / 2) / decided) : 0;
  return card;
}

}  // namespace torchlint
