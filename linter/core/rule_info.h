#pragma once
// What every consumer (selection, outputs, docs, checklists) needs to know about a rule,
// independent of the front-end that implements it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace torchlint {

enum class Severity { kInfo, kWarning, kError };
std::string_view severity_name(Severity s);

enum class Language { kPython, kCpp, kCheckpoint, kProbe };

// The findings the engine reports itself rather than a rule: it knows them by role, and the
// catalog says which code and policy each role has, so no code is spelled in the engine.
enum class EngineRule : uint8_t {
  kNone,
  kParseError,         // a file that could not be read or parsed
  kUnusedSuppression,  // a `noqa` that suppressed nothing
};

struct RuleInfo {
  std::string code;  // stable, never reused: "TL304"
  std::string name;  // kebab-case: "unsafe-torch-load"
  Severity severity = Severity::kWarning;
  bool default_enabled = true;
  std::vector<std::string> checklist_items;  // ids in checklists/pytorch-best-practices.toml
  std::vector<Language> languages;
  bool fixable = false;
  // Policy for code scanning: GitHub's security-severity score for rules about running
  // untrusted code (empty for the others), and SARIF's precision.
  std::string_view security_severity;
  std::string_view precision = "high";
  // The rule's Markdown doc (first line "# CODE: name", then the one-sentence summary).
  std::string_view doc;
  EngineRule engine_rule = EngineRule::kNone;

  // The doc's first sentence: the summary used by `rules`, statistics and SARIF.
  std::string summary() const;
};

// The project's home page (CMake cache variable TORCHLINT_PROJECT_URL); empty when the
// build sets none. SARIF's informationUri and the editor's rule links both come from here,
// so a build for another home page changes every link at once.
std::string_view project_url();
// A rule's doc page under the home page (`<url>rules/<name>`); empty without a home page.
std::string rule_doc_url(std::string_view rule_name);

}  // namespace torchlint
