#include "line_hash.h"

#include <array>
#include <cstdint>
#include <unordered_map>

namespace torchlint::report {

namespace {

constexpr int kWindow = 100;  // characters hashed per line, across line ends
constexpr uint64_t kMultiplier = 37;
constexpr uint32_t kEndOfFile = 65535;

// The hash runs over UTF-16 code units (JavaScript's charCodeAt), so decode UTF-8 and
// split supplementary characters into surrogate pairs.
template <class F>
void for_each_utf16_unit(std::string_view text, F&& f) {
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    uint32_t cp = 0xFFFD;
    size_t len = 1;
    if (c < 0x80) {
      cp = c;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < text.size()) {
      cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
      len = 2;
    } else if ((c & 0xF0) == 0xE0 && i + 2 < text.size()) {
      cp = ((c & 0x0Fu) << 12) | ((static_cast<unsigned char>(text[i + 1]) & 0x3Fu) << 6) |
           (static_cast<unsigned char>(text[i + 2]) & 0x3Fu);
      len = 3;
    } else if ((c & 0xF8) == 0xF0 && i + 3 < text.size()) {
      cp = ((c & 0x07u) << 18) | ((static_cast<unsigned char>(text[i + 1]) & 0x3Fu) << 12) |
           ((static_cast<unsigned char>(text[i + 2]) & 0x3Fu) << 6) | (static_cast<unsigned char>(text[i + 3]) & 0x3Fu);
      len = 4;
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      f(0xD800 + (cp >> 10));
      f(0xDC00 + (cp & 0x3FF));
    } else {
      f(cp);
    }
    i += len;
  }
}

}  // namespace

std::vector<std::string> primary_location_line_hashes(std::string_view text) {
  std::vector<std::string> hashes;
  std::array<uint32_t, kWindow> window{};
  std::array<int64_t, kWindow> line_at{};
  line_at.fill(-1);
  uint64_t first_mod = 1;
  for (int i = 0; i < kWindow; ++i) first_mod *= kMultiplier;
  uint64_t hash = 0;  // unsigned arithmetic wraps like the reference's 64-bit Long
  size_t index = 0;
  int64_t line = 0;
  bool line_start = true;
  bool previous_cr = false;
  std::unordered_map<uint64_t, int> seen;

  auto output = [&] {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(hash));
    int n = ++seen[hash];
    auto at = static_cast<size_t>(line_at[index] - 1);
    if (hashes.size() <= at) hashes.resize(at + 1);
    hashes[at] = std::string(hex) + ":" + std::to_string(n);
    line_at[index] = -1;
  };
  auto update = [&](uint32_t current) {
    uint32_t leaving = window[index];
    window[index] = current;
    hash = kMultiplier * hash + current - first_mod * leaving;
    index = (index + 1) % kWindow;
  };
  auto process = [&](uint32_t current) {
    if (current == ' ' || current == '\t' || (previous_cr && current == '\n')) {
      previous_cr = false;
      return;
    }
    if (current == '\r') {
      current = '\n';
      previous_cr = true;
    } else {
      previous_cr = false;
    }
    if (line_at[index] != -1) output();
    if (line_start) {
      line_start = false;
      line_at[index] = ++line;
    }
    if (current == '\n') line_start = true;
    update(current);
  };
  for_each_utf16_unit(text, process);
  process(kEndOfFile);
  for (int i = 0; i < kWindow; ++i) {
    if (line_at[index] != -1) output();
    update(0);
  }
  return hashes;
}

}  // namespace torchlint::report
