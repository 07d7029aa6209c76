// TL813 malformed-checkpoint: reports what the readers found (truncated, inconsistent or broken structure).
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class MalformedCheckpoint final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    for (const CheckpointFile* file : checkpoint.files) {
      for (const Issue& issue : file->issues) {
        if (issue.code == kMalformedCheckpoint) ctx.report(file->display, issue.message);
      }
    }
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry malformed_checkpoint_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::MalformedCheckpoint>({
      .code = "TL813",
      .name = "malformed-checkpoint",
      .severity = Severity::kError,
      .checklist_items = {"E1"},
      .languages = {Language::kCheckpoint},
  });
}

}  // namespace torchlint
