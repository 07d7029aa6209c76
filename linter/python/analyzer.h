#pragma once
// The Python front-end as the lint session sees it: one file in, findings, suppressions
// and facts out.
#include <vector>

#include "core/lint_session.h"
#include "core/registry.h"
#include "rule.h"

namespace torchlint::python {

class PythonAnalyzer final : public Analyzer {
 public:
  PythonAnalyzer(const RuleRegistry& registry, const std::vector<RuleEntry>& rules);
  std::vector<std::string> extensions() const override { return {".py", ".pyi", ".ipynb"}; }
  FileResult analyze(const SourceFile& file, const AnalysisOptions& options) const override;

 private:
  FileResult analyze_source(const SourceFile& file, const AnalysisOptions& options) const;
  FileResult analyze_notebook(const SourceFile& file, const AnalysisOptions& options) const;

  struct Registered {
    const RuleEntry* entry;
    size_t index;  // in the registry
    const RuleInfo* info;
  };
  std::vector<Registered> rules_;
};

// Parses with tree-sitter-python; the caller owns the tree (ts_tree_delete).
TSTree* parse_python(std::string_view source);

}  // namespace torchlint::python
