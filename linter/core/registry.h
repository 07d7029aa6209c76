#pragma once
// The rules known to this build, from every front-end, in code order. The registry knows
// rules only as RuleInfo: which code runs them is the front-ends' business.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rule_info.h"

namespace torchlint {

class RuleRegistry {
 public:
  void add(RuleInfo info);
  const std::vector<RuleInfo>& rules() const { return rules_; }
  // By code ("TL304") or kebab name ("unsafe-torch-load"); case-insensitive codes.
  const RuleInfo* find(std::string_view code_or_name) const;
  std::optional<size_t> index_of(std::string_view code) const;
  // The rule the catalog gives to one of the engine's own findings; a registry without it
  // (a catalog that lost the entry) is a programming error and throws logic_error.
  const RuleInfo& engine_rule(EngineRule role) const;
  size_t engine_rule_index(EngineRule role) const;

 private:
  std::vector<RuleInfo> rules_;
};

}  // namespace torchlint
