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
  // A finding under the catalog's parse-error rule for a file that is not Python source.
  Diagnostic file_level_error(const SourceFile& file, uint32_t offset, std::string message) const;

  const RuleInfo* parse_error_;  // the catalog's rule for files that do not parse
  struct Registered {
    const RuleEntry* entry;
    size_t index;  // in the registry
    const RuleInfo* info;
    std::vector<size_t> triggers;  // positions of the rule's kTriggers in trigger_words_
  };
  std::vector<Registered> rules_;
  std::optional<WordScanner> trigger_words_;  // every rule's kTriggers (none: no rule has any)
};

// Parses with tree-sitter-python; the caller owns the tree (ts_tree_delete). `old`: an
// earlier tree of the text, already edited (ts_tree_edit) to match it, whose unchanged
// parts tree-sitter re-uses.
TSTree* parse_python(std::string_view source, const TSTree* old = nullptr);

// Parses `source` re-using the tree `memo` holds from the previous parse of the same file:
// the edit given to tree-sitter is the span between the two texts' common prefix and
// suffix (exactly a keystroke's, or a pasted block's). Keeps the new tree and text in
// `memo` for the next time. The caller owns the returned tree.
TSTree* parse_with_memo(ParseMemo& memo, std::string_view source);

}  // namespace torchlint::python
