// What the server offers on a finding: its safe fix, a suppression comment, the fix-all
// edit (code actions and `torchlint.fixAll`), and the rule's doc on hover.
#include <algorithm>
#include <cctype>

#include "cli/check_command.h"
#include "core/baseline.h"
#include "core/fixes.h"
#include "core/text.h"
#include "language_server.h"

namespace torchlint::server {

using nlohmann::json;

namespace {

constexpr const char* kFixAllKind = "source.fixAll.torchlint";
constexpr const char* kFixAllCommand = "torchlint.fixAll";
constexpr const char* kAddToBaselineCommand = "torchlint.addToBaseline";

// Where an existing `# noqa: CODES` list on `line` ends (to append a code to it), or npos.
// A blanket `# noqa` (no list) is reported as `blanket`: it already suppresses everything.
size_t noqa_list_end(std::string_view line, bool& blanket) {
  blanket = false;
  for (size_t hash = line.find('#'); hash != std::string_view::npos; hash = line.find('#', hash + 1)) {
    size_t p = hash + 1;
    while (p < line.size() && line[p] == ' ') ++p;
    if (!ascii_iequals(line.substr(p, 4), "noqa")) continue;
    p += 4;
    if (p < line.size() && (std::isalnum(static_cast<unsigned char>(line[p])) || line[p] == '_')) continue;
    size_t q = p;
    while (q < line.size() && line[q] == ' ') ++q;
    if (q >= line.size() || line[q] != ':') {
      blanket = true;
      return std::string_view::npos;
    }
    ++q;
    size_t end = q;
    for (size_t i = q; i < line.size(); ++i) {
      char c = line[i];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') {
        end = i + 1;
      } else if (c != ' ' && c != ',') {
        break;
      }
    }
    return end;
  }
  return std::string_view::npos;
}

bool lines_overlap(const Diagnostic& d, uint32_t first, uint32_t last) {
  // Finding positions are 1-based, LSP lines 0-based.
  return d.start.line - 1 <= last && std::max(d.end.line, d.start.line) - 1 >= first;
}

}  // namespace

json LanguageServer::code_actions(const json& params) {
  Document* doc = document(params.at("textDocument"));
  if (!doc || !(doc->lintable || doc->cell)) return json::array();
  if (!doc->linted) return json::array();
  const json& range = params.at("range");
  uint32_t first = range.at("start").at("line").get<uint32_t>(), last = range.at("end").at("line").get<uint32_t>();
  // `context.only` restricts the kinds (a "fix all on save" asks for source.fixAll only).
  std::vector<std::string> only;
  if (params.contains("context") && params["context"].contains("only") && params["context"]["only"].is_array()) {
    for (const auto& k : params["context"]["only"]) {
      if (k.is_string()) only.push_back(k.get<std::string>());
    }
  }
  auto wanted = [&](std::string_view kind) {
    if (only.empty()) return true;
    return std::any_of(only.begin(), only.end(), [&](const std::string& o) {
      return kind == o || (kind.starts_with(o) && kind.size() > o.size() && kind[o.size()] == '.');
    });
  };

  json actions = json::array();
  bool any_fix = false;
  for (const Diagnostic& d : doc->findings) {
    if (d.fix && !d.fix->unsafe && !d.fix->edits.empty()) any_fix = true;
    if (!lines_overlap(d, first, last) || !wanted("quickfix")) continue;
    json diagnostic = to_lsp(*doc->linted, d, doc->uri);
    if (d.fix && !d.fix->unsafe && !d.fix->edits.empty()) {
      json edits = json::array();
      for (const Edit& e : d.fix->edits) {
        edits.push_back({{"range", lsp_range(*doc->linted, e.start, e.end)}, {"newText", e.replacement}});
      }
      actions.push_back({{"title", d.fix->message + " (" + d.code + ")"},
                         {"kind", "quickfix"},
                         {"isPreferred", true},
                         {"diagnostics", {diagnostic}},
                         {"edit", {{"changes", {{doc->uri, edits}}}}}});
    }
    // A cell's finding is the notebook's in a baseline, at lines of the .ipynb file that
    // the cell does not know: no baseline entry from here.
    if (auto baseline = doc->cell ? std::nullopt : baseline_for(doc->project)) {
      // A command, not an edit: the baseline is a file of its own, written by the server.
      json arguments = {doc->uri, d.code, diagnostic["range"]["start"]};
      std::string title = "Add " + d.code + " to the baseline (" + baseline->filename().string() + ")";
      actions.push_back(
          {{"title", title},
           {"kind", "quickfix"},
           {"diagnostics", {diagnostic}},
           {"command", {{"title", title}, {"command", kAddToBaselineCommand}, {"arguments", arguments}}}});
    }
    if (auto edit = suppress_edit(*doc, d)) {
      actions.push_back({{"title", "Suppress " + d.code + " on this line"},
                         {"kind", "quickfix"},
                         {"diagnostics", {diagnostic}},
                         {"edit", {{"changes", {{doc->uri, json::array({*edit})}}}}}});
    }
  }
  if (any_fix && wanted(kFixAllKind)) {
    if (auto edit = fix_all_edit(*doc)) {
      actions.push_back(
          {{"title", "Fix all torchlint findings with a safe fix"}, {"kind", kFixAllKind}, {"edit", *edit}});
    }
  }
  return actions;
}

std::optional<json> LanguageServer::suppress_edit(const Document& doc, const Diagnostic& d) const {
  // A notebook's lines are JSON strings: a comment appended there would break the file.
  if (doc.path.extension() == ".ipynb" || d.start.line == 0) return std::nullopt;
  const TextDocument& text = *doc.linted;
  uint32_t line_index = d.start.line - 1;
  std::string_view line = text.line(line_index);
  uint32_t line_start = static_cast<uint32_t>(line.data() - text.text().data());
  if (!line.empty() && line.back() == '\\') {
    // A comment after a line continuation is a syntax error: the statement gets an
    // own-line `# torchlint: ignore[...]` above it instead.
    uint32_t first_line = std::min(d.statement_first_line ? d.statement_first_line : d.start.line, d.start.line);
    std::string_view top = text.line(first_line - 1);
    uint32_t top_start = static_cast<uint32_t>(top.data() - text.text().data());
    size_t indent = top.find_first_not_of(" \t");
    std::string comment = std::string(top.substr(0, indent == std::string_view::npos ? 0 : indent)) +
                          "# torchlint: ignore[" + d.code + "]\n";
    return json{{"range", lsp_range(text, top_start, top_start)}, {"newText", comment}};
  }
  bool blanket = false;
  size_t list_end = noqa_list_end(line, blanket);
  if (blanket) return std::nullopt;  // already suppressed: nothing to add
  if (list_end != std::string_view::npos) {
    uint32_t at = line_start + static_cast<uint32_t>(list_end);
    return json{{"range", lsp_range(text, at, at)}, {"newText", ", " + d.code}};
  }
  uint32_t at = line_start + static_cast<uint32_t>(line.size());
  return json{{"range", lsp_range(text, at, at)}, {"newText", "  # noqa: " + d.code}};
}

std::optional<json> LanguageServer::fix_all_edit(Document& doc) {
  if (!doc.linted) return std::nullopt;
  std::vector<const Diagnostic*> fixable;
  for (const Diagnostic& d : doc.findings) {
    if (d.fix && !d.fix->unsafe) fixable.push_back(&d);
  }
  if (fixable.empty()) return std::nullopt;
  const std::string& before = doc.linted->text();
  FixResult fixed = apply_fixes(before, fixable);
  if (fixed.text == before) return std::nullopt;
  // One edit over the changed middle: fixes never overlap (apply_fixes skips those that
  // would), and a single edit cannot be applied half-way.
  size_t prefix = 0;
  while (prefix < before.size() && prefix < fixed.text.size() && before[prefix] == fixed.text[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < before.size() - prefix && suffix < fixed.text.size() - prefix &&
         before[before.size() - 1 - suffix] == fixed.text[fixed.text.size() - 1 - suffix]) {
    ++suffix;
  }
  // Keep the edit on UTF-8 sequence boundaries: never split a multi-byte character.
  auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  while (prefix > 0 && prefix < before.size() && continuation(before[prefix])) --prefix;
  while (suffix > 0 && continuation(before[before.size() - suffix])) --suffix;
  json edit = {
      {"range", lsp_range(*doc.linted, static_cast<uint32_t>(prefix), static_cast<uint32_t>(before.size() - suffix))},
      {"newText", fixed.text.substr(prefix, fixed.text.size() - suffix - prefix)}};
  return json{{"changes", {{doc.uri, json::array({edit})}}}};
}

std::optional<std::filesystem::path> LanguageServer::baseline_for(const std::filesystem::path& project) const {
  if (!baseline_) return std::nullopt;
  std::filesystem::path file(*baseline_);
  return (file.is_absolute() ? file : project / file).lexically_normal();
}

json LanguageServer::add_to_baseline(const json& args) {
  // Arguments, as the code action gives them: the document's URI, the rule, and the
  // finding's start position.
  if (!args.is_array() || args.size() < 3) {
    throw RequestError(rpc_error::kInvalidParams, "torchlint.addToBaseline needs a document, a rule and a position");
  }
  Document* doc = document(json{{"uri", args[0]}});
  if (!doc || !doc->linted)
    throw RequestError(rpc_error::kInvalidParams, "torchlint.addToBaseline: the document is not open");
  if (doc->cell) throw RequestError(rpc_error::kInvalidParams, "torchlint.addToBaseline: not for a notebook cell");
  auto file = baseline_for(doc->project);
  if (!file)
    throw RequestError(rpc_error::kInvalidParams, "torchlint.addToBaseline: no `baseline` in initializationOptions");
  const std::string code = args[1].get<std::string>();
  const Diagnostic* finding = nullptr;
  for (const Diagnostic& d : doc->findings) {
    if (d.code == code && to_lsp(*doc->linted, d, doc->uri)["range"]["start"] == args[2]) finding = &d;
  }
  if (!finding) throw RequestError(rpc_error::kInvalidParams, "torchlint.addToBaseline: no " + code + " finding there");
  // The entry as `check --write-baseline` would write it, merged into the file's entries.
  SourceFile source(finding->path, doc->linted->text());
  Baseline added = make_baseline({*finding}, {{finding->path, &source}}, file->parent_path());
  Baseline baseline;
  std::string error;
  std::error_code ec;
  if (std::filesystem::exists(*file, ec)) {
    auto existing = read_baseline(*file, error);
    if (!existing) throw RequestError(rpc_error::kRequestFailed, "torchlint: " + error);
    baseline = std::move(*existing);
  }
  for (const BaselineEntry& entry : added.entries) {
    auto at = std::lower_bound(baseline.entries.begin(), baseline.entries.end(), entry,
                               [](const BaselineEntry& a, const BaselineEntry& b) { return a.key() < b.key(); });
    if (at != baseline.entries.end() && at->key() == entry.key()) {
      at->count += entry.count;
    } else {
      baseline.entries.insert(at, entry);
    }
  }
  if (!cli::save_baseline(baseline, file->string(), error))
    throw RequestError(rpc_error::kRequestFailed, "torchlint: " + error);
  schedule(doc->project, Clock::now());  // the finding is known debt now: publish without it
  return nullptr;
}

json LanguageServer::execute_command(const json& params) {
  const std::string command = params.at("command").get<std::string>();
  if (command == kAddToBaselineCommand) return add_to_baseline(params.at("arguments"));
  if (command != kFixAllCommand) throw RequestError(rpc_error::kInvalidParams, "unknown command " + command);
  // Arguments: the document, as a URI or a TextDocumentIdentifier.
  const json& args = params.at("arguments");
  if (!args.is_array() || args.empty())
    throw RequestError(rpc_error::kInvalidParams, "torchlint.fixAll needs a document");
  json identifier = args[0].is_string() ? json{{"uri", args[0]}} : args[0];
  Document* doc = document(identifier);
  if (!doc) throw RequestError(rpc_error::kInvalidParams, "torchlint.fixAll: the document is not open");
  if (auto edit = fix_all_edit(*doc)) {
    // The client applies it; its answer is not waited for (the result arrives as didChange).
    writer_.write({{"jsonrpc", "2.0"},
                   {"id", "torchlint-" + std::to_string(next_request_id_++)},
                   {"method", "workspace/applyEdit"},
                   {"params", {{"label", "torchlint: fix all"}, {"edit", *edit}}}});
  }
  return nullptr;
}

json LanguageServer::hover(const json& params) {
  Document* doc = document(params.at("textDocument"));
  if (!doc || !(doc->lintable || doc->cell)) return nullptr;
  if (!doc->linted) return nullptr;
  const json& position = params.at("position");
  uint32_t at = doc->linted->offset_of({position.at("line").get<uint32_t>(), position.at("character").get<uint32_t>()},
                                       encoding_);
  std::string docs;
  std::optional<std::pair<uint32_t, uint32_t>> span;
  std::vector<std::string> shown;
  for (const Diagnostic& d : doc->findings) {
    auto [begin, end] = byte_range(*doc->linted, d);
    if (at < begin || at > end) continue;
    if (std::find(shown.begin(), shown.end(), d.code) != shown.end()) continue;
    const RuleInfo* rule = cli::registry().find(d.code);
    if (!rule || rule->doc.empty()) continue;
    shown.push_back(d.code);
    if (!docs.empty()) docs += "\n\n---\n\n";
    docs += rule->doc;
    if (!span) span = std::pair{begin, end};
  }
  if (docs.empty()) return nullptr;
  return {{"contents", {{"kind", "markdown"}, {"value", docs}}},
          {"range", lsp_range(*doc->linted, span->first, span->second)}};
}

}  // namespace torchlint::server
