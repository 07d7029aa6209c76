#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rule_info.h"
#include "source_file.h"

namespace torchlint {

struct Edit {
  uint32_t start = 0;  // byte offsets into the file
  uint32_t end = 0;
  std::string replacement;
};

struct Fix {
  std::string message;  // "Add `weights_only=True`"
  std::vector<Edit> edits;
  // Unsafe fixes may change behaviour; they are applied only with --unsafe-fixes.
  bool unsafe = false;
};

// A question about the whole project that decides whether a finding stands. Rules ask
// it while linting one file; the project pass answers it once every file's facts exist.
struct ProjectCondition {
  enum class Kind {
    kReachableHas,       // some function reachable from `roots` has `fact`
    kReachableLacks,     // no function reachable from `roots` has `fact`
    kNotAlwaysCalledIn,  // `roots[0]` has a call site outside context `fact`
    kProjectHas,         // some function anywhere in the project has `fact`
    kProjectLacks,       // the program(s) running `scope` do not have `fact` (see below)
    // Some function reachable from `roots` without passing through a call made inside a
    // loop has `fact`: what one call of a root does once (a training step, not an epoch).
    kReachableOnceHas,
    // Some call site of `roots[0]` runs in context `fact` ("train-data": its result is
    // kept under a training name).
    kSomeCallIn,
    // Every call site of `roots[0]` runs in context `fact`, directly or because its caller
    // always does (and there is at least one).
    kAlwaysCalledIn,
    // The program(s) running `scope` have `fact`; code no entry point reaches is judged
    // by its own file (a library module's own evidence, not another program's).
    kProgramHas,
  };
  Kind kind = Kind::kReachableHas;
  std::vector<std::string> roots;  // function qualified names
  std::string fact;
  // For kReachableLacks: a reachable callee torchlint cannot see into whose name contains
  // this text is assumed to have the fact (a `set_seed` from an unlinted module).
  std::string unknown_callee_hint;
  // kProjectLacks/kProgramHas: the function the finding is in (the front-end fills it in).
  // The condition is judged over the programs that reach it: the functions reachable from
  // every entry point (a main guard, a launched function) that reaches `scope`. Code that
  // no entry point reaches is judged over the whole project (kProjectLacks: the cautious
  // answer) or its own file (kProgramHas).
  std::string scope;
  // kProjectLacks: the condition also holds when the program has this fact ("the program
  // builds only MLP layers, unless it also builds convolutions").
  std::string unless;
};

// A second place in the same file that explains a finding: the optimizer a checkpoint
// leaves out, the loop that trains, the backward pass a step runs before. Shown by editors
// (LSP relatedInformation) and code scanning (SARIF relatedLocations).
struct RelatedLocation {
  std::string message;  // "optimizer `opt` created here"
  uint32_t start_byte = 0;
  uint32_t end_byte = 0;
  Position start;  // filled from the offsets like the finding's own (resolve_positions)
  Position end;
};

struct Diagnostic {
  std::string code;
  std::string name;
  Severity severity = Severity::kWarning;
  std::string message;
  std::string path;
  uint32_t start_byte = 0;
  uint32_t end_byte = 0;
  Position start;
  Position end;
  // Lines of the enclosing statement: a suppression comment anywhere on them applies.
  uint32_t statement_first_line = 0;
  uint32_t statement_last_line = 0;
  // Notebooks: `start`/`end` are positions in the .ipynb file; these say where the finding
  // is in the notebook as a person sees it (cell number, line in the cell, column).
  uint32_t cell = 0;
  Position cell_start;
  // Qualified name of the enclosing function or class ("train.validate"), for
  // line-independent fingerprints.
  std::string scope;
  std::optional<Fix> fix;
  std::vector<ProjectCondition> conditions;
  std::vector<RelatedLocation> related;  // optional: where the rule already knew a second place
};

// File-level problem that stops linting of one file (unreadable, not a file, ...).
struct FileError {
  std::string path;
  std::string message;
};

bool diagnostic_less(const Diagnostic& a, const Diagnostic& b);

}  // namespace torchlint
