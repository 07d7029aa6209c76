#include "zip_reader.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "core/text.h"
#include "inflate.h"

namespace torchlint::ckpt {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr uint32_t kDescriptorSig = 0x08074b50;
constexpr size_t kEndSize = 22;
constexpr size_t kCentralSize = 46;
constexpr size_t kLocalSize = 30;

constexpr uint16_t kFlagEncrypted = 0x1;
constexpr uint16_t kFlagDescriptor = 0x8;
constexpr uint16_t kFlagPatched = 0x20;
constexpr uint16_t kFlagStrongEncryption = 0x40;
constexpr uint16_t kFlagUtf8 = 0x800;
constexpr uint16_t kFlagMaskedLocal = 0x2000;

std::string show(std::string_view name) { return printable(name, 80); }

// The ZIP64 extended information extra field supplies the saturated values, in order.
bool apply_zip64_extra(Bytes extra, ZipEntry& e, bool need_size, bool need_csize, bool need_offset) {
  ByteReader r(extra);
  while (r.remaining() >= 4) {
    uint64_t id = *r.le(2), len = *r.le(2);
    auto body = r.take(len);
    if (!body) return false;
    if (id != 0x0001) continue;
    ByteReader f(*body);
    if (need_size) {
      auto v = f.le(8);
      if (!v) return false;
      e.size = *v;
    }
    if (need_csize) {
      auto v = f.le(8);
      if (!v) return false;
      e.compressed_size = *v;
    }
    if (need_offset) {
      auto v = f.le(8);
      if (!v) return false;
      e.header_offset = *v;
    }
    return true;
  }
  return !(need_size || need_csize || need_offset);
}

bool bad_path(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find('\\') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    return true;
  }
  if (name.size() >= 2 && name[1] == ':') return true;  // a drive letter
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    if (slash == std::string_view::npos) slash = name.size();
    if (name.substr(start, slash - start) == "..") return true;
    start = slash + 1;
  }
  return false;
}

}  // namespace

std::string ZipEntry::unreadable() const {
  switch (problem) {
    case Problem::kNone:
      return "";
    case Problem::kEncrypted: {
      char buf[80];
      std::snprintf(buf, sizeof buf, "encrypted or patched data (general purpose flags 0x%x)", flags);
      return buf;
    }
    case Problem::kMethod:
      return "compression method " + std::to_string(method) + " (torch reads only stored and deflated members)";
    case Problem::kNoLocalHeader:
      return "no local file header at offset " + std::to_string(header_offset);
    case Problem::kPastEnd:
      return "data runs past the end of the file";
  }
  return "";
}

size_t FoldedHash::operator()(std::string_view s) const noexcept {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the lower-cased bytes
  for (char c : s) h = (h ^ static_cast<unsigned char>(ascii_lower_char(c))) * 1099511628211ull;
  return static_cast<size_t>(h);
}

bool FoldedEqual::operator()(std::string_view a, std::string_view b) const noexcept { return ascii_iequals(a, b); }

std::optional<ZipArchive> ZipArchive::read(Bytes file, std::vector<Issue>& issues,
                                           const std::function<void(uint64_t, uint64_t)>& release) {
  IssueSink sink(issues);
  ZipArchive zip;
  zip.file_ = file;
  const uint64_t size = file.size();
  auto fatal = [&](std::string message) -> std::optional<ZipArchive> {
    sink.malformed("zip", std::move(message), true);
    return std::nullopt;
  };
  if (size < kEndSize)
    return fatal("zip archive of " + std::to_string(size) + " bytes has no end of central directory record");

  // 1. End of central directory: the last signature in the final 64 KiB + 22 bytes, as
  //    both miniz and Python's zipfile pick it.
  uint64_t window_start = size > kEndSize + 0xFFFF ? size - kEndSize - 0xFFFF : 0;
  std::optional<uint64_t> eocd;
  size_t consistent_candidates = 0;
  for (uint64_t pos = size - kEndSize + 1; pos-- > window_start;) {
    if (le32(file.data() + pos) != kEndSig) continue;
    uint64_t comment = le16(file.data() + pos + 20);
    if (!eocd) eocd = pos;
    if (pos + kEndSize + comment == size) ++consistent_candidates;
  }
  if (!eocd) return fatal("no end of central directory record: not a complete zip archive (truncated?)");
  const char* end = file.data() + *eocd;
  uint64_t comment_length = le16(end + 20);
  if (*eocd + kEndSize + comment_length != size) {
    sink.ambiguous("trailing", std::to_string(size - std::min(size, *eocd + kEndSize + comment_length)) +
                                   " bytes after the end of the zip archive (or a comment length that does not match): "
                                   "readers that search for the end record differently see different archives");
  }
  if (consistent_candidates > 1) {
    sink.ambiguous("eocd", "several end of central directory records: readers may pick different ones");
  }
  uint64_t disk = le16(end + 4), cd_disk = le16(end + 6);
  uint64_t entries_here = le16(end + 8), entries_total = le16(end + 10);
  uint64_t cd_size = le32(end + 12), cd_offset = le32(end + 16);
  uint64_t directory_end_position = *eocd;  // where Python expects the directory to end

  // 2. ZIP64: the locator sits right before the end record.
  if (*eocd >= 20 && le32(file.data() + *eocd - 20) == kEnd64LocatorSig) {
    uint64_t record = le64(file.data() + *eocd - 20 + 8);
    if (!range_fits(record, 56, size) || le32(file.data() + record) != kEnd64Sig) {
      return fatal("ZIP64 locator points to offset " + std::to_string(record) + ", where there is no ZIP64 end record");
    }
    const char* e64 = file.data() + record;
    zip.zip64_ = true;
    uint64_t disk64 = le32(e64 + 16), cd_disk64 = le32(e64 + 20);
    uint64_t here64 = le64(e64 + 24), total64 = le64(e64 + 32), size64 = le64(e64 + 40), offset64 = le64(e64 + 48);
    // miniz replaces only the saturated fields; Python's zipfile takes all ZIP64 values.
    auto merge = [&](uint64_t& field, uint64_t saturated, uint64_t value, const char* what) {
      if (field == saturated) {
        field = value;
      } else if (field != value) {
        sink.ambiguous("zip64", std::string("the end record and the ZIP64 end record disagree on the ") + what + " (" +
                                    std::to_string(field) + " vs " + std::to_string(value) +
                                    "): torch uses the first, Python's zipfile the second");
      }
    };
    merge(disk, 0xFFFF, disk64, "disk number");
    merge(cd_disk, 0xFFFF, cd_disk64, "directory disk");
    merge(entries_here, 0xFFFF, here64, "entry count");
    merge(entries_total, 0xFFFF, total64, "entry count");
    merge(cd_size, 0xFFFFFFFF, size64, "directory size");
    merge(cd_offset, 0xFFFFFFFF, offset64, "directory offset");
    directory_end_position = record;
  }
  if (disk != 0 || cd_disk != 0 || entries_here != entries_total)
    return fatal("multi-disk zip archives are not supported by torch");
  if (!range_fits(cd_offset, cd_size, size)) {
    return fatal("central directory (" + std::to_string(cd_size) + " bytes at offset " + std::to_string(cd_offset) +
                 ") lies outside the file: truncated?");
  }
  if (cd_offset + cd_size != directory_end_position) {
    sink.ambiguous("concat", "the central directory does not end where the end record is (" +
                                 std::to_string(cd_offset + cd_size) + " vs " + std::to_string(directory_end_position) +
                                 "): Python's zipfile shifts every offset to compensate, torch does not");
  }
  if (entries_total > cd_size / kCentralSize) {
    return fatal("end record counts " + std::to_string(entries_total) + " entries, more than a " +
                 std::to_string(cd_size) + "-byte central directory can hold");
  }
  zip.cd_offset_ = cd_offset;

  // 3. Central directory entries.
  zip.entries_.reserve(entries_total);
  ByteReader cd(file.substr(cd_offset, cd_size));
  for (uint64_t i = 0; i < entries_total; ++i) {
    size_t at = cd.pos();
    auto fixed = cd.take(kCentralSize);
    if (!fixed || le32(fixed->data()) != kCentralSig) {
      return fatal("central directory entry " + std::to_string(i) + " at offset " + std::to_string(cd_offset + at) +
                   " is corrupt");
    }
    const char* h = fixed->data();
    ZipEntry e;
    e.flags = le16(h + 8);
    e.method = le16(h + 10);
    e.crc = le32(h + 16);
    e.compressed_size = le32(h + 20);
    e.size = le32(h + 24);
    uint64_t name_len = le16(h + 28), extra_len = le16(h + 30), comment_len = le16(h + 32);
    uint64_t disk_start = le16(h + 34);
    e.header_offset = le32(h + 42);
    auto name = cd.take(name_len);
    auto extra = cd.take(extra_len);
    auto comment = cd.take(comment_len);
    if (!name || !extra || !comment)
      return fatal("central directory entry " + std::to_string(i) + " runs past the directory");
    e.name = *name;
    bool need_size = e.size == 0xFFFFFFFF, need_csize = e.compressed_size == 0xFFFFFFFF,
         need_offset = e.header_offset == 0xFFFFFFFF;
    if ((need_size || need_csize || need_offset) && !apply_zip64_extra(*extra, e, need_size, need_csize, need_offset)) {
      return fatal("entry " + show(e.name) + " has saturated sizes but no valid ZIP64 extra field");
    }
    if (disk_start != 0 && disk_start != 1) return fatal("entry " + show(e.name) + " starts on another disk");
    if (e.flags & kFlagMaskedLocal)
      return fatal("entry " + show(e.name) + " has masked local headers (central directory encryption)");
    if (e.method == 0 && e.size != e.compressed_size) {
      return fatal("stored entry " + show(e.name) + " has different compressed and uncompressed sizes (" +
                   std::to_string(e.compressed_size) + " vs " + std::to_string(e.size) + ")");
    }
    if (e.size && !e.compressed_size) return fatal("entry " + show(e.name) + " has data but no compressed bytes");
    auto reach = checked_add(e.header_offset, kLocalSize);
    if (!reach || !(reach = checked_add(*reach, e.compressed_size)) || *reach > size) {
      return fatal("entry " + show(e.name) + " (" + std::to_string(e.compressed_size) + " bytes at offset " +
                   std::to_string(e.header_offset) + ") runs past the end of the file: truncated?");
    }
    if (e.flags & (kFlagEncrypted | kFlagStrongEncryption | kFlagPatched)) {
      e.problem = ZipEntry::Problem::kEncrypted;
    } else if (e.method != 0 && e.method != 8) {
      e.problem = ZipEntry::Problem::kMethod;
    }
    if (!(e.flags & kFlagUtf8) &&
        std::any_of(e.name.begin(), e.name.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
      sink.ambiguous("cp437", "entry name " + show(e.name) +
                                  " has non-ASCII bytes without the UTF-8 flag: Python's zipfile decodes it as cp437, "
                                  "torch compares raw bytes");
    }
    zip.entries_.push_back(e);
  }
  // Python's zipfile reads entries until the directory's bytes run out, ignoring the count.
  if (cd.remaining() >= 4 && le32(file.data() + cd_offset + cd.pos()) == kCentralSig) {
    sink.ambiguous("hidden-entries",
                   "the central directory holds more entries than the end record counts: "
                   "Python's zipfile reads them, torch does not");
  }

  // A large directory (200 000 records) is mostly fixed fields and extras: keep only
  // the names, and let a mapped caller drop the directory's pages once read.
  if (release && cd_size > (1u << 20)) {
    size_t total = 0;
    for (const auto& e : zip.entries_) total += e.name.size();
    zip.names_ = std::make_unique<char[]>(total + 1);
    char* out = zip.names_.get();
    for (auto& e : zip.entries_) {
      std::memcpy(out, e.name.data(), e.name.size());
      e.name = std::string_view(out, e.name.size());
      out += e.name.size();
    }
  }

  // 4. Local headers: the data offset, and every way they disagree with the directory.
  //    The pass touches every member's page; they are handed back as it goes.
  uint64_t released = 0;
  for (auto& e : zip.entries_) {
    if (release && e.header_offset > released + (8u << 20)) {
      release(released, e.header_offset - (1u << 16) - released);
      released = e.header_offset - (1u << 16);
    }
    if (!range_fits(e.header_offset, kLocalSize, size) || le32(file.data() + e.header_offset) != kLocalSig) {
      if (e.readable()) e.problem = ZipEntry::Problem::kNoLocalHeader;
      continue;
    }
    const char* l = file.data() + e.header_offset;
    uint16_t lflags = le16(l + 6), lmethod = le16(l + 8);
    uint64_t lcsize = le32(l + 18), lsize = le32(l + 22);
    uint64_t lname = le16(l + 26), lextra = le16(l + 28);
    e.data_offset = e.header_offset + kLocalSize + lname + lextra;
    if (!range_fits(e.data_offset, e.compressed_size, size)) {
      if (e.readable()) e.problem = ZipEntry::Problem::kPastEnd;
      continue;
    }
    Bytes local_name = file.substr(e.header_offset + kLocalSize, lname);
    if (local_name != e.name) {
      sink.ambiguous("lfh-name",
                     "entry " + show(e.name) + " is named " + show(local_name) +
                         " in its local header: torch reads it by the directory name, strict readers refuse it");
    }
    if (lmethod != e.method) {
      sink.ambiguous("lfh-method", "entry " + show(e.name) + " has compression method " + std::to_string(lmethod) +
                                       " in its local header and " + std::to_string(e.method) + " in the directory");
    }
    if ((lflags & (kFlagEncrypted | kFlagStrongEncryption | kFlagPatched)) !=
        (e.flags & (kFlagEncrypted | kFlagStrongEncryption | kFlagPatched))) {
      sink.ambiguous("lfh-flags",
                     "entry " + show(e.name) +
                         " has encryption/patch flags in its local header that the directory does not have: "
                         "torch ignores them, Python's zipfile refuses the member");
    }
    if (!(lflags & kFlagDescriptor) && lcsize != 0xFFFFFFFF && (lcsize != e.compressed_size || lsize != e.size)) {
      sink.ambiguous("lfh-size", "entry " + show(e.name) + " has sizes in its local header (" + std::to_string(lcsize) +
                                     ") that differ from the directory (" + std::to_string(e.compressed_size) +
                                     "): streaming readers read different data");
    }
    if (lflags & kFlagDescriptor) {
      // A data descriptor follows the data; a streaming reader trusts it.
      uint64_t d = e.data_offset + e.compressed_size;
      if (range_fits(d, 4, size) && le32(file.data() + d) == kDescriptorSig) d += 4;
      if (range_fits(d, 12, size)) {
        uint32_t dcrc = le32(file.data() + d);
        uint64_t dcsize = le32(file.data() + d + 4);
        bool sizes64 = zip.zip64_ && range_fits(d, 20, size) && le64(file.data() + d + 4) == e.compressed_size;
        if (sizes64) dcsize = le64(file.data() + d + 4);
        if (dcrc != e.crc || (dcsize != e.compressed_size && (e.compressed_size & 0xFFFFFFFF) != dcsize)) {
          sink.ambiguous("descriptor",
                         "entry " + show(e.name) + " has a data descriptor that disagrees with the central directory");
        }
      }
    }
  }

  if (release) {
    if (cd_offset > released) release(released, cd_offset - released);
    if (zip.names_) release(cd_offset, cd_size);
  }

  // 5. Names: duplicates, case collisions, paths that escape.
  size_t capacity = 16;
  while (capacity < 2 * zip.entries_.size() + 2) capacity *= 2;
  zip.folded_.assign(capacity, kNone);
  for (uint32_t i = 0; i < zip.entries_.size(); ++i) {
    const auto& e = zip.entries_[i];
    uint32_t earlier = zip.folded_insert(i);
    bool inserted = earlier == kNone;
    if (!inserted && zip.entries_[earlier].name == e.name) {
      sink.ambiguous("duplicate",
                     "two entries are named " + show(e.name) + ": torch 1.x reads the first, other readers the last");
    } else if (!inserted) {
      sink.ambiguous("case", "entries " + show(zip.entries_[earlier].name) + " and " + show(e.name) +
                                 " differ only in case: torch looks names up case-insensitively");
    }
    if (bad_path(e.name))
      sink.ambiguous("path", "entry name " + show(e.name) + " is absolute or escapes the archive directory");
  }

  // 6. Overlapping members share bytes (overlap zip bombs, parser confusion).
  std::vector<const ZipEntry*> by_offset;
  by_offset.reserve(zip.entries_.size());
  for (const auto& e : zip.entries_) {
    if (e.readable() || e.data_offset) by_offset.push_back(&e);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const ZipEntry* a, const ZipEntry* b) { return a->header_offset < b->header_offset; });
  for (size_t i = 0; i + 1 < by_offset.size(); ++i) {
    const ZipEntry* a = by_offset[i];
    const ZipEntry* b = by_offset[i + 1];
    if (a->data_offset && a->data_offset + a->compressed_size > b->header_offset) {
      sink.ambiguous("overlap", "entries " + show(a->name) + " and " + show(b->name) + " overlap in the file");
    }
  }
  if (!by_offset.empty()) {
    const ZipEntry* last = by_offset.back();
    if (last->data_offset && last->data_offset + last->compressed_size > cd_offset) {
      sink.ambiguous("overlap", "entry " + show(last->name) + " overlaps the central directory");
    }
  }
  for (const auto& e : zip.entries_) {
    if (e.method == 8 && e.size > e.compressed_size * kMaxDeflateRatio + 1024) {
      sink.malformed("ratio", "entry " + show(e.name) + " claims " + std::to_string(e.size) + " bytes from " +
                                  std::to_string(e.compressed_size) +
                                  " compressed bytes, more than deflate can produce");
    }
  }
  return zip;
}

uint32_t ZipArchive::folded_find(std::string_view name) const {
  if (folded_.empty()) return kNone;
  size_t mask = folded_.size() - 1;
  for (size_t slot = FoldedHash{}(name)&mask;; slot = (slot + 1) & mask) {
    uint32_t i = folded_[slot];
    if (i == kNone || FoldedEqual{}(entries_[i].name, name)) return i;
  }
}

uint32_t ZipArchive::folded_insert(uint32_t index) {
  size_t mask = folded_.size() - 1;
  std::string_view name = entries_[index].name;
  for (size_t slot = FoldedHash{}(name)&mask;; slot = (slot + 1) & mask) {
    uint32_t i = folded_[slot];
    if (i == kNone) {
      folded_[slot] = index;
      return kNone;
    }
    if (FoldedEqual{}(entries_[i].name, name)) return i;
  }
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  // miniz with flags 0 compares case-insensitively and returns the first match; folded_
  // keeps the first entry of each folded name.
  uint32_t i = folded_find(name);
  return i == kNone ? nullptr : &entries_[i];
}

const ZipEntry* ZipArchive::find_exact(std::string_view name) const {
  const ZipEntry* found = find(name);
  if (found && found->name == name) return found;
  for (const auto& e : entries_) {  // a case variant came first: look further
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::optional<Bytes> ZipArchive::read(const ZipEntry& entry, std::string& buffer, uint64_t max_size,
                                      std::string& error) const {
  if (!entry.readable()) {
    error = entry.unreadable();
    return std::nullopt;
  }
  Bytes raw_bytes = raw(entry);
  if (entry.method == 0) return raw_bytes;  // stored: a view of the mapped file, nothing to allocate
  if (entry.size > max_size) {
    error = "inflates to " + std::to_string(entry.size) + " bytes, past the inspector's limit of " +
            std::to_string(max_size) + " (--max-inflate)";
    return std::nullopt;
  }
  if (entry.size > entry.compressed_size * kMaxDeflateRatio + 1024) {
    error = "declared size is impossible for deflate";
    return std::nullopt;
  }
  if (entry.size > kPlausibleInflateFloor &&
      entry.size / std::max<uint64_t>(entry.compressed_size, 1) > kPlausibleInflateRatio) {
    error = "declares " + std::to_string(entry.size) + " bytes from " + std::to_string(entry.compressed_size) +
            " compressed (" + std::to_string(entry.size / std::max<uint64_t>(entry.compressed_size, 1)) +
            ":1): a decompression bomb, not inflated";
    return std::nullopt;
  }
  switch (inflate_all(raw_bytes, entry.size, buffer)) {
    case InflateStatus::kOk:
      break;
    case InflateStatus::kTooLarge:
      error = "inflates to more than its declared " + std::to_string(entry.size) + " bytes";
      return std::nullopt;
    case InflateStatus::kCorrupt:
    case InflateStatus::kTruncated:
      error = "deflate stream is corrupt or truncated";
      return std::nullopt;
  }
  if (buffer.size() != entry.size) {
    error = "inflates to " + std::to_string(buffer.size()) + " bytes, not the declared " + std::to_string(entry.size);
    return std::nullopt;
  }
  return Bytes(buffer);
}

}  // namespace torchlint::ckpt
