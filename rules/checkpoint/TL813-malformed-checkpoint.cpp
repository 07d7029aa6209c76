// TL813 malformed-checkpoint: reports what the readers found (truncated, inconsistent or broken structure).
#include "catalog.h"
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class MalformedCheckpoint final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    for (const CheckpointFile* file : checkpoint.files) {
      for (const Issue& issue : file->issues) {
        if (issue.kind == IssueKind::kMalformed) ctx.report(file->display, issue.message);
      }
    }
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry malformed_checkpoint_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::MalformedCheckpoint>(catalog_entry("TL813"));
}

}  // namespace torchlint
