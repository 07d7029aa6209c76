#include "report.h"

namespace torchlint::report {

const std::vector<Format>& formats() {
  static const std::vector<Format> all = {
      {"full", write_full, false},       {"concise", write_concise, false},      {"json", write_json, true},
      {"jsonl", write_json_lines, true}, {"json-lines", write_json_lines, true}, {"sarif", write_sarif, true},
      {"github", write_github, true},    {"gitlab", write_gitlab, true},
  };
  return all;
}

const Format* find_format(std::string_view name) {
  for (const auto& f : formats()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string location_prefix(const Diagnostic& d) {
  if (d.cell) {
    return d.path + ":cell " + std::to_string(d.cell) + ":" + std::to_string(d.cell_start.line) + ":" +
           std::to_string(d.cell_start.column) + ":";
  }
  return d.path + ":" + std::to_string(d.start.line) + ":" + std::to_string(d.start.column) + ":";
}

std::string paint(bool color, const char* code, std::string_view text) {
  if (!color) return std::string(text);
  return std::string("\x1b[") + code + "m" + std::string(text) + "\x1b[0m";
}

}  // namespace torchlint::report
