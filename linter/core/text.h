#pragma once
// Small text helpers shared by every front-end (one definition each).
#include <string>
#include <string_view>

namespace torchlint {

// ASCII lower case (identifiers, rule codes, option values); other bytes unchanged.
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The last component of a dotted name: `optimizer` in `self.optimizer`.
inline std::string_view last_dotted_part(std::string_view dotted) {
  size_t dot = dotted.rfind('.');
  return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

}  // namespace torchlint
