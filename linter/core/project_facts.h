#pragma once
// Per-file facts and the project pass that combines them. A front-end records, for each
// function it sees (and a pseudo-function "<module>" for module-level code), the facts it
// establishes ("seeds-torch", "trains", ...) and its call sites with the contexts they
// run in ("no-grad"). Facts are strings: core gives them no meaning, rules do.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "diagnostic.h"
#include "name_table.h"

namespace torchlint {

inline constexpr const char* kModuleFunction = "<module>";
// The fact of a function that starts a program: a module's code under a main guard or
// that trains at module level, a function handed to a launcher (mp.spawn, Process).
inline constexpr const char* kEntryPointFact = "entry-point";
// The context of a call made inside a loop of its caller.
inline constexpr const char* kInLoopContext = "loop";
// The context of a call whose result is kept under a training name (`train_loader = f()`,
// `self.train_data = f()`).
inline constexpr const char* kTrainDataContext = "train-data";
// The fact of a function that steps an optimizer outside any loop of its own: one call is
// one training step (`_run_batch`, `train_step`), not a whole epoch.
inline constexpr const char* kTrainsStepFact = "trains-step";
// A dataset class's `__getitem__` that makes no call and slices its own attributes: an
// item is a slice of tensors already in memory.
inline constexpr const char* kItemsInMemoryFact = "items-in-memory";
// A function that pads pre-tokenized examples with `tokenizer.pad(...)` (a collate_fn).
inline constexpr const char* kPadsTokensFact = "pads-tokens";
// The context of a call made while a model of the caller is in eval mode.
inline constexpr const char* kEvalModeContext = "eval-mode";
// The context of a function passed as a value (a callback, a launcher's target) rather
// than called, or of a call whose target is a guess (a method of a model class): it runs
// as part of the caller's work when it resolves, and is no unknown callee when it does not.
inline constexpr const char* kReferenceContext = "reference";

struct CallFact {
  std::string callee;                 // qualified name as resolved in the calling file
  std::vector<std::string> contexts;  // contexts active at the call ("no-grad")
};

struct FunctionFacts {
  std::string qualname;  // "pkg.utils.set_seed", "train.<module>", "model.Net.forward"
  std::vector<std::string> facts;
  std::vector<CallFact> calls;
};

struct FileFacts {
  std::string module;  // dotted module name relative to the project root
  std::vector<FunctionFacts> functions;
};

class ProjectFacts {
 public:
  explicit ProjectFacts(const std::vector<const FileFacts*>& files);

  // Evaluates a finding's conditions; true when the finding stands.
  bool holds(const ProjectCondition& condition) const;

  size_t function_count() const { return functions_.size(); }

 private:
  struct Function {
    const FunctionFacts* facts;
    uint32_t file = 0;                        // index of its FileFacts
    std::vector<uint32_t> callees;            // resolved project functions
    std::vector<const std::string*> unknown;  // callees outside the project
  };
  std::span<const uint32_t> lookup(const std::string& qualname) const;
  // Functions reachable from `roots`, including the roots; with `once`, only through calls
  // made outside loops.
  std::vector<uint32_t> reachable(const std::vector<std::string>& roots, std::vector<const std::string*>* unknown,
                                  bool once = false) const;
  std::vector<uint32_t> reachable_ids(std::vector<uint32_t> roots, std::vector<const std::string*>* unknown,
                                      bool once) const;
  // The entry points whose programs run `function` (empty: no entry point reaches it).
  std::vector<uint32_t> programs_of(const std::string& function) const;
  // Whether the program started by entry point `entry` has `fact` somewhere (memoised).
  bool program_has(uint32_t entry, const std::string& fact) const;
  // Whether a function of the file that defines `function` has `fact`.
  bool file_has(const std::string& function, const std::string& fact) const;
  bool always_called_in(uint32_t function, const std::string& context) const;

  static std::vector<Function> collect(const std::vector<const FileFacts*>& files);
  static std::vector<std::pair<std::string_view, uint32_t>> names_of(const std::vector<Function>& functions);

  std::vector<Function> functions_;
  // Qualnames and their dotted suffixes, as views of the FunctionFacts' qualnames (which
  // outlive this index, like functions_): no copy of every suffix.
  NameGroups index_;
  // For each function, its incoming call sites: (caller, call fact).
  std::vector<std::vector<std::pair<uint32_t, const CallFact*>>> callers_;
  // Per entry point, the facts of everything its program reaches (filled on first use).
  mutable std::unordered_map<uint32_t, std::vector<std::string_view>> program_facts_;
  // Memos of the project pass (single-threaded, after every file's analysis).
  bool project_has(const std::string& fact) const;
  mutable std::optional<std::unordered_set<std::string>> all_facts_;
  mutable std::unordered_map<std::string, std::vector<uint32_t>> programs_;
  mutable std::unordered_map<std::string, bool> holds_;
  bool evaluate(const ProjectCondition& c) const;
};

}  // namespace torchlint
