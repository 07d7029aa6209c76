#include "analyzer.h"

#include <algorithm>
#include <stdexcept>

#include "checker.h"
#include "notebook.h"

namespace torchlint::python {

TSTree* parse_python(std::string_view source, const TSTree* old) {
  // One parser per thread: parsers are not thread-safe but are reusable.
  struct ParserHolder {
    TSParser* parser = ts_parser_new();
    ParserHolder() {
      if (!ts_parser_set_language(parser, Syntax::get().language())) {
        throw std::runtime_error("tree-sitter-python grammar ABI is not supported by this libtree-sitter");
      }
    }
    ~ParserHolder() { ts_parser_delete(parser); }
  };
  thread_local ParserHolder holder;
  ts_parser_reset(holder.parser);
  return ts_parser_parse_string(holder.parser, old, source.data(), static_cast<uint32_t>(source.size()));
}

namespace {

// The Python front-end's state in a ParseMemo: the last tree and the text it parsed.
struct ParseState {
  std::string text;
  TSTree* tree = nullptr;
  ParseState() = default;
  ParseState(const ParseState&) = delete;
  ParseState& operator=(const ParseState&) = delete;
  ~ParseState() {
    if (tree) ts_tree_delete(tree);
  }
};

// Tells this front-end's memos from another's.
constexpr char kMemoOwner = 'p';

// tree-sitter's point (row, byte column) of a byte offset.
TSPoint point_at(std::string_view text, size_t offset) {
  TSPoint p{0, 0};
  size_t line_start = 0;
  for (size_t i = text.find('\n'); i != std::string_view::npos && i < offset; i = text.find('\n', i + 1)) {
    ++p.row;
    line_start = i + 1;
  }
  p.column = static_cast<uint32_t>(offset - line_start);
  return p;
}

}  // namespace

TSTree* parse_with_memo(ParseMemo& memo, std::string_view source) {
  auto* state = memo.owner == &kMemoOwner ? static_cast<ParseState*>(memo.state.get()) : nullptr;
  TSTree* old = nullptr;
  if (state && state->tree) {
    std::string_view before = state->text;
    size_t prefix = 0, limit = std::min(before.size(), source.size());
    while (prefix < limit && before[prefix] == source[prefix]) ++prefix;
    size_t suffix = 0;
    while (suffix < limit - prefix && before[before.size() - 1 - suffix] == source[source.size() - 1 - suffix])
      ++suffix;
    TSInputEdit edit;
    edit.start_byte = static_cast<uint32_t>(prefix);
    edit.old_end_byte = static_cast<uint32_t>(before.size() - suffix);
    edit.new_end_byte = static_cast<uint32_t>(source.size() - suffix);
    edit.start_point = point_at(before, edit.start_byte);
    edit.old_end_point = point_at(before, edit.old_end_byte);
    edit.new_end_point = point_at(source, edit.new_end_byte);
    ts_tree_edit(state->tree, &edit);
    old = state->tree;
  }
  TSTree* tree = parse_python(source, old);
  if (!state) {
    auto created = std::make_shared<ParseState>();
    state = created.get();
    memo.owner = &kMemoOwner;
    memo.state = std::move(created);
  }
  if (state->tree) ts_tree_delete(state->tree);
  state->tree = tree ? ts_tree_copy(tree) : nullptr;
  state->text.assign(source);
  return tree;
}

PythonAnalyzer::PythonAnalyzer(const RuleRegistry& registry, const std::vector<RuleEntry>& rules)
    : parse_error_(&registry.engine_rule(EngineRule::kParseError)) {
  for (const auto& entry : rules) {
    if (!entry.make) continue;  // reported by the front-end or the session, not a per-file rule
    auto index = registry.index_of(entry.info.code);
    if (!index) throw std::logic_error("rule not registered: " + entry.info.code);
    rules_.push_back({&entry, *index, &registry.rules()[*index], {}});
  }
  std::vector<std::string_view> words;
  for (Registered& r : rules_) {
    for (std::string_view w : r.entry->triggers) {
      auto it = std::find(words.begin(), words.end(), w);
      r.triggers.push_back(static_cast<size_t>(it - words.begin()));
      if (it == words.end()) words.push_back(w);
    }
  }
  if (!words.empty()) trigger_words_.emplace(std::move(words));
}

Diagnostic PythonAnalyzer::file_level_error(const SourceFile& file, uint32_t offset, std::string message) const {
  Diagnostic d;
  d.code = parse_error_->code;
  d.name = parse_error_->name;
  d.severity = parse_error_->severity;
  d.path = file.path();
  d.start_byte = offset;
  d.end_byte = offset;
  d.message = std::move(message);
  return d;
}

FileResult PythonAnalyzer::analyze(const SourceFile& file, const AnalysisOptions& options) const {
  if (options.relative_path.ends_with(".ipynb")) return analyze_notebook(file, options);
  return analyze_source(file, options);
}

FileResult PythonAnalyzer::analyze_notebook(const SourceFile& file, const AnalysisOptions& options) const {
  std::string error;
  auto nb = extract_notebook(file.text(), error);
  if (!nb) {
    FileResult result;
    result.diagnostics.push_back(file_level_error(file, 0, error));
    return result;
  }
  SourceFile cells(file.path(), std::move(nb->python));
  FileResult result = analyze_source(cells, options);
  auto origin = [&](uint32_t line) -> const NotebookLine& {
    static const NotebookLine unknown{};
    return line >= 1 && line <= nb->lines.size() ? nb->lines[line - 1] : unknown;
  };
  auto file_position = [&](Position p) {
    const NotebookLine& o = origin(p.line);
    return o.file_line ? Position{o.file_line, o.file_column + p.column - 1} : Position{1, 1};
  };
  for (auto& d : result.diagnostics) {
    Position start = cells.position(d.start_byte), end = cells.position(d.end_byte);
    const NotebookLine& o = origin(start.line);
    d.cell = o.cell;
    d.cell_start = {o.line_in_cell, start.column};
    d.start = file_position(start);
    d.end = end.line == start.line ? file_position(end) : Position{origin(end.line).file_line, 1};
    if (d.end.line == 0) d.end = d.start;
    d.statement_first_line = origin(d.statement_first_line ? d.statement_first_line : start.line).file_line;
    d.statement_last_line = origin(d.statement_last_line ? d.statement_last_line : start.line).file_line;
    for (auto& r : d.related) {
      Position rs = cells.position(r.start_byte), re = cells.position(r.end_byte);
      r.start = file_position(rs);
      r.end = re.line == rs.line ? file_position(re) : Position{origin(re.line).file_line, 1};
      if (r.end.line == 0) r.end = r.start;
      r.start_byte = r.end_byte = 0;
    }
    d.start_byte = d.end_byte = 0;  // offsets into the cells, not the file
    d.fix.reset();                  // edits would target the cells, not the JSON
  }
  for (auto& s : result.suppressions) {
    s.line = origin(s.line).file_line;
    s.column = origin(s.comment_line).file_column + s.column - 1;
    s.comment_line = origin(s.comment_line).file_line;
  }
  return result;
}

FileResult PythonAnalyzer::analyze_source(const SourceFile& file, const AnalysisOptions& options) const {
  FileResult result;
  result.facts.module = options.module;
  if (auto nul = file.find_nul()) {
    result.diagnostics.push_back(
        file_level_error(file, 0, "binary file (NUL byte at offset " + std::to_string(*nul) + "); not linted"));
    return result;
  }
  std::optional<Diagnostic> encoding_error;
  if (auto bad = file.find_invalid_utf8()) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", bad->byte);
    encoding_error = file_level_error(
        file, bad->offset,
        std::string("file is not valid UTF-8 (byte ") + hex + "); findings for this file may be incomplete");
  }
  TSTree* tree = options.memo ? parse_with_memo(*options.memo, file.text()) : parse_python(file.text());
  if (!tree) {
    result.diagnostics.push_back(file_level_error(file, 0, "could not parse the file"));
    return result;
  }
  std::vector<Checker::ActiveRule> active;
  std::optional<std::vector<bool>> mentioned;  // scanned when a selected rule has triggers
  for (const auto& r : rules_) {
    if (options.enabled && !options.enabled->contains(r.index)) continue;
    if (!r.triggers.empty()) {
      if (!mentioned) mentioned = trigger_words_->scan(file.text());
      if (std::none_of(r.triggers.begin(), r.triggers.end(), [&](size_t w) { return (*mentioned)[w]; })) continue;
    }
    active.push_back({r.info, r.entry->make(), r.entry->events});
  }
  Checker checker(file, tree, options, std::move(active), *parse_error_);
  result = checker.run();
  ts_tree_delete(tree);
  if (encoding_error) result.diagnostics.push_back(std::move(*encoding_error));
  return result;
}

}  // namespace torchlint::python
