// TL812 ambiguous-archive: reports what the readers found (structure two readers could read differently).
#include "catalog.h"
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class AmbiguousArchive final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    for (const CheckpointFile* file : checkpoint.files) {
      for (const Issue& issue : file->issues) {
        if (issue.kind == IssueKind::kAmbiguous) ctx.report(file->display, issue.message);
      }
    }
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry ambiguous_archive_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::AmbiguousArchive>(catalog_entry("TL812"));
}

}  // namespace torchlint
