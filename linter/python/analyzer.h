#pragma once
// The Python front-end as the lint session sees it: one file in, findings, suppressions
// and facts out.
#include <optional>
#include <vector>

#include "core/lint_session.h"
#include "core/registry.h"
#include "core/word_scan.h"
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
    std::vector<size_t> triggers;  // positions of the rule's kTriggers in trigger_words_
  };
  std::vector<Registered> rules_;
  std::optional<WordScanner> trigger_words_;  // every rule's kTriggers (none: no rule has any)
};

// Parses with tree-sitter-python; the caller owns the tree (ts_tree_delete).
TSTree* parse_python(std::string_view source);

}  // namespace torchlint::python
