// The registry of C++ rules: one factory per line of rules/cpp/rules.def. Compiled with
// the rules of rules/cpp/ (linter/cpp/CMakeLists.txt), in their unity translation unit.
#include "cpp/rule.h"

namespace torchlint::cpp {

#define TORCHLINT_CPP_RULE(code, name) std::unique_ptr<Rule> make_##name(Context&);
#include "cpp/rules.def"
#undef TORCHLINT_CPP_RULE

const std::vector<CppRuleEntry>& cpp_rules() {
  static const std::vector<CppRuleEntry> rules = {
#define TORCHLINT_CPP_RULE(code, name) {code, make_##name},
#include "cpp/rules.def"
#undef TORCHLINT_CPP_RULE
  };
  return rules;
}

}  // namespace torchlint::cpp
