#pragma once
#include <string_view>

namespace torchlint {

// Shell-style matching: `*` and `?` stop at '/', `**` crosses directories, `[a-z]` and
// `[!x]` are classes. The whole text must match.
bool glob_match(std::string_view pattern, std::string_view text);

// How `exclude` and `per-file-ignores` patterns apply to a path relative to the
// configuration's directory: a pattern without '/' matches any single path component
// (like .gitignore), a pattern with '/' matches the whole relative path.
bool path_matches(std::string_view pattern, std::string_view relative_path);

}  // namespace torchlint
