#include "rule_selection.h"

#include <algorithm>

#include "text.h"

namespace torchlint {

bool RuleSet::any() const { return std::find(enabled_.begin(), enabled_.end(), true) != enabled_.end(); }

std::optional<int> selector_specificity(const std::string& selector, const RuleInfo& rule) {
  if (selector == "ALL") return 0;
  if (selector == rule.name) return 1000;
  std::string sel = ascii_upper(selector);
  if (sel == rule.code) return 1000;
  if (sel.size() >= 2 && rule.code.starts_with(sel)) return static_cast<int>(sel.size());
  return std::nullopt;
}

bool selector_is_known(const RuleRegistry& registry, const std::string& selector) {
  return std::any_of(registry.rules().begin(), registry.rules().end(),
                     [&](const RuleInfo& r) { return selector_specificity(selector, r).has_value(); });
}

std::string rule_suggestion(const RuleRegistry& registry, std::string_view word) {
  std::vector<std::string> candidates = {"ALL"};
  for (const RuleInfo& r : registry.rules()) {
    candidates.push_back(r.code);
    candidates.push_back(r.name);
  }
  std::string best = closest_match(word, candidates);
  if (best.empty()) return " (see `torchlint rules`)";
  const RuleInfo* rule = registry.find(best);
  return "; did you mean `" + best + "`" + (rule && best == rule->code ? " (" + rule->name + ")" : "") + "?";
}

std::string unknown_selector_message(const RuleRegistry& registry, const std::string& selector) {
  return "unknown rule selector `" + selector + "`" + rule_suggestion(registry, selector);
}

RuleSet resolve_selection(const RuleRegistry& registry, const std::vector<SelectionLayer>& layers,
                          std::vector<std::string>& unknown) {
  const auto& rules = registry.rules();
  RuleSet set(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) set.set(i, rules[i].default_enabled);

  auto check_known = [&](const std::vector<std::string>& selectors) {
    for (const auto& s : selectors) {
      if (!selector_is_known(registry, s)) unknown.push_back(s);
    }
  };
  for (const auto& layer : layers) {
    if (layer.select) check_known(*layer.select);
    check_known(layer.extend_select);
    check_known(layer.ignore);
    for (size_t i = 0; i < rules.size(); ++i) {
      // Best (most specific) verdict of this layer; a layer that does not mention the
      // rule leaves it as the layer below decided, unless it resets with `select`.
      int best = -1;
      std::optional<bool> verdict;
      auto consider = [&](const std::vector<std::string>& selectors, bool on) {
        for (const auto& s : selectors) {
          auto spec = selector_specificity(s, rules[i]);
          if (!spec) continue;
          if (*spec > best || (*spec == best && !on)) {
            best = *spec;
            verdict = on;
          }
        }
      };
      if (layer.select) consider(*layer.select, true);
      consider(layer.extend_select, true);
      consider(layer.ignore, false);
      if (verdict) {
        set.set(i, *verdict);
      } else if (layer.select) {
        set.set(i, false);
      }
    }
  }
  return set;
}

RuleSet without(const RuleRegistry& registry, RuleSet set, const std::vector<std::string>& selectors) {
  const auto& rules = registry.rules();
  for (size_t i = 0; i < rules.size(); ++i) {
    for (const auto& s : selectors) {
      if (selector_specificity(s, rules[i])) set.set(i, false);
    }
  }
  return set;
}

std::vector<std::string> split_selector_list(const std::vector<std::string>& raw) {
  std::vector<std::string> out;
  for (const auto& item : raw) {
    size_t start = 0;
    while (start <= item.size()) {
      size_t comma = item.find(',', start);
      if (comma == std::string::npos) comma = item.size();
      std::string s = item.substr(start, comma - start);
      s.erase(0, s.find_first_not_of(" \t"));
      s.erase(s.find_last_not_of(" \t") + 1);
      if (!s.empty()) out.push_back(s);
      start = comma + 1;
    }
  }
  return out;
}

}  // namespace torchlint
