#include "checkpoint_rules.h"

#include "catalog.h"

namespace torchlint {

ckpt::CheckpointRuleEntry ckpt_missing_optimizer_state_rule();
ckpt::CheckpointRuleEntry ckpt_missing_scheduler_state_rule();
ckpt::CheckpointRuleEntry ckpt_missing_epoch_rule();
ckpt::CheckpointRuleEntry unsafe_pickle_global_rule();
ckpt::CheckpointRuleEntry not_weights_only_loadable_rule();
ckpt::CheckpointRuleEntry ambiguous_archive_rule();
ckpt::CheckpointRuleEntry malformed_checkpoint_rule();
ckpt::CheckpointRuleEntry non_finite_weights_rule();
ckpt::CheckpointRuleEntry unexpected_dtype_rule();
ckpt::CheckpointRuleEntry saved_on_cuda_rule();
ckpt::CheckpointRuleEntry wrapper_prefix_keys_rule();

const std::vector<ckpt::CheckpointRuleEntry>& checkpoint_rules() {
  static const std::vector<ckpt::CheckpointRuleEntry> rules = [] {
    std::vector<ckpt::CheckpointRuleEntry> all;
    for (auto factory :
         {ckpt_missing_optimizer_state_rule, ckpt_missing_scheduler_state_rule, ckpt_missing_epoch_rule,
          unsafe_pickle_global_rule, not_weights_only_loadable_rule, ambiguous_archive_rule, malformed_checkpoint_rule,
          non_finite_weights_rule, unexpected_dtype_rule, saved_on_cuda_rule, wrapper_prefix_keys_rule}) {
      all.push_back(factory());
    }
    return all;
  }();
  return rules;
}

}  // namespace torchlint
