#include "source_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace torchlint {

SourceFile::SourceFile(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {
  line_starts_.push_back(0);
  const char* data = text_.data();
  const size_t n = text_.size();
  // memchr is much faster than a byte loop; a lone '\r' (old Mac line ending) is rare
  // enough that files holding one take the slow path.
  if (std::memchr(data, '\r', n) == nullptr) {
    for (const char* p = data;
         (p = static_cast<const char*>(std::memchr(p, '\n', n - static_cast<size_t>(p - data))));) {
      ++p;
      line_starts_.push_back(static_cast<uint32_t>(p - data));
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    if (data[i] == '\n') {
      line_starts_.push_back(static_cast<uint32_t>(i + 1));
    } else if (data[i] == '\r' && (i + 1 >= n || data[i + 1] != '\n')) {
      line_starts_.push_back(static_cast<uint32_t>(i + 1));  // old Mac line ending
    }
  }
}

std::optional<std::string> read_file_bytes(const std::string& path, std::string& error) {
  // open() + fstat() rather than iostreams: we must refuse FIFOs and devices before
  // reading (a FIFO would block forever) and report errno precisely.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = std::strerror(errno);
    ::close(fd);
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    error = "is a directory";
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    error = "not a regular file";
    return std::nullopt;
  }
  if (st.st_size > 0xFFFFFFF0LL) {
    ::close(fd);
    error = "file too large (over 4 GiB)";
    return std::nullopt;
  }
  std::string text;
  text.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < text.size()) {
    ssize_t r = ::read(fd, text.data() + got, text.size() - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      error = std::strerror(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (r == 0) break;  // file shrank while we read it
    got += static_cast<size_t>(r);
  }
  text.resize(got);
  ::close(fd);
  return text;
}

std::optional<SourceFile> SourceFile::read(const std::string& path, std::string& error, std::string display) {
  auto text = read_file_bytes(path, error);
  if (!text) return std::nullopt;
  return SourceFile(display.empty() ? path : std::move(display), std::move(*text));
}

uint32_t SourceFile::line_of(uint32_t byte_offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), byte_offset);
  return static_cast<uint32_t>(it - line_starts_.begin());
}

std::string_view SourceFile::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  size_t begin = line_starts_[line - 1];
  size_t end = line < line_starts_.size() ? line_starts_[line] : text_.size();
  while (end > begin && (text_[end - 1] == '\n' || text_[end - 1] == '\r')) --end;
  return std::string_view(text_).substr(begin, end - begin);
}

Position SourceFile::position(uint32_t byte_offset) const {
  byte_offset = std::min<uint32_t>(byte_offset, static_cast<uint32_t>(text_.size()));
  Position pos;
  pos.line = line_of(byte_offset);
  uint32_t column = 1;
  for (uint32_t i = line_starts_[pos.line - 1]; i < byte_offset; ++i) {
    // Count code points: every byte that is not a UTF-8 continuation byte starts one.
    if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++column;
  }
  pos.column = column;
  return pos;
}

std::optional<Utf8Error> SourceFile::find_invalid_utf8() const {
  const auto* s = reinterpret_cast<const unsigned char*>(text_.data());
  const size_t n = text_.size();
  size_t i = 0;
  while (i < n) {
    // Source code is mostly ASCII: skip it eight bytes at a time.
    while (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, s + i, 8);
      if (word & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= n) break;
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t min = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      min = 0x10000;
    } else {
      return Utf8Error{static_cast<uint32_t>(i), c};
    }
    if (i + len > n) return Utf8Error{static_cast<uint32_t>(i), c};
    uint32_t cp = c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return Utf8Error{static_cast<uint32_t>(i), c};
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid too.
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return Utf8Error{static_cast<uint32_t>(i), c};
    }
    i += len;
  }
  return std::nullopt;
}

std::optional<uint32_t> SourceFile::find_nul(size_t window) const {
  size_t n = std::min(window, text_.size());
  const void* p = std::memchr(text_.data(), 0, n);
  if (!p) return std::nullopt;
  return static_cast<uint32_t>(static_cast<const char*>(p) - text_.data());
}

}  // namespace torchlint
