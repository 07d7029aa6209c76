#pragma once
// clang-tidy's suppression comments, read from a C++ file's text (no Clang needed):
//   f();  // NOLINT                      this line, every rule
//   f();  // NOLINT(TL102, TL206)        this line, listed rules (codes or kebab names)
//   // NOLINTNEXTLINE(TL102)             the next line
//   // NOLINTBEGIN(TL102) ... // NOLINTEND(TL102)   every line in between
// Check names of other tools (`NOLINT(bugprone-foo)`) suppress nothing of torchlint's.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"

namespace torchlint::cpp {

struct NolintRange {
  uint32_t first_line = 0;  // inclusive, 1-based
  uint32_t last_line = 0;   // inclusive
  uint32_t comment_line = 0;
  uint32_t column = 1;
  std::vector<std::string> codes;  // empty: every rule
};

struct NolintScan {
  std::vector<NolintRange> ranges;
  // NOLINTBEGIN without NOLINTEND (or the reverse): reported like clang-tidy does.
  std::vector<std::pair<uint32_t, std::string>> problems;  // (line, message)
};

NolintScan scan_nolint(std::string_view text);

// Whether `d` (positions resolved) is suppressed by one of `ranges`.
bool is_suppressed(const Diagnostic& d, const std::vector<NolintRange>& ranges);

}  // namespace torchlint::cpp
