#include "issues.h"

#include <algorithm>

namespace torchlint::ckpt {

void IssueSink::add(IssueKind issue, const std::string& kind, std::string message, bool fatal) {
  auto it = std::find_if(counts_.begin(), counts_.end(), [&](const Count& c) { return c.kind == kind; });
  if (it == counts_.end()) {
    counts_.push_back({kind, issue, 0});
    it = counts_.end() - 1;
  }
  ++it->n;
  if (it->n <= kPerKind || fatal) out_.push_back({issue, std::move(message), fatal});
}

bool IssueSink::has_fatal() const {
  return std::any_of(out_.begin(), out_.end(), [](const Issue& i) { return i.fatal; });
}

IssueSink::~IssueSink() {
  for (const auto& c : counts_) {
    if (c.n > kPerKind) {
      out_.push_back(
          {c.issue, "... and " + std::to_string(c.n - kPerKind) + " more like the above (" + c.kind + ")", false});
    }
  }
}

}  // namespace torchlint::ckpt
