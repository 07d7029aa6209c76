#include "registry.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "text.h"

namespace torchlint {

void RuleRegistry::add(RuleInfo info) {
  if (find(info.code) || find(info.name)) {
    throw std::logic_error("duplicate rule registration: " + info.code + " " + info.name);
  }
  auto pos = std::lower_bound(rules_.begin(), rules_.end(), info.code,
                              [](const RuleInfo& r, const std::string& code) { return r.code < code; });
  rules_.insert(pos, std::move(info));
}

const RuleInfo* RuleRegistry::find(std::string_view code_or_name) const {
  for (const auto& r : rules_) {
    if (ascii_iequals(r.code, code_or_name) || r.name == code_or_name) return &r;
  }
  return nullptr;
}

std::optional<size_t> RuleRegistry::index_of(std::string_view code) const {
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (rules_[i].code == code) return i;
  }
  return std::nullopt;
}

size_t RuleRegistry::engine_rule_index(EngineRule role) const {
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (rules_[i].engine_rule == role) return i;
  }
  throw std::logic_error("no rule in the registry is the engine's role " + std::to_string(static_cast<int>(role)) +
                         " (rules/catalog.def TORCHLINT_ENGINE_RULE)");
}

const RuleInfo& RuleRegistry::engine_rule(EngineRule role) const { return rules_[engine_rule_index(role)]; }

}  // namespace torchlint
