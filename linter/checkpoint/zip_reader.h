#pragma once
// A zip reader with PyTorch's semantics (caffe2's PyTorchStreamReader over miniz), not
// Python's: entries and sizes come from the central directory, a member's data starts
// after its local header's own name and extra field, CRCs and local flags are not
// enforced, ZIP64 and data descriptors are read. Every place where another reasonable
// reader (Python's zipfile, a streaming reader) would see something different is
// reported as an ambiguity (TL812) instead of being silently resolved one way; structure
// miniz itself refuses is malformed (TL813).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bytes.h"
#include "issues.h"

namespace torchlint::ckpt {

struct ZipEntry {
  std::string_view name;  // central directory name (a view into the file)
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t header_offset = 0;  // local file header
  uint64_t data_offset = 0;    // from the local header's lengths
  // Why torch could not read this member: encrypted, bad local header...
  enum class Problem : uint8_t { kNone, kEncrypted, kMethod, kNoLocalHeader, kPastEnd };
  Problem problem = Problem::kNone;
  bool readable() const { return problem == Problem::kNone; }
  std::string unreadable() const;  // the problem, in words
  bool stored() const { return method == 0; }
};

// Hashing and comparing names case-insensitively (ASCII), as miniz compares them.
struct FoldedHash {
  size_t operator()(std::string_view s) const noexcept;
};
struct FoldedEqual {
  bool operator()(std::string_view a, std::string_view b) const noexcept;
};

class ZipArchive {
 public:
  // Parses the archive. Returns nullopt when miniz would refuse the whole archive (the
  // reason is a fatal TL813 issue); ambiguities go to `issues` either way.
  // `release(offset, length)`, when given, is told which parts of the file the reader
  // is done with (its local-header pass touches every member), so a memory-mapped
  // caller can drop those pages again.
  static std::optional<ZipArchive> read(Bytes file, std::vector<Issue>& issues,
                                        const std::function<void(uint64_t, uint64_t)>& release = {});

  const std::vector<ZipEntry>& entries() const { return entries_; }
  // miniz's lookup as torch calls it (flags 0): case-insensitive, first match.
  const ZipEntry* find(std::string_view name) const;
  const ZipEntry* find_exact(std::string_view name) const;
  size_t index_of(const ZipEntry& entry) const { return static_cast<size_t>(&entry - entries_.data()); }

  // A member's bytes: a view for stored members, inflated into `buffer` otherwise (at
  // most `max_size` bytes). nullopt with `error` set when torch could not read it either.
  std::optional<Bytes> read(const ZipEntry& entry, std::string& buffer, uint64_t max_size, std::string& error) const;
  // The member's compressed (or stored) bytes.
  Bytes raw(const ZipEntry& entry) const { return file_.substr(entry.data_offset, entry.compressed_size); }

  uint64_t central_directory_offset() const { return cd_offset_; }
  bool zip64() const { return zip64_; }

 private:
  Bytes file_;
  std::vector<ZipEntry> entries_;
  // Open-addressing table of entry indices keyed by the case-folded name: one probe
  // sequence per lookup, no allocation per entry (archives have 200 000 members).
  std::vector<uint32_t> folded_;
  // The first entry whose name equals `name` case-insensitively, inserting `insert`
  // when there is none (pass kNone to only look).
  uint32_t folded_find(std::string_view name) const;
  uint32_t folded_insert(uint32_t index);  // returns the earlier entry of that name, or kNone
  static constexpr uint32_t kNone = 0xffffffffu;
  uint64_t cd_offset_ = 0;
  bool zip64_ = false;
  // Entry names copied out of a large central directory, so that a mapped caller can drop
  // the directory's pages (the names are a fraction of its bytes).
  std::unique_ptr<char[]> names_;
};

// Deflate can expand at most ~1032:1; a member claiming more is lying about its size.
inline constexpr uint64_t kMaxDeflateRatio = 1032;
// What a real pickle or small record inflates to: pickles of state dicts compress 3-20x
// (torch.save stores them uncompressed anyway). A member that declares more than this
// ratio *and* more than kPlausibleInflateFloor is a bomb, refused before inflating.
inline constexpr uint64_t kPlausibleInflateRatio = 64;
inline constexpr uint64_t kPlausibleInflateFloor = 64ull << 20;

}  // namespace torchlint::ckpt
