#pragma once
// Ruff's selection semantics: layers (config file, then command line) each may reset the
// set with `select`, then add `extend-select` and remove `ignore`; inside one layer the
// most specific selector wins (a code beats a prefix, a longer prefix a shorter one,
// ignore wins a tie). Selectors are codes, code prefixes ("TL1"), kebab names or "ALL".
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "registry.h"

namespace torchlint {

struct SelectionLayer {
  std::optional<std::vector<std::string>> select;
  std::vector<std::string> extend_select;
  std::vector<std::string> ignore;
};

class RuleSet {
 public:
  RuleSet() = default;
  explicit RuleSet(size_t n) : enabled_(n, false) {}
  bool contains(size_t index) const { return index < enabled_.size() && enabled_[index]; }
  void set(size_t index, bool on) { enabled_[index] = on; }
  size_t size() const { return enabled_.size(); }
  bool any() const;

 private:
  std::vector<bool> enabled_;
};

// Specificity of `selector` for `rule`, or nullopt when it does not match it.
// Returns an error message through `error` for selectors that match no rule at all.
std::optional<int> selector_specificity(const std::string& selector, const RuleInfo& rule);
bool selector_is_known(const RuleRegistry& registry, const std::string& selector);
// What follows "unknown rule `X`": "; did you mean `TL304` (unsafe-torch-load)?" with the
// closest code or name when one is close, else a pointer to `torchlint rules`.
std::string rule_suggestion(const RuleRegistry& registry, std::string_view word);
// "unknown rule selector `TL3O4`; did you mean `TL304` (unsafe-torch-load)?"
std::string unknown_selector_message(const RuleRegistry& registry, const std::string& selector);

// Applies the layers in order on top of the default set (rules on by default).
// Unknown selectors are reported in `unknown`.
RuleSet resolve_selection(const RuleRegistry& registry, const std::vector<SelectionLayer>& layers,
                          std::vector<std::string>& unknown);

// Command-line selector lists: "TL1,TL304" and repeated flags both work; blanks are trimmed.
std::vector<std::string> split_selector_list(const std::vector<std::string>& raw);

// Removes the rules matched by `selectors` from a copy of `set`.
RuleSet without(const RuleRegistry& registry, RuleSet set, const std::vector<std::string>& selectors);

}  // namespace torchlint
