#pragma once
// What is safe to load, decided by allowlists, never by the absence of a known-bad name.
// Every global a pickle imports or calls is in one of three classes:
//   (a) kAllowed: what torch's `weights_only=True` unpickler accepts (and what the user
//       trusts with --allow-global): safe;
//   (b) kReviewed: `reviewed_globals.def`, reconstructors reviewed to run no code and
//       touch no files (numpy arrays, argparse.Namespace, ...): TL811, needs trust;
//   (c) everything else runs a callable that is not known to be safe: TL810. A list of
//       known-dangerous callables (the union of picklescan's, fickling's and modelscan's
//       lists, plus the published bypasses) only says *what* such a global does, after
//       resolving dotted paths through module attributes (`tempfile._os.system` is
//       `os.system`): kDangerous with a reason, or kUnreviewed without one.
// Constructs that run code whatever the names (see HazardKind) are dangerous.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pickle_vm.h"

namespace torchlint::ckpt {

enum class Verdict : uint8_t { kAllowed, kReviewed, kUnreviewed, kDangerous };

// Classes (c): loading runs a callable that is not known to be safe (TL810).
inline bool runs_unsafe_code(Verdict v) { return v == Verdict::kUnreviewed || v == Verdict::kDangerous; }

struct GlobalVerdict {
  Verdict verdict = Verdict::kUnreviewed;
  // kDangerous: what it can do ("runs shell commands"); kReviewed: why it runs no code;
  // kUnreviewed: why it is not trusted.
  std::string reason;
  // What a dotted name really reaches (`os.system` for `tempfile._os.system`), when that
  // differs from the name as written; empty otherwise.
  std::string resolved;
};

// Which loader reads the pickle: torch.load's unpickler, or TorchScript's (whose
// `__torch__.` classes are resolved against the archive's code/ and whose
// `torch.jit._pickle` helpers are built in).
enum class PickleDialect : uint8_t { kTorchLoad, kTorchScript };

struct Policy {
  std::vector<std::string> extra_allowed;  // `module.name` the user trusts (add_safe_globals)
  GlobalVerdict classify(const GlobalName& name, PickleDialect dialect, uint8_t protocol) const;
  // Whether `qualified` (`module.name`) may be trusted with --allow-global: never something
  // known to run code, reach the system or load code (`builtins.eval`, `os.*`). On refusal,
  // `why` says what it does.
  static bool may_allow(std::string_view qualified, std::string& why);
};

// Hazards that are dangerous (TL810) rather than merely outside the allowlist (TL811).
bool hazard_is_dangerous(HazardKind kind);

// The policy's view of one pickle: every global outside the allowlist (first-seen order,
// counted), every hazard, every opcode outside torch's weights_only subset.
struct GlobalReport {
  std::string qualified;  // as Python 3 resolves it: `builtins.eval`
  std::string spelled;    // as the pickle spells it, when different: `__builtin__.eval`
  Verdict verdict;
  std::string reason;
  std::string resolved;  // what a dotted path reaches, when different from `qualified`
  uint64_t first_offset = 0;
  uint32_t uses = 0;
  uint32_t calls = 0;
  // "`builtins.eval` (pickled as `__builtin__.eval`)", "`tempfile._os.system` (resolves to `os.system`)"
  std::string display() const;
};

struct PickleSafety {
  std::vector<GlobalReport> globals;  // allowed ones are left out
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
