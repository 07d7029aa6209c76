// notebookDocument/* (LSP 3.17): a Jupyter notebook synchronised cell by cell. Its code
// cells are linted as one module, in order, as `torchlint check` lints an .ipynb file,
// and each finding is published on the cell that holds it.
#include <algorithm>
#include <tuple>

#include "core/discovery.h"
#include "language_server.h"

namespace torchlint::server {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kCodeCell = 2;  // NotebookCellKind.Code

// A cell's text as module source: IPython magics and shell escapes (`%time`, `!pip`)
// become comments of the same length, so they neither break the parse nor move columns.
std::string as_module_source(std::string text) {
  bool line_start = true;
  for (char& c : text) {
    if (line_start && (c == '%' || c == '!')) c = '#';
    if (c == '\n') {
      line_start = true;
    } else if (c != ' ' && c != '\t') {
      line_start = false;
    }
  }
  if (!text.empty() && text.back() != '\n') text.push_back('\n');
  return text;
}

}  // namespace

void LanguageServer::open_cell(const json& item) {
  // A cell's text is kept like an open file's, but only its notebook is linted.
  Document doc;
  doc.uri = item.at("uri").get<std::string>();
  doc.text = TextDocument(item.at("text").get<std::string>(), item.value("version", int64_t{0}));
  doc.cell = true;
  documents_[doc.uri] = std::move(doc);
}

void LanguageServer::notebook_did_open(const json& params) {
  const json& notebook = params.at("notebookDocument");
  Notebook nb;
  auto path = path_from_uri(notebook.at("uri").get<std::string>());
  for (const auto& cell : notebook.at("cells")) {
    nb.cells.emplace_back(cell.at("document").get<std::string>(), cell.at("kind").get<int>() == kCodeCell);
  }
  for (const auto& item : params.value("cellTextDocuments", json::array())) open_cell(item);
  if (path) {
    nb.path = *path;
    nb.project = find_project_root(*path).path;
    schedule(nb.project, Clock::now());
  }
  notebooks_[notebook["uri"].get<std::string>()] = std::move(nb);
}

void LanguageServer::notebook_did_change(const json& params) {
  auto it = notebooks_.find(params.at("notebookDocument").at("uri").get<std::string>());
  if (it == notebooks_.end()) {
    log(2, "notebookDocument/didChange for a notebook that is not open");
    return;
  }
  Notebook& nb = it->second;
  const json& change = params.at("change");
  if (change.contains("cells") && change["cells"].is_object()) {
    const json& cells = change["cells"];
    if (cells.contains("structure")) {
      const json& structure = cells["structure"];
      const json& array = structure.at("array");
      size_t start = std::min<size_t>(array.at("start").get<size_t>(), nb.cells.size());
      size_t count = std::min<size_t>(array.at("deleteCount").get<size_t>(), nb.cells.size() - start);
      std::vector<std::pair<std::string, bool>> inserted;
      if (array.contains("cells")) {
        for (const auto& cell : array["cells"]) {
          inserted.emplace_back(cell.at("document").get<std::string>(), cell.at("kind").get<int>() == kCodeCell);
        }
      }
      nb.cells.erase(nb.cells.begin() + static_cast<std::ptrdiff_t>(start),
                     nb.cells.begin() + static_cast<std::ptrdiff_t>(start + count));
      nb.cells.insert(nb.cells.begin() + static_cast<std::ptrdiff_t>(start), inserted.begin(), inserted.end());
      for (const auto& item : structure.value("didOpen", json::array())) open_cell(item);
      for (const auto& item : structure.value("didClose", json::array())) {
        documents_.erase(item.at("uri").get<std::string>());
        notify("textDocument/publishDiagnostics", {{"uri", item["uri"]}, {"diagnostics", json::array()}});
      }
    }
    for (const auto& cell : cells.value("data", json::array())) {
      for (auto& [uri, code] : nb.cells) {
        if (uri == cell.at("document").get<std::string>()) code = cell.at("kind").get<int>() == kCodeCell;
      }
    }
    for (const auto& content : cells.value("textContent", json::array())) {
      auto doc = documents_.find(content.at("document").at("uri").get<std::string>());
      if (doc != documents_.end()) apply_changes(doc->second, content["document"], content.at("changes"));
    }
  }
  if (!nb.path.empty()) schedule(nb.project, Clock::now() + options_.debounce);
}

void LanguageServer::notebook_did_close(const json& params) {
  auto it = notebooks_.find(params.at("notebookDocument").at("uri").get<std::string>());
  if (it == notebooks_.end()) return;
  for (const auto& [uri, code] : it->second.cells) {
    documents_.erase(uri);
    if (code) notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}});
  }
  notebooks_.erase(it);
}

void LanguageServer::add_notebooks(LintJob& job) const {
  for (const auto& [uri, nb] : notebooks_) {
    if (nb.path.empty() || nb.project != job.project) continue;
    LintJob::NotebookPart part;
    // A module beside the notebook that exists only in the overlay.
    part.path = nb.path.string() + ".py";
    std::string module;
    uint32_t line = 1;
    for (const auto& [cell_uri, code] : nb.cells) {
      auto doc = documents_.find(cell_uri);
      if (!code || doc == documents_.end()) continue;
      std::string source = as_module_source(doc->second.text.text());
      part.cells.push_back({cell_uri, line, static_cast<uint32_t>(module.size()), doc->second.text.text()});
      line += static_cast<uint32_t>(std::count(source.begin(), source.end(), '\n'));
      module += source;
    }
    job.texts[part.path] = std::move(module);
    job.paths.push_back(part.path);
    job.notebooks.push_back(std::move(part));
  }
}

namespace {

// A range of the notebook's module in the lines of the cell that starts at module line
// `first` (the next cell at `next`); a range running past the cell ends at it.
std::pair<Position, Position> in_cell(Position start, Position end, uint32_t first, uint32_t next,
                                      const TextDocument& cell) {
  start.line -= first - 1;
  if (end.line >= next)
    end = {cell.line_count(), UINT32_MAX};
  else
    end.line -= first - 1;
  return {start, end};
}

}  // namespace

void LanguageServer::publish_notebook(const fs::path& project, const LintJob::NotebookPart& part,
                                      const std::vector<Diagnostic>& findings) {
  for (size_t i = 0; i < part.cells.size(); ++i) {
    const auto& cell = part.cells[i];
    uint32_t next = i + 1 < part.cells.size() ? part.cells[i + 1].first_line : UINT32_MAX;
    TextDocument text(cell.text, 0);
    json diagnostics = json::array();
    std::vector<Diagnostic> kept;  // the cell's findings in its own lines and bytes
    for (Diagnostic d : findings) {
      if (d.start.line < cell.first_line || d.start.line >= next) continue;
      std::tie(d.start, d.end) = in_cell(d.start, d.end, cell.first_line, next, text);
      d.statement_first_line = std::max(d.statement_first_line, cell.first_line) - (cell.first_line - 1);
      d.statement_last_line = std::min(d.statement_last_line, next - 1) - (cell.first_line - 1);
      if (d.fix) {
        // The fix's offsets are the module's: moved to the cell's. A fix that reaches
        // outside the cell (the module's own newline, another cell) is not offered.
        bool inside = true;
        for (auto& e : d.fix->edits) {
          inside =
              inside && e.start >= cell.first_byte && e.end >= e.start && e.end - cell.first_byte <= cell.text.size();
          if (!inside) break;
          e.start -= cell.first_byte;
          e.end -= cell.first_byte;
        }
        if (!inside) d.fix.reset();
      }
      json diagnostic = to_lsp(text, d, "");
      // A related location may be in another cell: it gets that cell's URI and lines.
      json related = json::array();
      for (const auto& r : d.related) {
        for (size_t j = 0; j < part.cells.size(); ++j) {
          const auto& other = part.cells[j];
          uint32_t other_next = j + 1 < part.cells.size() ? part.cells[j + 1].first_line : UINT32_MAX;
          if (r.start.line < other.first_line || r.start.line >= other_next) continue;
          TextDocument other_text(other.text, 0);
          auto [start, end] = in_cell(r.start, r.end, other.first_line, other_next, other_text);
          related.push_back({{"location", lsp_location(other_text, other.uri, start, end)}, {"message", r.message}});
          break;
        }
      }
      if (!related.empty()) diagnostic["relatedInformation"] = std::move(related);
      diagnostics.push_back(std::move(diagnostic));
      kept.push_back(std::move(d));
    }
    if (auto doc = documents_.find(cell.uri); doc != documents_.end()) {
      doc->second.project = project;
      doc->second.linted = std::move(text);
      doc->second.findings = std::move(kept);
    }
    notify("textDocument/publishDiagnostics", {{"uri", cell.uri}, {"diagnostics", std::move(diagnostics)}});
  }
}

}  // namespace torchlint::server
