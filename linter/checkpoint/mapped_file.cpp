#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace torchlint::ckpt {

std::string printable(Bytes b, size_t max) {
  std::string out = "\"";
  size_t n = 0;
  for (char c : b) {
    if (n++ == max) {
      out += "...";
      break;
    }
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out + "\"";
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, std::string& error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    error = std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  if (!S_ISREG(st.st_mode)) {
    error = S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file";
    ::close(fd);
    return nullptr;
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->size_ = static_cast<uint64_t>(st.st_size);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      error = std::string("cannot map: ") + std::strerror(errno);
      ::close(fd);
      return nullptr;
    }
    file->data_ = p;
    file->mapped_ = true;
    // No read-ahead hint: the kernel maps cached pages around each fault (cheap for the
    // pickle and the zip headers), and pages that are never touched are never read.
  }
  ::close(fd);
  return file;
}

std::shared_ptr<const MappedFile> MappedFile::from_string(std::string bytes) {
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->owned_ = std::move(bytes);
  file->data_ = file->owned_.data();
  file->size_ = file->owned_.size();
  return file;
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<void*>(data_), size_);
}

namespace {
void advise(const void* base, uint64_t size, uint64_t offset, uint64_t length, int advice) {
  if (!base || offset >= size) return;
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uint64_t begin = offset / page * page;
  uint64_t end = std::min(size, offset + length);
  if (end <= begin) return;
  ::madvise(static_cast<char*>(const_cast<void*>(base)) + begin, end - begin, advice);
}
}  // namespace

void MappedFile::advise_sequential(uint64_t offset, uint64_t length) const {
  if (!mapped_) return;
  advise(data_, size_, offset, length, MADV_SEQUENTIAL);
  advise(data_, size_, offset, length, MADV_WILLNEED);
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux >= 5.14; older kernels return EINVAL, harmlessly
#endif
  // Map the whole range at once instead of one page fault per 4 KiB.
  advise(data_, size_, offset, length, MADV_POPULATE_READ);
}

void MappedFile::advise_done(uint64_t offset, uint64_t length) const {
  if (!mapped_) return;
  advise(data_, size_, offset, length, MADV_DONTNEED);
}

}  // namespace torchlint::ckpt
