#pragma once
// Which words of a fixed list a text mentions as whole identifiers. Rules whose findings
// all hang on a few API names (`Linear`, `DataLoader`) declare them, and the front-end
// skips those rules on files that never mention one: one pass over the text instead of
// the rules' work on every event of the file. A mention is a maximal run of identifier
// characters ([A-Za-z0-9_] and any non-ASCII byte) equal to the word, anywhere: in code,
// strings and comments alike, so the test errs towards running the rule.
#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/name_table.h"

namespace torchlint {

class WordScanner {
 public:
  // `words` are views of storage that outlives the scanner (string literals).
  explicit WordScanner(std::vector<std::string_view> words) : words_(std::move(words)), index_(words_.begin(), words_.end(), [](std::string_view w) { return w; }) {
    for (std::string_view w : words_) {
      if (w.empty() || !is_identifier_char(static_cast<unsigned char>(w[0]))) {
        throw std::logic_error("not an identifier: '" + std::string(w) + "'");
      }
      for (unsigned char c : w) {
        if (!is_identifier_char(c)) throw std::logic_error("not an identifier: '" + std::string(w) + "'");
      }
      first_char_[static_cast<unsigned char>(w[0])] = true;
      min_size_ = std::min(min_size_, w.size());
      max_size_ = std::max(max_size_, w.size());
    }
  }

  size_t size() const { return words_.size(); }
  // mentioned[i]: whether the text mentions words[i].
  std::vector<bool> scan(std::string_view text) const {
    std::vector<bool> mentioned(words_.size(), false);
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    for (size_t i = 0; i < n;) {
      if (!is_identifier_char(p[i])) {
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < n && is_identifier_char(p[j])) ++j;
      size_t size = j - i;
      if (first_char_[p[i]] && size >= min_size_ && size <= max_size_) {
        uint32_t found = index_.find(text.substr(i, size));
        if (found != detail::NameIndex::kAbsent) mentioned[found] = true;
      }
      i = j;
    }
    return mentioned;
  }

 private:
  static bool is_identifier_char(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
  }

  std::vector<std::string_view> words_;
  detail::NameIndex index_;  // word -> its first position in words_
  std::array<bool, 256> first_char_{};
  size_t min_size_ = SIZE_MAX, max_size_ = 0;
};

}  // namespace torchlint
