#include "rule_info.h"

namespace torchlint {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
  }
  return "warning";
}

std::string RuleInfo::summary() const {
  // Skip the title line and blank lines; the summary is the first paragraph.
  size_t pos = 0;
  std::string paragraph;
  while (pos < doc.size()) {
    size_t eol = doc.find('\n', pos);
    if (eol == std::string_view::npos) eol = doc.size();
    std::string_view line = doc.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.starts_with("#")) continue;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
      if (!paragraph.empty()) break;
      continue;
    }
    if (!paragraph.empty()) paragraph += ' ';
    paragraph += line;
  }
  while (!paragraph.empty() && (paragraph.back() == ' ' || paragraph.back() == '\r')) paragraph.pop_back();
  return paragraph;
}

std::string_view project_url() { return TORCHLINT_PROJECT_URL; }

std::string rule_doc_url(std::string_view rule_name) {
  std::string_view base = project_url();
  if (base.empty() || rule_name.empty()) return {};
  std::string url(base);
  if (url.back() != '/') url += '/';
  url += "rules/";
  url += rule_name;
  return url;
}

}  // namespace torchlint
