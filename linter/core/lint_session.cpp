#include "lint_session.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "glob.h"
#include "result_cache.h"

namespace torchlint {

void resolve_positions(const SourceFile& file, Diagnostic& d) {
  if (d.start.line == 0 || d.start_byte != 0 || d.end_byte != 0) {
    d.start = file.position(d.start_byte);
    d.end = file.position(std::max(d.end_byte, d.start_byte));
  }
  for (auto& r : d.related) {
    if (r.start.line != 0 && r.start_byte == 0 && r.end_byte == 0) continue;  // positions given
    r.start = file.position(r.start_byte);
    r.end = file.position(std::max(r.end_byte, r.start_byte));
  }
  if (d.statement_first_line == 0) d.statement_first_line = d.start.line;
  if (d.statement_last_line == 0) d.statement_last_line = d.start.line;
}

namespace {

struct Slot {
  bool read = false;
  // Kept only while a finding may still need its text (excerpts, fixes, fingerprints).
  std::shared_ptr<const SourceFile> source;
  FileResult result;
  RuleSet enabled;
  std::optional<FileError> error;
};

const Analyzer* analyzer_for(const std::filesystem::path& path, const std::vector<const Analyzer*>& analyzers) {
  std::string ext = path.extension().string();
  for (const Analyzer* a : analyzers) {
    auto exts = a->extensions();
    if (std::find(exts.begin(), exts.end(), ext) != exts.end()) return a;
  }
  return analyzers.empty() ? nullptr : analyzers.front();
}

void unused_suppressions(const Slot& slot, const RuleRegistry& registry, std::vector<Diagnostic>& out) {
  size_t index = registry.engine_rule_index(EngineRule::kUnusedSuppression);
  if (!slot.enabled.contains(index)) return;
  const RuleInfo& info = registry.rules()[index];
  for (const auto& s : slot.result.suppressions) {
    for (size_t i = 0; i < s.codes.size(); ++i) {
      if (s.used[i]) continue;
      const std::string& code = s.codes[i];
      const RuleInfo* rule = registry.find(code);
      std::string message;
      if (!rule) {
        // Codes of other tools (E501, B614) are theirs to judge; only ours are checked.
        if (!(code.size() > 2 && (code.starts_with("TL") || code.starts_with("tl")))) continue;
        message = "suppression names unknown rule `" + code + "`";
      } else {
        auto ri = registry.index_of(rule->code);
        if (!ri || !slot.enabled.contains(*ri)) continue;  // not run, so it cannot be judged
        message = "unused suppression: `" + code + "` (" + rule->name + ") reports nothing here";
      }
      Diagnostic d;
      d.code = info.code;
      d.name = info.name;
      d.severity = info.severity;
      d.message = std::move(message);
      d.path = slot.source->path();
      d.start = {s.comment_line, s.column};
      d.end = d.start;
      d.statement_first_line = d.statement_last_line = s.comment_line;
      out.push_back(std::move(d));
    }
  }
}

// The value the caller gave for `path` in `map` (keyed by absolute normal path), if any.
template <typename Map>
const typename Map::mapped_type* given_for(const Map* map, const std::filesystem::path& path) {
  if (!map || map->empty()) return nullptr;
  std::error_code ec;
  auto it = map->find(std::filesystem::absolute(path, ec).lexically_normal().string());
  return it == map->end() ? nullptr : &it->second;
}

}  // namespace

LintOutcome lint_files(const std::vector<DiscoveredFile>& files, const std::vector<const Analyzer*>& analyzers,
                       const RuleRegistry& registry, const LintOptions& options) {
  std::vector<Slot> slots(files.size());
  std::atomic<size_t> next{0};

  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < files.size(); i = next.fetch_add(1)) {
      const DiscoveredFile& f = files[i];
      Slot& slot = slots[i];
      slot.enabled = options.enabled;
      for (const auto& [pattern, selectors] : options.per_file_ignores) {
        if (path_matches(pattern, f.relative)) slot.enabled = without(registry, slot.enabled, selectors);
      }
      std::string error;
      const std::string* unsaved = given_for(options.overlay, f.path);
      auto source = unsaved ? std::optional<SourceFile>(std::in_place, f.display, *unsaved)
                            : SourceFile::read(f.path.string(), error, f.display);
      if (!source) {
        if (!f.context_only) slot.error = FileError{f.display, error};
        continue;
      }
      slot.read = true;
      slot.source = std::make_shared<const SourceFile>(std::move(*source));
      const Analyzer* analyzer = analyzer_for(f.path, analyzers);
      if (!analyzer) continue;
      AnalysisOptions ao;
      ao.enabled = &slot.enabled;
      ao.target_torch = options.target_torch;
      ao.target_torchvision = options.target_torchvision;
      ao.relative_path = f.relative;
      ao.module = module_name_for(f.relative);
      if (auto memo = given_for(options.memos, f.path)) ao.memo = *memo;
      std::optional<FileResult> cached;
      uint64_t key = 0;
      const ResultCache* cache = unsaved ? nullptr : options.cache;
      if (cache) {
        key = options.cache->key(slot.source->text(), slot.enabled, options.target_torch, ao.module,
                                 options.target_torchvision);
        cached = cache->load(f.relative, key);
      }
      if (cached) {
        slot.result = std::move(*cached);
      } else {
        slot.result = analyzer->analyze(*slot.source, ao);
        if (cache) cache->store(f.relative, key, slot.result);
      }
      if (f.context_only) {
        // Only its facts are wanted: nothing of it is reported.
        slot.result.diagnostics.clear();
        slot.result.suppressions.clear();
      }
      for (auto& d : slot.result.diagnostics) {
        d.path = f.display;
        resolve_positions(*slot.source, d);
      }
      // No finding and no suppression comment: nothing below can report on this file, and
      // its memory serves the next file's text instead of fresh pages.
      if (slot.result.diagnostics.empty() && slot.result.suppressions.empty()) slot.source.reset();
    }
  };

  unsigned jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<size_t>(jobs, std::max<size_t>(files.size(), 1)));
  if (jobs <= 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < jobs; ++t) threads.emplace_back(work);
    for (auto& t : threads) t.join();
  }

  std::vector<const FileFacts*> facts;
  LintOutcome outcome;
  for (size_t i = 0; i < slots.size(); ++i) {
    const Slot& s = slots[i];
    if (!s.read) continue;
    facts.push_back(&s.result.facts);
    if (files[i].context_only) continue;
    for (const auto& fn : s.result.facts.functions) outcome.facts.insert(fn.facts.begin(), fn.facts.end());
  }
  ProjectFacts project(facts);

  for (size_t i = 0; i < slots.size(); ++i) {
    Slot& slot = slots[i];
    if (files[i].context_only) continue;
    if (slot.error) {
      outcome.errors.push_back(*slot.error);
      continue;
    }
    if (!slot.read) continue;
    ++outcome.files_linted;
    std::vector<Diagnostic> standing;
    for (auto& d : slot.result.diagnostics) {
      auto index = registry.index_of(d.code);
      if (index && !slot.enabled.contains(*index)) continue;
      bool holds = std::all_of(d.conditions.begin(), d.conditions.end(),
                               [&](const ProjectCondition& c) { return project.holds(c); });
      if (holds) standing.push_back(std::move(d));
    }
    if (!slot.source) continue;  // released above: no finding, no suppression
    standing = apply_suppressions(std::move(standing), slot.result.suppressions, registry);
    unused_suppressions(slot, registry, standing);
    if (!standing.empty()) outcome.sources.emplace(slot.source->path(), slot.source);
    for (auto& d : standing) outcome.diagnostics.push_back(std::move(d));
  }
  std::sort(outcome.diagnostics.begin(), outcome.diagnostics.end(), diagnostic_less);
  std::sort(outcome.errors.begin(), outcome.errors.end(),
            [](const FileError& a, const FileError& b) { return a.path < b.path; });
  return outcome;
}

}  // namespace torchlint
