#include <algorithm>

#include "audit.h"

namespace torchlint::report {

std::vector<const ItemResult*> items_by_impact(const Scorecard& card) {
  std::vector<const ItemResult*> failed;
  for (const auto& r : card.items) {
    if (r.status == ItemStatus::kFailed) failed.push_back(&r);
  }
  std::stable_sort(failed.begin(), failed.end(), [](const ItemResult* a, const ItemResult* b) {
    if (a->worst != b->worst) return a->worst > b->worst;
    return a->evidence.size() > b->evidence.size();
  });
  return failed;
}

}  // namespace torchlint::report
