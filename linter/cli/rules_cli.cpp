// `torchlint rules` and `torchlint rule CODE`: the catalog, as a list and one doc at a time.
#include <iostream>
#include <nlohmann/json.hpp>

#include "check_command.h"
#include "commands.h"
#include "core/exit_code.h"
#include "core/rule_selection.h"

namespace torchlint::cli {

namespace {

int list_rules(const std::string& format) {
  const auto& rules = registry().rules();
  if (format == "json") {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& r : rules) {
      out.push_back({{"code", r.code},
                     {"name", r.name},
                     {"severity", severity_name(r.severity)},
                     {"default", r.default_enabled},
                     {"fixable", r.fixable},
                     {"checklist", r.checklist_items},
                     {"summary", r.summary()}});
    }
    std::cout << out.dump(2) << '\n';
    return kExitClean;
  }
  for (const auto& r : rules) {
    std::cout << r.code << "  " << r.name << std::string(r.name.size() < 30 ? 30 - r.name.size() : 1, ' ')
              << (r.fixable ? "[*] " : "    ") << (r.default_enabled ? "" : "(opt-in) ") << r.summary() << '\n';
  }
  return kExitClean;
}

int show_rule(const std::string& code) {
  const RuleInfo* rule = registry().find(code);
  if (!rule) {
    std::cerr << "torchlint: error: unknown rule `" << code << "`" << rule_suggestion(registry(), code) << '\n';
    return kExitError;
  }
  std::cout << rule->doc;
  if (!rule->doc.empty() && rule->doc.back() != '\n') std::cout << '\n';
  return kExitClean;
}

}  // namespace

RulesCommand::RulesCommand(CLI::App& app) {
  list_ = app.add_subcommand("rules", "List every rule");
  list_->add_option("--output-format", format_, "text or json")->check(CLI::IsMember({"text", "json"}));
  show_ = app.add_subcommand("rule", "Show a rule's documentation");
  show_->add_option("code", code_, "Rule code or name, e.g. TL102")->required();
}

int RulesCommand::run() const { return list_->parsed() ? list_rules(format_) : show_rule(code_); }

}  // namespace torchlint::cli
