#pragma once
// The checkpoint rules (TL8xx): one per .cpp in rules/checkpoint/, listed in
// checkpoint_rules.cpp. They run on what linter/checkpoint built, through `torchlint ckpt`
// (and `torchlint check --include-checkpoints`).
#include <vector>

#include "checkpoint/rule.h"
#include "core/registry.h"

namespace torchlint {

// Every checkpoint rule with its doc, in code order.
const std::vector<ckpt::CheckpointRuleEntry>& checkpoint_rules();
// Adds their RuleInfo to the common registry (selection, `torchlint rules`, docs).
void register_checkpoint_rules(RuleRegistry& registry);

}  // namespace torchlint
