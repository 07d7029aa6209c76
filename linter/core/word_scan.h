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
  explicit WordScanner(std::vector<std::string_view> words)
      : words_(std::move(words)), index_(words_.begin(), words_.end(), [](std::string_view w) { return w; }) {
    for (std::string_view w : words_) {
      if (w.empty() || std::any_of(w.begin(), w.end(), [](char c) { return !kIdentifier[static_cast<unsigned char>(c)]; })) {
        throw std::logic_error("not an identifier: '" + std::string(w) + "'");
      }
      sizes_by_first_[static_cast<unsigned char>(w[0])] |= size_bit(w.size());
    }
  }

  size_t size() const { return words_.size(); }

  // mentioned[i]: whether the text mentions words[i].
  std::vector<bool> scan(std::string_view text) const {
    std::vector<bool> mentioned(words_.size(), false);
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const auto* end = p + text.size();
    while (p < end) {
      if (!kIdentifier[*p]) {
        ++p;
        continue;
      }
      const unsigned char* q = p + 1;
      while (q < end && kIdentifier[*q]) ++q;
      // Most names share neither first letter and size with a word: no hash for them.
      if (sizes_by_first_[*p] & size_bit(static_cast<size_t>(q - p))) {
        uint32_t found = index_.find(std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(q - p)));
        if (found != detail::NameIndex::kAbsent) mentioned[found] = true;
      }
      p = q;
    }
    return mentioned;
  }

 private:
  static constexpr std::array<bool, 256> kIdentifier = [] {
    std::array<bool, 256> t{};
    for (int c = 0; c < 256; ++c) {
      t[static_cast<size_t>(c)] =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
    }
    return t;
  }();
  // Sizes of 31 and more share the last bit.
  static uint32_t size_bit(size_t size) { return uint32_t{1} << std::min<size_t>(size, 31); }

  std::vector<std::string_view> words_;
  detail::NameIndex index_;  // word -> its first position in words_
  std::array<uint32_t, 256> sizes_by_first_{};  // by first byte: the sizes of the words it starts
};

}  // namespace torchlint
