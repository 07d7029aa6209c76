#pragma once
// The best-practice checklist (checklists/pytorch-best-practices.toml): items and the rules
// that verify them. Outputs use it for SARIF taxonomies and audit scorecards.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace torchlint {

struct ChecklistItem {
  std::string id;  // "A5"
  std::string title;
  std::string part;   // "A"
  std::string phase;  // development, training, evaluation, production
  std::vector<std::string> rules;
  bool manual = false;
  std::string evidence;
  std::string rationale;
  // Project facts of which one must hold for the item to apply ("serves-http");
  // empty: always applies.
  std::vector<std::string> applies_if;
  // For items a person judges: project facts that show the practice in the code (a
  // `random_split`, a CI workflow file). One present passes the item with that as its
  // evidence; none present leaves it to a person.
  std::vector<std::string> shown_by;
};

// The checklist's parts by letter ("A" -> "development and training essentials").
std::string_view checklist_part_name(std::string_view part);

struct Checklist {
  std::vector<ChecklistItem> items;
  const ChecklistItem* find(std::string_view id) const;
};

// Parses the TOML form; nullopt with `error` set on malformed input.
std::optional<Checklist> parse_checklist(std::string_view toml_text, std::string& error);

}  // namespace torchlint
