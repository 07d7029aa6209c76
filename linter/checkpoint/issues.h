#pragma once
// What a reader found wrong with a file, before any rule looks at it: structure that
// readers could interpret differently (TL812) and structure that is broken (TL813).
// The rules of those codes report these; the readers only describe.
#include <cstdint>
#include <string>
#include <vector>

namespace torchlint::ckpt {

inline constexpr const char* kAmbiguousArchive = "TL812";
inline constexpr const char* kMalformedCheckpoint = "TL813";

struct Issue {
  std::string code;     // kAmbiguousArchive or kMalformedCheckpoint
  std::string message;
  // The file could not be inspected completely because of this (torch.load would fail
  // or the inspector had to stop): the file's result is an error (exit 2).
  bool fatal = false;
};

// Collects issues, keeping at most a few of each kind so a hostile archive with 100 000
// bad entries yields a readable report (the rest are counted in one closing issue).
class IssueSink {
 public:
  explicit IssueSink(std::vector<Issue>& out) : out_(out) {}
  ~IssueSink();
  IssueSink(const IssueSink&) = delete;
  IssueSink& operator=(const IssueSink&) = delete;
  // `kind` groups similar issues for the cap ("lfh-name", "duplicate", ...).
  void add(const char* code, const std::string& kind, std::string message, bool fatal = false);
  void ambiguous(const std::string& kind, std::string message) { add(kAmbiguousArchive, kind, std::move(message)); }
  void malformed(const std::string& kind, std::string message, bool fatal = false) {
    add(kMalformedCheckpoint, kind, std::move(message), fatal);
  }
  bool has_fatal() const;

 private:
  std::vector<Issue>& out_;
  struct Count {
    std::string kind;
    std::string code;
    size_t n = 0;
  };
  std::vector<Count> counts_;
  static constexpr size_t kPerKind = 5;
};

}  // namespace torchlint::ckpt
