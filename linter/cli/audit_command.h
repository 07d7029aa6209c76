#pragma once
// `torchlint audit`: lint a repository, inspect what else it holds, and score it against
// the checklist.
#include <optional>
#include <string>

#include "check_command.h"

namespace torchlint::cli {

struct AuditRequest {
  CheckRequest check;          // paths = {repo}
  std::string format = "markdown";  // markdown, html, json, sarif
  std::optional<std::string> output;
  std::optional<std::string> checklist_file;
};

// Writes the report; returns the exit code (0 nothing failed, 1 failed items, 2 error).
int run_audit(const AuditRequest& request);

}  // namespace torchlint::cli
