#pragma once
// The one reader of expectation marks, for every test that compares findings with what a
// fixture says they must be: a `# expect: TL102, TL207` comment on a Python line, a
// `// expect: TL102` comment on a C++ line, and the `expect = [...]` list of a checkpoint
// case in fixtures/checkpoints/cases.toml. Codes are whole tokens (TL10 is not TL101),
// and a mark that does not parse is an error, never skipped: a test that skips a mark it
// cannot read passes when it should fail.
#include <compare>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#ifndef TOML_EXCEPTIONS
#define TOML_EXCEPTIONS 0
#endif
#include <toml++/toml.h>

namespace torchlint::testing {

// Where a comment starts: `#` in Python sources, `//` in C++.
enum class CommentSyntax { kHash, kSlashes };

// The comment syntax of a source file by its extension; nullopt for a file that carries
// no marks (data, prose, notebooks: their lines are not the lines torchlint reports).
std::optional<CommentSyntax> comment_syntax_of(const std::filesystem::path& file);

// `TL` and three digits, nothing else.
bool is_rule_code(std::string_view token);

struct Mark {
  std::string path;   // as given, lexically normal, with `/` separators
  uint32_t line = 0;  // 1-based
  std::string code;
  auto operator<=>(const Mark&) const = default;
};

struct Marks {
  std::set<Mark> marks;
  std::vector<std::string> errors;  // "path:line: what is wrong", one a malformed mark or unreadable file
  size_t files = 0;                 // the files read
};

// The marks in `text`, the contents of `path`.
Marks parse_marks(std::string_view text, const std::filesystem::path& path, CommentSyntax syntax);

// The marks of one file, or of every file below a directory whose comment syntax is
// `syntax`. A missing path, or a directory without such a file, is an error: a fixture
// that is not there must not pass as one without findings.
Marks read_marks(const std::filesystem::path& root, CommentSyntax syntax);

// One `[[case]]` of fixtures/checkpoints/cases.toml.
struct CheckpointCase {
  std::string file;              // relative to the generated fixture directory
  uint32_t line = 0;             // where the case starts in cases.toml
  std::set<std::string> expect;  // the codes the file must give, exactly
  toml::table table;             // the whole case, for its other checks
};

struct CheckpointCases {
  std::vector<CheckpointCase> cases;
  std::vector<std::string> errors;  // "cases.toml:line: what is wrong"
};

// Every case of a cases.toml. A case without a `file` or an `expect` array, or with an
// entry that is not a rule code, is an error (a misspelt `expects` would otherwise read as
// "expects nothing"); so is a file without cases.
CheckpointCases read_checkpoint_cases(const std::filesystem::path& cases_toml);

// Every checkpoint fixture case: `dir`/cases.toml, then each rule folder's own
// `dir`/<CODE>-<name>/cases.toml (what scripts/new_rule.sh writes), whose `file`s are
// relative to that folder and so come back prefixed with it. Folders in name order.
CheckpointCases read_checkpoint_fixture_cases(const std::filesystem::path& dir);

}  // namespace torchlint::testing
