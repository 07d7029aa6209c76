#pragma once
// A file's bytes plus what every consumer needs to turn byte offsets into positions.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace torchlint {

// 1-based line and column; columns count Unicode code points, as SARIF's
// "unicodeCodePoints" column kind and Ruff do.
struct Position {
  uint32_t line = 1;
  uint32_t column = 1;
};

struct Utf8Error {
  uint32_t offset = 0;  // byte offset of the first invalid byte
  uint8_t byte = 0;
};

// Reads a whole regular file. On failure returns nullopt and sets `error` to a one-line
// reason ("is a directory", "not a regular file", errno's text). FIFOs and devices are
// refused before any read, so a stray pipe cannot block a run.
std::optional<std::string> read_file_bytes(const std::string& path, std::string& error);

class SourceFile {
 public:
  SourceFile(std::string path, std::string text);

  // Reads a whole file. On failure returns nullopt and sets `error` to a one-line reason.
  // `display` names the file in diagnostics (defaults to `path`).
  static std::optional<SourceFile> read(const std::string& path, std::string& error, std::string display = {});

  const std::string& path() const { return path_; }
  std::string_view text() const { return text_; }
  size_t line_count() const { return line_starts_.size(); }

  Position position(uint32_t byte_offset) const;
  uint32_t line_of(uint32_t byte_offset) const;
  // The text of a 1-based line without its line terminator.
  std::string_view line_text(uint32_t line) const;
  uint32_t line_start(uint32_t line) const { return line_starts_[line - 1]; }

  // First invalid UTF-8 sequence, if any.
  std::optional<Utf8Error> find_invalid_utf8() const;
  // Offset of the first NUL byte within the first `window` bytes (binary files).
  std::optional<uint32_t> find_nul(size_t window = 8192) const;

 private:
  std::string path_;
  std::string text_;
  std::vector<uint32_t> line_starts_;
};

}  // namespace torchlint
