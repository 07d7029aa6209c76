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

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/name_table.h"

namespace torchlint {

class WordScanner {
 public:
  // `words` are views of storage that outlives the scanner (string literals).
  explicit WordScanner(std::vector<std::string_view> words)
      : words_(std::move(words)), index_(words_.begin(), words_.end(), [](std::string_view w) { return w; }) {
    for (std::string_view w : words_) {
      if (w.empty() ||
          std::any_of(w.begin(), w.end(), [](char c) { return !kIdentifier[static_cast<unsigned char>(c)]; })) {
        throw std::logic_error("not an identifier: '" + std::string(w) + "'");
      }
      sizes_by_first_[static_cast<unsigned char>(w[0])] |= size_bit(w.size());
    }
  }

  size_t size() const { return words_.size(); }

  // mentioned[i]: whether the text mentions words[i].
  std::vector<bool> scan(std::string_view text) const {
    std::vector<bool> mentioned(words_.size(), false);
    const auto* base = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    auto name = [&](size_t begin, size_t end) {
      // Most names share neither first letter and size with a word: no hash for them.
      if (!(sizes_by_first_[base[begin]] & size_bit(end - begin))) return;
      uint32_t found = index_.find(std::string_view(text.data() + begin, end - begin));
      if (found != detail::NameIndex::kAbsent) mentioned[found] = true;
    };
    size_t i = 0;
    size_t open = SIZE_MAX;  // start of a name still running at i
#if defined(__SSE2__)
    // 64 bytes at a time: a bit per byte says "identifier character"; names are the runs
    // of set bits, found with bit operations instead of a branch per byte.
    uint64_t carry = 0;  // the last byte of the previous block was an identifier character
    for (; i + 64 <= n; i += 64) {
      uint64_t m = identifier_mask(base + i);
      uint64_t starts = m & ~((m << 1) | carry);
      uint64_t ends = m & ~(m >> 1) & ~(uint64_t{1} << 63);  // last bit of a run inside the block
      carry = m >> 63;
      if (open != SIZE_MAX && !(m & 1)) {
        name(open, i);
        open = SIZE_MAX;
      }
      if (open != SIZE_MAX && ends) {
        name(open, i + static_cast<size_t>(__builtin_ctzll(ends)) + 1);
        ends &= ends - 1;
        open = SIZE_MAX;
      }
      while (starts) {
        size_t s = static_cast<size_t>(__builtin_ctzll(starts));
        starts &= starts - 1;
        if (!ends) {
          open = i + s;  // runs on into the next block
          break;
        }
        name(i + s, i + static_cast<size_t>(__builtin_ctzll(ends)) + 1);
        ends &= ends - 1;
      }
    }
#endif
    for (; i < n; ++i) {
      bool ident = kIdentifier[base[i]];
      if (ident && open == SIZE_MAX) open = i;
      if (!ident && open != SIZE_MAX) {
        name(open, i);
        open = SIZE_MAX;
      }
    }
    if (open != SIZE_MAX) name(open, n);
    return mentioned;
  }

 private:
#if defined(__SSE2__)
  // Bit j set when p[j] (0 <= j < 64) is an identifier character: a letter, a digit, '_' or
  // a byte of a non-ASCII character.
  static uint64_t identifier_mask(const unsigned char* p) {
    const __m128i lower_a = _mm_set1_epi8('a' - 1), lower_z = _mm_set1_epi8('z' + 1);
    const __m128i zero = _mm_set1_epi8('0' - 1), nine = _mm_set1_epi8('9' + 1);
    const __m128i underscore = _mm_set1_epi8('_'), case_bit = _mm_set1_epi8(0x20);
    uint64_t mask = 0;
    for (int k = 0; k < 4; ++k) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
      __m128i folded = _mm_or_si128(v, case_bit);  // 'A'-'Z' to 'a'-'z'
      __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(folded, lower_a), _mm_cmplt_epi8(folded, lower_z));
      __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, zero), _mm_cmplt_epi8(v, nine));
      __m128i ident = _mm_or_si128(_mm_or_si128(letter, digit), _mm_cmpeq_epi8(v, underscore));
      ident = _mm_or_si128(ident, _mm_cmplt_epi8(v, _mm_setzero_si128()));  // bytes >= 0x80
      mask |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(ident))) << (16 * k);
    }
    return mask;
  }
#endif
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
  detail::NameIndex index_;                     // word -> its first position in words_
  std::array<uint32_t, 256> sizes_by_first_{};  // by first byte: the sizes of the words it starts
};

}  // namespace torchlint
