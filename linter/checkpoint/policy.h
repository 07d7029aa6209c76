#pragma once
// What is safe to load. The default notion of safe is torch's own: the globals and
// opcodes its `weights_only=True` unpickler accepts. A named list of known-dangerous
// callables (the union of picklescan's, fickling's and modelscan's lists, plus the
// published bypasses) only explains *why* something outside the allowlist is worse than
// unknown. Constructs that run code whatever the names (see HazardKind) are dangerous.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pickle_vm.h"

namespace torchlint::ckpt {

enum class Verdict : uint8_t { kAllowed, kUnknown, kDangerous };

struct GlobalVerdict {
  Verdict verdict = Verdict::kUnknown;
  std::string reason;   // for kDangerous: what it can do ("runs shell commands")
};

// Which loader reads the pickle: torch.load's unpickler, or TorchScript's (whose
// `__torch__.` classes are resolved against the archive's code/ and whose
// `torch.jit._pickle` helpers are built in).
enum class PickleDialect : uint8_t { kTorchLoad, kTorchScript };

struct Policy {
  std::vector<std::string> extra_allowed;  // `module.name` the user trusts (add_safe_globals)
  GlobalVerdict classify(const GlobalName& name, PickleDialect dialect, uint8_t protocol) const;
};

// Hazards that are dangerous (TL810) rather than merely outside the allowlist (TL811).
bool hazard_is_dangerous(HazardKind kind);

// The policy's view of one pickle: every global outside the allowlist (first-seen order,
// counted), every hazard, every opcode outside torch's weights_only subset.
struct GlobalReport {
  std::string qualified;   // as Python 3 resolves it: `builtins.eval`
  std::string spelled;     // as the pickle spells it, when different: `__builtin__.eval`
  Verdict verdict;
  std::string reason;
  uint64_t first_offset = 0;
  uint32_t uses = 0;
  uint32_t calls = 0;
  // "`builtins.eval` (pickled as `__builtin__.eval`)"
  std::string display() const;
};

struct PickleSafety {
  std::vector<GlobalReport> globals;   // allowed ones are left out
  std::vector<Hazard> hazards;
  std::vector<std::pair<uint8_t, uint64_t>> outside_subset;  // opcode, first offset
  bool dangerous() const;
  bool weights_only_loadable() const;
};

PickleSafety assess(const PickleRun& run, const Policy& policy, PickleDialect dialect);

// The py2 module/name a pickle of protocol < 3 is mapped to (fix_imports), e.g.
// `__builtin__.eval` -> `builtins.eval`.
GlobalName python3_name(const GlobalName& name);

}  // namespace torchlint::ckpt
