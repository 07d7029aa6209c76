#pragma once
// The program pass of torchlint-cpp: the TUs of one executable are one program, as the
// entry script and what it imports are on the Python side. Each TU leaves a summary of its
// functions (rule.h); a finding with a ProgramCondition is kept only if the condition holds
// over main() and what it reaches across the program's TUs (a seed set in a helper of
// another file, a training step in a trainer of another file). Header-only, no Clang.
#include <string>
#include <vector>

#include "rule.h"

namespace torchlint::cpp {

struct ProgramUnit {
  std::string executable;  // TUs with the same key are linked together (program_key())
  const TuSummary* summary = nullptr;
  std::vector<RawFinding>* findings = nullptr;
};

// Which executable a compile command builds a TU for: CMake writes objects to
// `CMakeFiles/<target>.dir/...`; other builds: the TUs of one folder.
inline std::string program_key(const std::vector<std::string>& command_line, const std::string& directory,
                               const std::string& file) {
  for (size_t i = 0; i + 1 < command_line.size(); ++i) {
    if (command_line[i] != "-o") continue;
    const std::string& out = command_line[i + 1];
    size_t dir = out.find("CMakeFiles/");
    size_t end = dir == std::string::npos ? dir : out.find(".dir/", dir);
    if (end != std::string::npos) return directory + "#" + out.substr(dir + 11, end - dir - 11);
  }
  size_t slash = file.rfind('/');
  return slash == std::string::npos ? std::string(".") : file.substr(0, slash);
}

// The facts reached from `main` of `unit`, over it and the TUs of its executable that
// define no main() of their own (a TU with its own main() is another program).
inline std::set<std::string> reached_facts(const ProgramUnit& unit, const std::vector<ProgramUnit>& units) {
  // A name can have several bodies (overloads share their qualified name): all count.
  std::multimap<std::string, const FunctionSummary*> defined;
  auto add = [&](const TuSummary& s) {
    for (const auto& [name, f] : s) defined.emplace(name, &f);
  };
  add(*unit.summary);
  for (const auto& other : units) {
    if (&other == &unit || other.executable != unit.executable || !other.summary || other.summary->contains("main"))
      continue;
    add(*other.summary);
  }
  std::set<std::string> facts, seen;
  std::vector<std::string> todo = {"main"};
  while (!todo.empty()) {
    std::string name = std::move(todo.back());
    todo.pop_back();
    if (!seen.insert(name).second) continue;
    auto [begin, end] = defined.equal_range(name);
    for (auto it = begin; it != end; ++it) {
      facts.insert(it->second->facts.begin(), it->second->facts.end());
      todo.insert(todo.end(), it->second->calls.begin(), it->second->calls.end());
    }
  }
  return facts;
}

// Drops the conditional findings whose condition fails over their program.
inline void decide_program_findings(const std::vector<ProgramUnit>& units) {
  for (const auto& unit : units) {
    if (!unit.findings || !unit.summary) continue;
    bool conditional = false;
    for (const auto& f : *unit.findings) conditional |= !f.program.empty();
    if (!conditional) continue;
    std::set<std::string> facts = reached_facts(unit, units);
    std::erase_if(*unit.findings, [&](const RawFinding& f) {
      for (const auto& need : f.program.requires_facts) {
        if (!facts.contains(need)) return true;
      }
      for (const auto& veto : f.program.unless_facts) {
        if (facts.contains(veto)) return true;
      }
      return false;
    });
  }
}

}  // namespace torchlint::cpp
