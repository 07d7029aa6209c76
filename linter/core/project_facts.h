#pragma once
// Per-file facts and the project pass that combines them. A front-end records, for each
// function it sees (and a pseudo-function "<module>" for module-level code), the facts it
// establishes ("seeds-torch", "trains", ...) and its call sites with the contexts they
// run in ("no-grad"). Facts are strings: core gives them no meaning, rules do.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "diagnostic.h"
#include "name_table.h"

namespace torchlint {

inline constexpr const char* kModuleFunction = "<module>";

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
    std::vector<uint32_t> callees;             // resolved project functions
    std::vector<const std::string*> unknown;   // callees outside the project
  };
  std::span<const uint32_t> lookup(const std::string& qualname) const;
  // Functions reachable from `roots`, including the roots.
  std::vector<uint32_t> reachable(const std::vector<std::string>& roots, std::vector<const std::string*>* unknown) const;
  bool always_called_in(uint32_t function, const std::string& context) const;

  static std::vector<Function> collect(const std::vector<const FileFacts*>& files);
  static std::vector<std::pair<std::string_view, uint32_t>> names_of(const std::vector<Function>& functions);

  std::vector<Function> functions_;
  // Qualnames and their dotted suffixes, as views of the FunctionFacts' qualnames (which
  // outlive this index, like functions_): no copy of every suffix.
  NameGroups index_;
  // For each function, its incoming call sites: (caller, call fact).
  std::vector<std::vector<std::pair<uint32_t, const CallFact*>>> callers_;
};

}  // namespace torchlint
