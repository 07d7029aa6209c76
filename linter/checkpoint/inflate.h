#pragma once
// Deflate (zip method 8) through zlib, with the output bounded before a byte is written:
// a member declares its size, and a stream that would inflate past it, or past the
// caller's limit, stops there (a 40 GB zip bomb costs nothing).
#include <cstdint>
#include <memory>
#include <string>

#include "bytes.h"

namespace torchlint::ckpt {

enum class InflateStatus { kOk, kTooLarge, kCorrupt, kTruncated };

// Inflates raw deflate data into `out`, at most `max_out` bytes.
InflateStatus inflate_all(Bytes compressed, uint64_t max_out, std::string& out);

// Streams a deflated member in chunks (value scans of compressed storages).
class InflateStream {
 public:
  explicit InflateStream(Bytes compressed);
  ~InflateStream();
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;
  // Fills up to `capacity` bytes; returns how many, 0 at the end. Sets `failed` on corrupt data.
  size_t read(char* buffer, size_t capacity);
  bool failed() const { return failed_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  bool failed_ = false;
  bool done_ = false;
};

}  // namespace torchlint::ckpt
