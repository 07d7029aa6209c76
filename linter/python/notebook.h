#pragma once
// Jupyter notebooks: the code cells as one Python module, and the way back from a line of
// that module to its cell, its line in the cell and its line in the .ipynb file.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace torchlint::python {

struct NotebookLine {
  uint32_t cell = 0;          // 1-based, counting every cell (as Jupyter shows them)
  uint32_t line_in_cell = 0;  // 1-based
  uint32_t file_line = 0;     // 1-based line of the .ipynb file holding it (0: unknown)
  uint32_t file_column = 0;   // column of the line's first character in the file
};

struct NotebookSource {
  std::string python;               // code cells, magics and shell escapes neutralised
  std::vector<NotebookLine> lines;  // one per line of `python`
  std::string language;             // set (and `python` empty) for another kernel's notebook
};

// nullopt with `error` for files that are not notebooks (invalid JSON, no cells).
std::optional<NotebookSource> extract_notebook(std::string_view ipynb, std::string& error);

}  // namespace torchlint::python
