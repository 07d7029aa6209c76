#pragma once
// The interface of a C++ rule (rules/cpp/<CODE>-<name>.cpp). A rule is an AST-matcher
// callback made once per translation unit: it registers matchers on the one MatchFinder
// of the TU (which only visits the declarations of the main file), collects what the
// matches bind, and reports in finish(). Rules never print and never re-parse.
#include <clang/AST/ASTContext.h>
#include <clang/ASTMatchers/ASTMatchFinder.h>
#include <clang/ASTMatchers/ASTMatchers.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace torchlint::cpp {

// A finding that depends on other translation units of the same executable: kept only
// if, over the program of its TU (main() and every function it reaches in the TUs of that
// executable), each fact of `requires_facts` is reached and none of `unless_facts`.
struct ProgramCondition {
  std::vector<std::string> requires_facts, unless_facts;
  bool empty() const { return requires_facts.empty() && unless_facts.empty(); }
};

struct RawFinding {
  std::string code;
  unsigned begin = 0;  // byte offsets in the main file
  unsigned end = 0;
  std::string message;
  ProgramCondition program;
};

// What one TU tells the program pass (program.h) about the functions it defines: the facts
// of their own bodies ("seeds", "steps") and what they call, by program-wide name
// (qualified name; internal-linkage ones prefixed with their file). main() is "main".
struct FunctionSummary {
  std::set<std::string> facts;
  std::set<std::string> calls;
};
using TuSummary = std::map<std::string, FunctionSummary>;

class Context {
 public:
  explicit Context(clang::ASTContext& ast) : ast_(ast), sm_(ast.getSourceManager()) {}
  clang::ASTContext& ast() const { return ast_; }
  const clang::SourceManager& sm() const { return sm_; }

  // Reports at `range` (macro locations map to where the macro is used). Findings outside
  // the main file are dropped: headers are linted when asked for, as their own file.
  void report(std::string_view code, clang::SourceRange range, std::string message);
  void report(std::string_view code, const clang::Stmt* s, std::string message) {
    report(code, s->getSourceRange(), std::move(message));
  }
  bool in_main_file(clang::SourceLocation loc) const {
    return loc.isValid() && sm_.isInMainFile(sm_.getExpansionLoc(loc));
  }
  // Offset of a location in the main file (expansion location).
  unsigned offset(clang::SourceLocation loc) const { return sm_.getFileOffset(sm_.getExpansionLoc(loc)); }

  // Reports a finding that the program pass decides (see ProgramCondition).
  void report_in_program(std::string_view code, clang::SourceRange range, std::string message, ProgramCondition cond) {
    size_t before = findings_.size();
    report(code, range, std::move(message));
    if (findings_.size() > before) findings_.back().program = std::move(cond);
  }

  std::vector<RawFinding>& findings() { return findings_; }
  TuSummary& summary() { return summary_; }

 private:
  clang::ASTContext& ast_;
  const clang::SourceManager& sm_;
  std::vector<RawFinding> findings_;
  TuSummary summary_;
};

class Rule : public clang::ast_matchers::MatchFinder::MatchCallback {
 public:
  explicit Rule(Context& ctx) : ctx_(ctx) {}
  virtual void register_matchers(clang::ast_matchers::MatchFinder& finder) = 0;
  // After every match of the TU: decide and report.
  virtual void finish() {}

 protected:
  Context& ctx_;
};

using RuleFactory = std::unique_ptr<Rule> (*)(Context&);

struct CppRuleEntry {
  const char* code;
  RuleFactory make;
};

// Every C++ rule of this build: one per file rules/cpp/TLnnn-name.cpp, in code order.
const std::vector<CppRuleEntry>& cpp_rules();

}  // namespace torchlint::cpp
