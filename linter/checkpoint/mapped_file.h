#pragma once
// A read-only memory map of one file. The inspector never reads a whole checkpoint into
// memory: it maps it, reads the zip directory and the pickles through the map, and
// touches tensor bytes only for a value scan. Pages never touched are never read.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "bytes.h"

namespace torchlint::ckpt {

class MappedFile {
 public:
  // Maps `path` read-only. Only regular files are mapped (FIFOs, devices and directories
  // are refused with a one-line reason in `error`). An empty file maps to empty bytes.
  static std::shared_ptr<const MappedFile> open(const std::string& path, std::string& error);
  // Wraps bytes already in memory (tests, inflated zip members).
  static std::shared_ptr<const MappedFile> from_string(std::string bytes);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  Bytes bytes() const { return {static_cast<const char*>(data_), size_}; }
  uint64_t size() const { return size_; }
  // Hints that [offset, offset + length) will be read sequentially soon (value scans).
  void advise_sequential(uint64_t offset, uint64_t length) const;
  // Hints that the range will not be needed again (lets the kernel drop the pages).
  void advise_done(uint64_t offset, uint64_t length) const;

 private:
  MappedFile() = default;
  const void* data_ = nullptr;
  uint64_t size_ = 0;
  bool mapped_ = false;
  std::string owned_;
};

}  // namespace torchlint::ckpt
