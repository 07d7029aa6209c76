#pragma once
// Little helpers for reading untrusted binary data: bounds-checked views, little- and
// big-endian loads, and overflow-checked arithmetic. Every reader in this directory goes
// through them so that no length from a file is trusted before it is checked against
// the bytes that are really there.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace torchlint::ckpt {

// A view of bytes (the file is mapped, so views never own).
using Bytes = std::string_view;

inline uint8_t u8_at(Bytes b, size_t pos) { return static_cast<uint8_t>(b[pos]); }

inline uint16_t le16(const char* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;  // x86-64 and aarch64 Linux are little-endian; torchlint builds only there
}
inline uint32_t le32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t le64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t be64(const char* p) { return __builtin_bswap64(le64(p)); }

// a + b and a * b, or nullopt on overflow.
inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// True when [offset, offset + length) lies inside a buffer of `size` bytes.
inline bool range_fits(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

// A cursor over a byte range that refuses to read past its end.
class ByteReader {
 public:
  explicit ByteReader(Bytes bytes, size_t pos = 0) : bytes_(bytes), pos_(pos) {}
  size_t pos() const { return pos_; }
  size_t remaining() const { return pos_ <= bytes_.size() ? bytes_.size() - pos_ : 0; }
  bool skip(uint64_t n) {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }
  std::optional<Bytes> take(uint64_t n) {
    if (n > remaining()) return std::nullopt;
    Bytes out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  std::optional<uint64_t> le(unsigned width) {
    if (width > remaining()) return std::nullopt;
    const char* p = bytes_.data() + pos_;
    pos_ += width;
    switch (width) {
      case 1:
        return static_cast<uint8_t>(*p);
      case 2:
        return le16(p);
      case 4:
        return le32(p);
      default:
        return le64(p);
    }
  }

 private:
  Bytes bytes_;
  size_t pos_;
};

// Printable excerpt of untrusted bytes for messages: quotes, escapes, truncates.
std::string printable(Bytes b, size_t max = 60);

}  // namespace torchlint::ckpt
