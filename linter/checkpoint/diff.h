#pragma once
// `torchlint ckpt diff A B`: which keys and tensors were added, removed or changed
// between two checkpoints (shape, dtype, value; with values scanned, the largest absolute
// difference), for comparing a new model with the one it replaces.
#include <optional>
#include <string>
#include <vector>

#include "checkpoint.h"

namespace torchlint::ckpt {

struct DiffEntry {
  enum class Kind { kAdded, kRemoved, kChanged };
  Kind kind;
  std::string path;
  std::string before;  // description in A (empty when added)
  std::string after;   // description in B (empty when removed)
};

struct CheckpointDiff {
  std::vector<DiffEntry> entries;
  size_t same = 0;             // leaves equal in both
  size_t compared_values = 0;  // tensors whose values were compared
  std::string note;            // e.g. wrapper prefixes that were ignored
  bool identical() const { return entries.empty(); }
};

CheckpointDiff diff_checkpoints(const CheckpointFile& a, const CheckpointFile& b, bool compare_values);
std::string render_diff(const CheckpointDiff& diff, const std::string& a_name, const std::string& b_name, bool color);

}  // namespace torchlint::ckpt
