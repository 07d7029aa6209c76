#pragma once
// JSON-RPC 2.0 over a byte stream with LSP's base protocol framing: headers
// ("Content-Length: N"), a blank line, then N bytes of JSON.
#include <cstdio>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace torchlint::server {

// JSON-RPC and LSP error codes the server answers with.
namespace rpc_error {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kServerNotInitialized = -32002;
inline constexpr int kRequestCancelled = -32800;
inline constexpr int kRequestFailed = -32803;
}  // namespace rpc_error

// Thrown by a request handler to answer with a JSON-RPC error instead of a result.
struct RequestError : std::runtime_error {
  RequestError(int error_code, const std::string& message) : std::runtime_error(message), code(error_code) {}
  int code;
};

// A message body larger than this is read and thrown away (and answered with an error):
// a client bug must not make the server allocate without bound.
inline constexpr size_t kMaxMessageBytes = 256u << 20;

struct Frame {
  enum class Kind { kMessage, kBadFrame, kEnd };
  Kind kind = Kind::kEnd;
  std::string body;   // kMessage: the JSON text, not yet parsed
  std::string error;  // kBadFrame: what was wrong with the headers
};

// Reads frames from a stream (blocking). kEnd: the stream ended or failed (the client is
// gone); kBadFrame: headers without a usable Content-Length, after which reading goes on
// with the next header block.
class FrameReader {
 public:
  explicit FrameReader(std::FILE* in) : in_(in) {}
  Frame next();

 private:
  bool read_line(std::string& line);
  std::FILE* in_;
};

// Writes frames; thread-safe. Returns false once the stream is broken (the client is gone).
class FrameWriter {
 public:
  explicit FrameWriter(std::FILE* out) : out_(out) {}
  bool write(const nlohmann::json& message);
  bool broken() {
    std::lock_guard lock(mutex_);
    return broken_;
  }

 private:
  std::mutex mutex_;
  std::FILE* out_;
  bool broken_ = false;
};

}  // namespace torchlint::server
