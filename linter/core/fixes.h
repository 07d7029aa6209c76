#pragma once
// Applying rules' fixes to a file and showing them as a unified diff.
#include <string>
#include <string_view>
#include <vector>

#include "diagnostic.h"

namespace torchlint {

struct FixResult {
  std::string text;                             // the file with every applicable fix applied
  size_t applied = 0;                           // fixes applied
  size_t skipped = 0;                           // fixes left out because they overlap one applied before
  std::vector<const Diagnostic*> applied_from;  // the findings whose fixes were applied
};

// Applies the fixes of `diagnostics` (all for the file whose text is `original`) in source
// order; a fix whose edits overlap an earlier fix's is skipped (a later run can apply it).
FixResult apply_fixes(std::string_view original, const std::vector<const Diagnostic*>& diagnostics);

// A unified diff (3 lines of context) between two versions of a file, as `diff -u` prints it.
std::string unified_diff(const std::string& path, std::string_view before, std::string_view after);

}  // namespace torchlint
