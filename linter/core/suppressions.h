#pragma once
// Suppression comments, in the forms users know from Ruff and flake8 plus torchlint's own:
//   x = f()  # noqa: TL102, TL201      one line (its statement), listed rules
//   x = f()  # noqa                    one line, every rule
//   # torchlint: ignore[TL102] -- why  own line: the next statement; trailing: this one
//   # torchlint: noqa                  the whole file (optionally ": TL102, ...")
// Front-ends find the comments; this file parses their text and applies them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnostic.h"
#include "registry.h"

namespace torchlint {

struct Suppression {
  uint32_t line = 0;          // the line it applies to
  uint32_t comment_line = 0;  // where the comment is
  uint32_t column = 1;
  bool file_level = false;
  std::vector<std::string> codes;  // as written; empty means every rule
  std::vector<bool> used;          // per code (or one entry for a blanket suppression)
};

// Parses one comment's text (starting with '#'). `own_line` says the comment is alone on
// its line, which makes `torchlint: ignore[...]` apply to the next line.
std::optional<Suppression> parse_suppression_comment(std::string_view comment, uint32_t line, uint32_t column,
                                                     bool own_line);

// Drops suppressed diagnostics (marking the suppressions used) and returns the rest.
std::vector<Diagnostic> apply_suppressions(std::vector<Diagnostic> diagnostics, std::vector<Suppression>& suppressions,
                                           const RuleRegistry& registry);

}  // namespace torchlint
