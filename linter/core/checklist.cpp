#include "checklist.h"

#include <sstream>

#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

namespace torchlint {

const ChecklistItem* Checklist::find(std::string_view id) const {
  for (const auto& item : items) {
    if (item.id == id) return &item;
  }
  return nullptr;
}

std::optional<Checklist> parse_checklist(std::string_view toml_text, std::string& error) {
  auto parsed = toml::parse(toml_text);
  if (!parsed) {
    std::ostringstream msg;
    msg << "checklist: line " << parsed.error().source().begin.line << ": " << parsed.error().description();
    error = msg.str();
    return std::nullopt;
  }
  Checklist checklist;
  const auto* items = parsed.table()["item"].as_array();
  if (!items) {
    error = "checklist: no [[item]] entries";
    return std::nullopt;
  }
  for (const auto& node : *items) {
    const auto* t = node.as_table();
    if (!t) continue;
    ChecklistItem item;
    item.id = (*t)["id"].value_or(std::string());
    item.title = (*t)["title"].value_or(std::string());
    item.part = (*t)["part"].value_or(std::string());
    item.phase = (*t)["phase"].value_or(std::string());
    item.manual = (*t)["manual"].value_or(false);
    item.evidence = (*t)["evidence"].value_or(std::string());
    item.rationale = (*t)["rationale"].value_or(std::string());
    if (const auto* facts = (*t)["applies_if"].as_array()) {
      for (const auto& f : *facts) item.applies_if.push_back(f.value_or(std::string()));
    }
    if (const auto* facts = (*t)["shown_by"].as_array()) {
      for (const auto& f : *facts) item.shown_by.push_back(f.value_or(std::string()));
    }
    if (const auto* rules = (*t)["rules"].as_array()) {
      for (const auto& r : *rules) item.rules.push_back(r.value_or(std::string()));
    }
    if (item.id.empty()) {
      error = "checklist: an item has no id";
      return std::nullopt;
    }
    checklist.items.push_back(std::move(item));
  }
  return checklist;
}

std::string_view checklist_part_name(std::string_view part) {
  if (part == "A") return "development and training essentials";
  if (part == "B") return "model design";
  if (part == "C") return "debugging and monitoring";
  if (part == "D") return "performance";
  if (part == "E") return "production";
  if (part == "F") return "industry checklist";
  return "";
}

}  // namespace torchlint
