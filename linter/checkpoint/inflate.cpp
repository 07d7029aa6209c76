#include "inflate.h"

#include <zlib.h>

#include <algorithm>
#include <climits>

namespace torchlint::ckpt {

struct InflateStream::State {
  z_stream z{};
  Bytes input;
  size_t consumed = 0;
};

InflateStream::InflateStream(Bytes compressed) : state_(std::make_unique<State>()) {
  state_->input = compressed;
  if (inflateInit2(&state_->z, -MAX_WBITS) != Z_OK) failed_ = true;
}

InflateStream::~InflateStream() { inflateEnd(&state_->z); }

size_t InflateStream::read(char* buffer, size_t capacity) {
  if (failed_ || done_ || capacity == 0) return 0;
  z_stream& z = state_->z;
  z.next_out = reinterpret_cast<Bytef*>(buffer);
  z.avail_out = static_cast<uInt>(std::min<size_t>(capacity, UINT_MAX));
  while (z.avail_out > 0) {
    if (z.avail_in == 0 && state_->consumed < state_->input.size()) {
      size_t n = std::min<size_t>(state_->input.size() - state_->consumed, 1u << 20);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(state_->input.data() + state_->consumed));
      z.avail_in = static_cast<uInt>(n);
      state_->consumed += n;
    }
    int rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      done_ = true;
      break;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && state_->consumed >= state_->input.size()) {
      failed_ = true;  // input ended before the stream did
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      failed_ = true;
      break;
    }
  }
  return capacity - std::min<size_t>(capacity, z.avail_out);
}

InflateStatus inflate_all(Bytes compressed, uint64_t max_out, std::string& out) {
  out.clear();
  InflateStream stream(compressed);
  const size_t chunk = 1u << 16;
  while (true) {
    if (out.size() > max_out) return InflateStatus::kTooLarge;
    size_t old = out.size();
    size_t want = static_cast<size_t>(std::min<uint64_t>(chunk, max_out + 1 - out.size()));
    out.resize(old + want);
    size_t got = stream.read(out.data() + old, want);
    out.resize(old + got);
    if (stream.failed()) return out.size() > max_out ? InflateStatus::kTooLarge : InflateStatus::kCorrupt;
    if (got == 0) break;
  }
  if (out.size() > max_out) return InflateStatus::kTooLarge;
  return InflateStatus::kOk;
}

}  // namespace torchlint::ckpt
