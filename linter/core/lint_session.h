#pragma once
// Lints a set of files with the front-ends given, in parallel, then runs the project pass,
// applies suppressions and returns findings in a deterministic order.
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config.h"
#include "diagnostic.h"
#include "discovery.h"
#include "project_facts.h"
#include "registry.h"
#include "rule_selection.h"
#include "suppressions.h"

namespace torchlint {

// What a front-end keeps between lints of one file (its last parse tree and the text it
// parsed) so that the next lint of an edited text re-parses only what changed. The caller
// (the language server) owns one per open file and passes it to every lint of that file,
// one lint at a time; only the front-end that filled it reads it (`owner` says which).
struct ParseMemo {
  const void* owner = nullptr;
  std::shared_ptr<void> state;
};

struct AnalysisOptions {
  const RuleSet* enabled = nullptr;
  TorchVersion target_torch = kDefaultTargetTorch;
  TorchVersion target_torchvision = paired_torchvision(kDefaultTargetTorch);
  std::string module;         // dotted module name
  std::string relative_path;  // relative to the project root
  ParseMemo* memo = nullptr;  // null: parse from scratch
};

struct FileResult {
  std::vector<Diagnostic> diagnostics;
  std::vector<Suppression> suppressions;
  FileFacts facts;
};

class Analyzer {
 public:
  virtual ~Analyzer() = default;
  virtual std::vector<std::string> extensions() const = 0;
  virtual FileResult analyze(const SourceFile& file, const AnalysisOptions& options) const = 0;
};

struct LintOptions {
  RuleSet enabled;
  std::vector<std::pair<std::string, std::vector<std::string>>> per_file_ignores;
  TorchVersion target_torch = kDefaultTargetTorch;
  TorchVersion target_torchvision = paired_torchvision(kDefaultTargetTorch);
  unsigned jobs = 0;                         // 0: all cores
  const class ResultCache* cache = nullptr;  // per-file results by content; null: off
  // Texts that replace files on disk, by absolute normal path: an editor's unsaved buffers
  // (torchlint server). They bypass the result cache: an entry per keystroke would only
  // push out the saved file's entry.
  const std::unordered_map<std::string, std::string>* overlay = nullptr;
  // Parse memos of the overlay's files, by the same key.
  const std::unordered_map<std::string, ParseMemo*>* memos = nullptr;
};

struct LintOutcome {
  std::vector<Diagnostic> diagnostics;
  std::vector<Diagnostic> baselined;  // known findings a baseline hides (reported in SARIF)
  std::vector<FileError> errors;
  size_t files_linted = 0;
  // Every fact any function of the project established ("trains", "serves-http", ...):
  // what the audit decides applicability with.
  std::set<std::string> facts;
  // Sources of the files with findings, for excerpts in the outputs.
  std::unordered_map<std::string, std::shared_ptr<const SourceFile>> sources;
};

LintOutcome lint_files(const std::vector<DiscoveredFile>& files, const std::vector<const Analyzer*>& analyzers,
                       const RuleRegistry& registry, const LintOptions& options);

// Fills positions from byte offsets (front-ends may report offsets only).
void resolve_positions(const SourceFile& file, Diagnostic& d);

}  // namespace torchlint
