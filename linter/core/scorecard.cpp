#include "scorecard.h"

#include <algorithm>

namespace torchlint {

std::string_view item_status_name(ItemStatus s) {
  switch (s) {
    case ItemStatus::kPassed:
      return "passed";
    case ItemStatus::kFailed:
      return "failed";
    case ItemStatus::kNotApplicable:
      return "not-applicable";
    case ItemStatus::kManual:
      return "manual";
    case ItemStatus::kNotChecked:
      return "not-checked";
  }
  return "not-checked";
}

namespace {

bool rule_can_run(const RuleInfo& rule, const std::set<Language>& analysers) {
  return std::any_of(rule.languages.begin(), rule.languages.end(), [&](Language l) { return analysers.contains(l); });
}

// Why none of an item's rules checked it, in terms of what the user can change.
std::string not_checked_reason(const std::vector<std::string>& disabled, const std::set<Language>& missing) {
  std::vector<std::string> parts;
  for (Language l : missing) {
    switch (l) {
      case Language::kProbe:
        parts.push_back(
            "its checks need the runtime probe (`torchlint audit --probe` on a TorchScript model, with an input spec)");
        break;
      case Language::kCheckpoint:
        parts.push_back("its checks need checkpoint files, and none were found");
        break;
      case Language::kCpp:
        parts.push_back("its checks need the C++ analyser (torchlint-cpp)");
        break;
      case Language::kPython:
        parts.push_back("its checks need Python sources");
        break;
    }
  }
  if (!disabled.empty()) {
    std::string codes;
    for (const auto& c : disabled) codes += (codes.empty() ? "" : ", ") + c;
    parts.push_back("its rules " + codes + " are disabled");
  }
  if (parts.empty()) return "no rule for it ran";
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out;
}

}  // namespace

Scorecard build_scorecard(const ScorecardInputs& in) {
  Scorecard card;
  for (const auto& item : in.checklist.items) {
    if (item.id == "TOOL") continue;  // torchlint's own health, not a practice
    ItemResult r;
    r.item = &item;
    std::vector<std::string> disabled;
    std::set<Language> missing;
    for (const auto& code : item.rules) {
      const RuleInfo* rule = in.registry.find(code);
      if (!rule) continue;
      auto index = in.registry.index_of(rule->code);
      bool enabled = index && in.enabled.contains(*index);
      bool ran = rule_can_run(*rule, in.analysers) && !(in.rules_not_run && in.rules_not_run->contains(rule->code));
      if (enabled && ran) {
        r.checked_by.push_back(rule->code);
      } else if (!enabled) {
        disabled.push_back(rule->code);
      } else {
        for (Language l : rule->languages) missing.insert(l);
      }
    }
    for (const auto& d : in.findings) {
      if (std::find(r.checked_by.begin(), r.checked_by.end(), d.code) == r.checked_by.end()) continue;
      if (d.severity < in.fail_on) {
        r.advisory.push_back(&d);
        continue;
      }
      r.worst = std::max(r.worst, d.severity);
      r.evidence.push_back(&d);
    }
    bool applies = item.applies_if.empty() || std::any_of(item.applies_if.begin(), item.applies_if.end(),
                                                          [&](const std::string& f) { return in.facts.contains(f); });
    if (!r.evidence.empty()) {
      r.status = ItemStatus::kFailed;
    } else if (item.manual) {
      std::string shown;
      for (const auto& f : item.shown_by) {
        if (in.facts.contains(f)) shown += (shown.empty() ? "" : ", ") + f;
      }
      if (!shown.empty()) {
        r.status = ItemStatus::kPassed;
        r.reason = "the code shows it: " + shown;
      } else {
        r.status = ItemStatus::kManual;
        r.reason = item.evidence.empty() ? "needs a person's judgement" : "look at: " + item.evidence;
        if (!item.shown_by.empty()) r.reason += " (torchlint found no sign of it in the code)";
      }
    } else if (!applies) {
      r.status = ItemStatus::kNotApplicable;
      std::string facts;
      for (const auto& f : item.applies_if) facts += (facts.empty() ? "" : " or ") + f;
      r.reason = "the project shows no sign of it (" + facts + ")";
    } else if (r.checked_by.empty()) {
      r.status = ItemStatus::kNotChecked;
      r.reason = not_checked_reason(disabled, missing);
    } else {
      r.status = ItemStatus::kPassed;
    }
    switch (r.status) {
      case ItemStatus::kPassed:
        ++card.passed;
        break;
      case ItemStatus::kFailed:
        ++card.failed;
        break;
      case ItemStatus::kNotApplicable:
        ++card.not_applicable;
        break;
      case ItemStatus::kManual:
        ++card.manual;
        break;
      case ItemStatus::kNotChecked:
        ++card.not_checked;
        break;
    }
    card.items.push_back(std::move(r));
  }
  size_t decided = card.passed + card.failed;
  card.score = decided ? static_cast<int>((100 * card.passed + decided / 2) / decided) : 0;
  return card;
}

}  // namespace torchlint
