#include "text_document.h"

#include <algorithm>

namespace torchlint::server {

namespace {

// Length in bytes of the UTF-8 sequence starting with `lead` (1 for stray bytes, so an
// invalid file still advances one byte at a time and never reads past the line).
uint32_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

// How many units of `encoding` one code point of `bytes` UTF-8 bytes takes.
uint32_t units(uint32_t bytes, PositionEncoding encoding) {
  switch (encoding) {
    case PositionEncoding::kUtf8:
      return bytes;
    case PositionEncoding::kUtf32:
      return 1;
    case PositionEncoding::kUtf16:
      return bytes == 4 ? 2 : 1;  // outside the BMP: a surrogate pair
  }
  return 1;
}

}  // namespace

TextDocument::TextDocument(std::string text, int64_t version) : text_(std::move(text)), version_(version) {
  index_lines();
}

void TextDocument::replace_all(std::string text) {
  text_ = std::move(text);
  index_lines();
}

void TextDocument::index_lines() {
  line_starts_.assign(1, 0);
  for (size_t i = 0; i < text_.size(); ++i) {
    // "\r\n", "\n" and a lone "\r" all end a line for LSP.
    if (text_[i] == '\n' || (text_[i] == '\r' && (i + 1 >= text_.size() || text_[i + 1] != '\n'))) {
      line_starts_.push_back(static_cast<uint32_t>(i + 1));
    }
  }
}

std::string_view TextDocument::line(uint32_t index) const {
  if (index >= line_starts_.size()) return {};
  size_t begin = line_starts_[index];
  size_t end = index + 1 < line_starts_.size() ? line_starts_[index + 1] : text_.size();
  while (end > begin && (text_[end - 1] == '\n' || text_[end - 1] == '\r')) --end;
  return std::string_view(text_).substr(begin, end - begin);
}

uint32_t TextDocument::offset_of(LspPosition position, PositionEncoding encoding) const {
  if (position.line >= line_starts_.size()) return static_cast<uint32_t>(text_.size());
  std::string_view text = line(position.line);
  uint32_t counted = 0, byte = 0;
  while (byte < text.size() && counted < position.character) {
    uint32_t len = std::min<uint32_t>(sequence_length(static_cast<unsigned char>(text[byte])),
                                      static_cast<uint32_t>(text.size()) - byte);
    counted += units(len, encoding);
    byte += len;
  }
  return line_starts_[position.line] + byte;
}

LspPosition TextDocument::position_of(uint32_t offset, PositionEncoding encoding) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text_.size()));
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  uint32_t line_index = static_cast<uint32_t>(it - line_starts_.begin()) - 1;
  std::string_view text = line(line_index);
  uint32_t target = std::min<uint32_t>(offset - line_starts_[line_index], static_cast<uint32_t>(text.size()));
  uint32_t counted = 0, byte = 0;
  while (byte < target) {
    uint32_t len = std::min<uint32_t>(sequence_length(static_cast<unsigned char>(text[byte])),
                                      static_cast<uint32_t>(text.size()) - byte);
    counted += units(len, encoding);
    byte += len;
  }
  return {line_index, counted};
}

uint32_t TextDocument::offset_of_line_column(uint32_t line_number, uint32_t column) const {
  if (line_number == 0) line_number = 1;
  return offset_of({line_number - 1, column > 0 ? column - 1 : 0}, PositionEncoding::kUtf32);
}

bool TextDocument::replace(LspPosition from, LspPosition to, std::string_view text, PositionEncoding encoding) {
  uint32_t begin = offset_of(from, encoding), end = offset_of(to, encoding);
  if (begin > end) return false;
  text_.replace(begin, end - begin, text);
  index_lines();
  return true;
}

}  // namespace torchlint::server
