#pragma once
// An open editor buffer: its text, its version, and the conversions between LSP positions
// (0-based line, character counted in the negotiated encoding) and byte offsets.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace torchlint::server {

// How LSP counts a line's characters: UTF-16 code units (the protocol's default), UTF-8
// bytes, or code points (UTF-32); see LSP 3.17 `PositionEncodingKind`.
enum class PositionEncoding { kUtf16, kUtf8, kUtf32 };

struct LspPosition {
  uint32_t line = 0;
  uint32_t character = 0;
};

class TextDocument {
 public:
  TextDocument() = default;
  TextDocument(std::string text, int64_t version);

  const std::string& text() const { return text_; }
  int64_t version() const { return version_; }
  void set_version(int64_t v) { version_ = v; }
  void replace_all(std::string text);

  // Replaces the text between two positions (a didChange range). Positions past the end of
  // a line or of the file are clamped, as the protocol asks. Returns false, changing
  // nothing, when `from` comes after `to`.
  bool replace(LspPosition from, LspPosition to, std::string_view text, PositionEncoding encoding);

  // Byte offset of a position (clamped to the line's end and the file's end).
  uint32_t offset_of(LspPosition position, PositionEncoding encoding) const;
  // Position of a byte offset (clamped to the file's end).
  LspPosition position_of(uint32_t offset, PositionEncoding encoding) const;
  // Byte offset of a 1-based line and code-point column, as torchlint's findings count.
  uint32_t offset_of_line_column(uint32_t line, uint32_t column) const;

  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }
  // Byte range of a 0-based line without its terminator.
  std::string_view line(uint32_t index) const;

 private:
  void index_lines();
  std::string text_;
  int64_t version_ = 0;
  std::vector<uint32_t> line_starts_;
};

}  // namespace torchlint::server
