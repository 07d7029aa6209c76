#include "notebook.h"

#include <nlohmann/json.hpp>

#include "core/text.h"

namespace torchlint::python {

namespace {

// IPython syntax that is not Python: line magics (%time), shell escapes (!pip), help (?x,
// x?) and cell magics (%%bash). They become `pass` at the same indentation, so the module
// keeps its shape and line numbers.
bool is_ipython_syntax(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos) return false;
  char c = line[i];
  if (c == '%' || c == '!' || c == '?') return true;
  std::string_view rest = line.substr(i);
  // `files = !ls`, `old_path = %env PATH`: a magic's output assigned to names.
  size_t eq = rest.find('=');
  if (eq != std::string_view::npos && eq > 0 && eq + 1 < rest.size() && rest[eq + 1] != '=') {
    std::string_view target = rest.substr(0, eq);
    bool names_only =
        target.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_., \t") ==
        std::string_view::npos;
    size_t value = rest.find_first_not_of(" \t", eq + 1);
    if (names_only && value != std::string_view::npos && (rest[value] == '%' || rest[value] == '!')) return true;
  }
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r' || rest.back() == ' ')) rest.remove_suffix(1);
  return !rest.empty() && rest.back() == '?' && rest.find('#') == std::string_view::npos;
}

// Finds, in the raw JSON text, the line and column where each element of the `source`
// array of successive cells starts. Scans strings honouring escapes; returns false when
// the layout is not what Jupyter writes (then positions fall back to unknown).
struct SourceScanner {
  std::string_view text;
  size_t pos = 0;
  uint32_t line = 1;
  size_t line_start = 0;

  void advance(size_t to) {
    for (; pos < to && pos < text.size(); ++pos) {
      if (text[pos] == '\n') {
        ++line;
        line_start = pos + 1;
      }
    }
  }
  bool skip_string() {  // at '"'
    advance(pos + 1);
    while (pos < text.size()) {
      char c = text[pos];
      if (c == '\\') {
        advance(pos + 2);
        continue;
      }
      advance(pos + 1);
      if (c == '"') return true;
    }
    return false;
  }
  void skip_space() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' || text[pos] == '\r' || text[pos] == '\t'))
      advance(pos + 1);
  }
  // Positions (line, column of the first character inside the quotes) of the next cell's
  // source elements.
  bool next_source(std::vector<std::pair<uint32_t, uint32_t>>& out) {
    size_t key = text.find("\"source\"", pos);
    if (key == std::string_view::npos) return false;
    advance(key + 8);
    skip_space();
    if (pos >= text.size() || text[pos] != ':') return false;
    advance(pos + 1);
    skip_space();
    auto record = [&] { out.emplace_back(line, static_cast<uint32_t>(pos - line_start + 2)); };
    if (pos < text.size() && text[pos] == '"') {
      record();
      return skip_string();
    }
    if (pos >= text.size() || text[pos] != '[') return false;
    advance(pos + 1);
    for (;;) {
      skip_space();
      if (pos >= text.size()) return false;
      if (text[pos] == ']') {
        advance(pos + 1);
        return true;
      }
      if (text[pos] == ',') {
        advance(pos + 1);
        continue;
      }
      if (text[pos] != '"') return false;
      record();
      if (!skip_string()) return false;
    }
  }
};

}  // namespace

std::optional<NotebookSource> extract_notebook(std::string_view ipynb, std::string& error) {
  auto doc = nlohmann::json::parse(ipynb, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    error = "not a Jupyter notebook (invalid JSON)";
    return std::nullopt;
  }
  auto cells = doc.find("cells");
  if (cells == doc.end() || !cells->is_array()) {
    error = "not a Jupyter notebook (no `cells` list; nbformat 3 is not supported)";
    return std::nullopt;
  }
  NotebookSource nb;
  // A notebook of another kernel (C++ through xeus-cling, R, Julia) holds no Python: it is
  // skipped, as other Python linters skip it.
  if (auto metadata = doc.find("metadata"); metadata != doc.end() && metadata->is_object()) {
    std::string language;
    if (auto info = metadata->find("language_info"); info != metadata->end() && info->is_object()) {
      language = info->value("name", "");
    }
    if (auto spec = metadata->find("kernelspec"); language.empty() && spec != metadata->end() && spec->is_object()) {
      language = spec->value("language", "");
    }
    if (!language.empty() && ascii_lower(language) != "python") {
      nb.language = language;
      return nb;
    }
  }
  SourceScanner scanner{ipynb};
  bool positions_ok = true;
  uint32_t cell_number = 0;
  for (const auto& cell : *cells) {
    ++cell_number;
    std::vector<std::pair<uint32_t, uint32_t>> element_positions;
    if (positions_ok) positions_ok = scanner.next_source(element_positions);
    if (!cell.is_object() || cell.value("cell_type", "") != "code") continue;
    std::vector<std::string> elements;
    auto source = cell.find("source");
    if (source == cell.end()) continue;
    if (source->is_string()) {
      elements.push_back(source->get<std::string>());
    } else if (source->is_array()) {
      for (const auto& e : *source) {
        if (e.is_string()) elements.push_back(e.get<std::string>());
      }
    }
    if (element_positions.size() != elements.size()) positions_ok = false;
    bool cell_magic = !elements.empty() && elements.front().starts_with("%%");
    uint32_t line_in_cell = 0;
    for (size_t k = 0; k < elements.size(); ++k) {
      std::string_view element = elements[k];
      // An element normally holds one line; tolerate several.
      size_t start = 0;
      uint32_t within = 0;
      while (start < element.size()) {
        size_t eol = element.find('\n', start);
        size_t end = eol == std::string_view::npos ? element.size() : eol + 1;
        std::string_view line = element.substr(start, end - start);
        if (cell_magic || is_ipython_syntax(line)) {
          size_t indent = line.find_first_not_of(" \t");
          nb.python += std::string(line.substr(0, indent == std::string_view::npos ? 0 : indent)) + "pass\n";
        } else {
          nb.python += line;
          if (line.empty() || line.back() != '\n') nb.python += '\n';
        }
        NotebookLine origin;
        origin.cell = cell_number;
        origin.line_in_cell = ++line_in_cell;
        if (positions_ok && k < element_positions.size()) {
          origin.file_line = element_positions[k].first;
          origin.file_column = element_positions[k].second;
        }
        nb.lines.push_back(origin);
        ++within;
        start = end;
      }
    }
    // Cells are separate statements: a blank line keeps a dangling block from spilling.
    nb.python += '\n';
    nb.lines.push_back(NotebookLine{cell_number, line_in_cell + 1, 0, 0});
  }
  return nb;
}

}  // namespace torchlint::python
