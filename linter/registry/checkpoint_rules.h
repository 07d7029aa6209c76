#pragma once
// The checkpoint rules (TL8xx): one per .cpp in rules/checkpoint/, each file a line of
// the list rules/CMakeLists.txt generates. They run on what linter/checkpoint built, through `torchlint ckpt`
// (and `torchlint check --include-checkpoints`).
#include <vector>

#include "checkpoint/rule.h"
#include "core/registry.h"

namespace torchlint {

// Every checkpoint rule implementation, in code order (RuleInfo from the catalog).
const std::vector<ckpt::CheckpointRuleEntry>& checkpoint_rules();

}  // namespace torchlint
