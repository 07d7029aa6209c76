#pragma once
// Runs the inspector and every checkpoint rule on bytes, the way `torchlint ckpt` does.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "registry/checkpoint_rules.h"
#include "checkpoint/inspector.h"
#include "checkpoint/summary.h"

namespace torchlint::ckpt::testing {

struct Inspected {
  std::unique_ptr<CheckpointFile> file;
  Checkpoint checkpoint;
  std::vector<Diagnostic> diagnostics;
  std::set<std::string> codes;
  bool has(const std::string& code) const { return codes.contains(code); }
  // Every finding, for failure messages.
  std::string text() const {
    std::string s;
    for (const auto& d : diagnostics) s += d.code + " " + d.message + "\n";
    return s;
  }
};

inline Inspected inspect(std::string bytes, const std::string& name = "model.pt", bool scan_values = false,
                         std::vector<std::string> allow = {}) {
  InspectOptions options;
  options.scan_values = scan_values;
  options.reader.policy.extra_allowed = std::move(allow);
  Inspected r;
  r.file = inspect_bytes(std::move(bytes), name, options);
  r.checkpoint.display = name;
  r.checkpoint.files.push_back(r.file.get());
  r.checkpoint.roles.push_back("");
  r.diagnostics = run_checkpoint_rules(r.checkpoint, checkpoint_rules(), [](const std::string&) { return true; });
  for (const auto& d : r.diagnostics) r.codes.insert(d.code);
  return r;
}

}  // namespace torchlint::ckpt::testing
