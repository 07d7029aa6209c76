#pragma once
// What a reader found wrong with a file, before any rule looks at it: structure that
// readers could interpret differently and structure that is broken. Readers describe the
// problem; the checkpoint rules (rules/checkpoint/) decide which code reports it.
#include <cstdint>
#include <string>
#include <vector>

namespace torchlint::ckpt {

enum class IssueKind : uint8_t {
  kAmbiguous,  // another reasonable reader would see something else than torch does
  kMalformed,  // broken, inconsistent or hostile structure
};

struct Issue {
  IssueKind kind = IssueKind::kMalformed;
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
  void add(IssueKind issue, const std::string& kind, std::string message, bool fatal = false);
  void ambiguous(const std::string& kind, std::string message) { add(IssueKind::kAmbiguous, kind, std::move(message)); }
  void malformed(const std::string& kind, std::string message, bool fatal = false) {
    add(IssueKind::kMalformed, kind, std::move(message), fatal);
  }
  bool has_fatal() const;

 private:
  std::vector<Issue>& out_;
  struct Count {
    std::string kind;
    IssueKind issue;
    size_t n = 0;
  };
  std::vector<Count> counts_;
  static constexpr size_t kPerKind = 5;
};

}  // namespace torchlint::ckpt
