// torch zip checkpoints (torch.save >= 1.6), TorchScript archives and other zips
// (checkpoint-formats.md §4, §8): records under one archive directory, read through
// torch's case-insensitive lookup; every member that is a pickle is walked, not only
// data.pkl.
#include <zlib.h>

#include <algorithm>
#include <unordered_set>

#include "readers.h"
#include "torch_objects.h"
#include "zip_reader.h"

namespace torchlint::ckpt {

namespace {

std::string show(std::string_view name) { return printable(name, 80); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

uint32_t crc_of(Bytes b) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (!b.empty()) {
    uInt n = static_cast<uInt>(std::min<size_t>(b.size(), 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(b.data()), n);
    b.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

class ZipCheckpointReader {
 public:
  ZipCheckpointReader(CheckpointFile& file, const ReaderOptions& options)
      : file_(file), options_(options), sink_(file.issues) {}

  void read() {
    auto zip = ZipArchive::read(file_.bytes->bytes(), file_.issues,
                                [&](uint64_t offset, uint64_t length) { file_.bytes->advise_done(offset, length); });
    if (!zip) return;
    zip_ = &*zip;
    referenced_.assign(zip->entries().size(), false);
    if (zip->entries().empty()) {
      sink_.malformed("zip", "zip archive has no entries", true);
      return;
    }
    std::string_view first = zip->entries().front().name;
    size_t slash = first.find('/');
    if (slash == std::string_view::npos || slash == 0) {
      read_plain_zip();
      return;
    }
    prefix_ = std::string(first.substr(0, slash + 1));
    for (const auto& e : zip->entries()) {
      if (!e.name.starts_with(prefix_)) {
        sink_.ambiguous("outside-prefix", "entry " + show(e.name) + " is not under the archive directory `" + prefix_ +
                                              "`: torch refuses the archive, other readers may load it");
      }
    }
    if (zip->find_exact(prefix_ + "constants.pkl")) {
      file_.format = Format::kTorchScript;
      dialect_ = PickleDialect::kTorchScript;
    } else if (zip->find_exact(prefix_ + "bytecode.pkl")) {
      file_.format = Format::kTorchMobile;
      dialect_ = PickleDialect::kTorchScript;
    } else if (zip->find_exact(prefix_ + "model.json")) {
      file_.format = Format::kTorchScript;
      dialect_ = PickleDialect::kTorchScript;
      file_.version_hints.push_back("TorchScript v1.0/1.1 layout (model.json), torch <= 1.2");
    } else {
      file_.format = Format::kTorchZip;
    }
    read_version();
    read_byteorder();
    for (const char* r : {".format_version", ".storage_alignment", ".data/serialization_id"}) {
      if (zip->find(prefix_ + r)) file_.version_hints.push_back(std::string("torch >= 2.1 (`") + r + "` record)");
    }
    for (const auto& e : zip->entries()) {
      if (e.name.starts_with(prefix_ + "code/") && !ends_with(e.name, ".debug_pkl")) ++file_.code_files;
    }
    read_main_pickle();
    read_other_members();
    file_.format_detail = "records under `" + prefix_ + "`" + (version_.empty() ? "" : ", format version " + version_) +
                          (big_endian_ ? ", big-endian" : "");
    // The directory is done with (200 000 entries in a big checkpoint): free it before
    // the tensor names are spelled out, so the two never take memory at the same time.
    zip_ = nullptr;
    zip.reset();
    name_tensors(file_);
  }

 private:
  std::optional<Bytes> member(const ZipEntry& e, std::string& error, bool check_crc = true) {
    auto buffer = std::make_unique<std::string>();
    auto bytes = zip_->read(e, *buffer, options_.max_inflated_member, error);
    if (!bytes) return std::nullopt;
    if (check_crc && crc_of(*bytes) != e.crc) {
      sink_.ambiguous("crc", "entry " + show(e.name) +
                                 " fails its CRC check: torch ignores CRCs, Python's zipfile refuses the member");
    }
    if (!e.stored()) {
      file_.buffers.push_back(std::move(buffer));
      return Bytes(*file_.buffers.back());
    }
    return bytes;
  }

  void read_version() {
    const ZipEntry* e = zip_->find(prefix_ + ".data/version");
    if (!e) e = zip_->find(prefix_ + "version");
    if (!e) {
      sink_.malformed("version", "no `version` record: torch.load fails (\"failed finding file version\")", true);
      return;
    }
    std::string error;
    auto bytes = member(*e, error);
    if (!bytes) {
      sink_.malformed("version", "cannot read the `version` record: " + error, true);
      return;
    }
    std::string_view text = *bytes;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
    if (text.empty() || text.size() > 18 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      sink_.malformed("version", "`version` record holds " + show(*bytes) + ", not a number: torch.load fails", true);
      return;
    }
    version_ = std::string(text);
    uint64_t v = std::stoull(version_);
    if (v > 10) file_.version_hints.push_back("format version " + version_ + ": torch 1.13 reads at most 10");
  }

  void read_byteorder() {
    const ZipEntry* e = zip_->find(prefix_ + "byteorder");
    if (!e) return;
    file_.version_hints.push_back("torch >= 2.1 (`byteorder` record)");
    std::string error;
    auto bytes = member(*e, error);
    if (!bytes || (*bytes != "little" && *bytes != "big")) {
      sink_.malformed("byteorder", "`byteorder` record is neither `little` nor `big`", true);
      return;
    }
    big_endian_ = *bytes == "big";
  }

  void read_main_pickle() {
    std::string name =
        file_.format == Format::kTorchMobile && !zip_->find(prefix_ + "data.pkl") ? "bytecode.pkl" : "data.pkl";
    const ZipEntry* e = zip_->find(prefix_ + name);
    if (!e) {
      if (file_.format == Format::kTorchZip)
        sink_.malformed("data.pkl", "no `" + prefix_ + "data.pkl` record: torch.load fails", true);
      return;
    }
    if (e->name != prefix_ + name) {
      sink_.ambiguous("case",
                      "torch loads " + show(e->name) + " as `" + prefix_ + name +
                          "` through its case-insensitive lookup; case-sensitive readers find no object pickle");
    }
    main_entry_ = e;
    std::string error;
    auto bytes = member(*e, error);
    if (!bytes) {
      sink_.malformed("data.pkl", "cannot read " + show(e->name) + ": " + error, true);
      return;
    }
    PickleScan& scan = scan_pickle(file_, *bytes, 0, e->stored() ? e->data_offset : 0,
                                   std::string(e->name.substr(prefix_.size())), dialect_, true, options_);
    file_.main_pickle = static_cast<int>(file_.pickles.size() - 1);
    if (!scan.run.complete()) {
      sink_.malformed("pickle",
                      scan.where + ": " + scan.run.error + " (at byte " + std::to_string(scan.run.error_offset) + ")",
                      true);
    } else {
      uint64_t used = scan.run.end - (e->stored() ? e->data_offset : 0);
      if (used < bytes->size()) {
        sink_.ambiguous("trailing-pickle", std::to_string(bytes->size() - used) + " bytes after the pickle's STOP in " +
                                               scan.where + ": torch ignores them, other tools may not");
      }
    }
    // Storages: <prefix>data/<key>, found the way torch finds records.
    std::string record = prefix_ + "data/";
    const size_t record_stem = record.size();
    // torch names storage records <prefix>/data/<n>: index them by n once, keeping the
    // first match of each name compared case-insensitively (miniz's lookup).
    std::vector<int32_t> numbered;
    FoldedEqual folded_equal;
    for (size_t i = 0; i < zip_->entries().size(); ++i) {
      std::string_view entry_name = zip_->entries()[i].name;
      if (entry_name.size() <= record_stem || !folded_equal(entry_name.substr(0, record_stem), record)) continue;
      auto n = canonical_number(entry_name.substr(record_stem));
      if (!n || *n > 4 * zip_->entries().size()) continue;
      if (*n >= numbered.size()) numbered.resize(std::max<size_t>(*n + 1, numbered.size() * 2), -1);
      if (numbered[*n] < 0) numbered[*n] = static_cast<int32_t>(i);
    }
    StorageLocator locate = [&](std::string_view key, uint64_t declared) {
      StorageBytes out;
      record.resize(record_stem);
      record += key;
      const ZipEntry* r = nullptr;
      if (auto n = canonical_number(key)) {
        if (*n < numbered.size() && numbered[*n] >= 0) r = &zip_->entries()[numbered[*n]];
      } else {
        r = zip_->find(record);
      }
      if (!r) {
        out.record = record;
        return out;
      }
      if (!r->readable()) {
        out.record = record + " (" + r->unreadable() + ")";
        return out;
      }
      referenced_[zip_->index_of(*r)] = true;
      out.found = true;
      out.available = r->size;
      if (r->size < declared) out.record = record;  // named in the finding
      out.data_offset = r->data_offset;
      out.compressed = r->stored() ? 0 : r->compressed_size;
      if (!r->stored() && r->size > 100 * r->compressed_size && r->size > (64ull << 20)) {
        sink_.ambiguous("bomb", "storage record " + show(r->name) + " inflates " + std::to_string(r->compressed_size) +
                                    " bytes to " + std::to_string(r->size) +
                                    ": torch.save never compresses storages (decompression bomb)");
      }
      return out;
    };
    if (scan.run.complete() && file_.format == Format::kTorchZip) {
      decode_torch_objects(file_, scan, PersistentIdStyle::kZip, locate, big_endian_, sink_);
    } else if (scan.run.complete()) {
      // TorchScript data.pkl uses the same storage references.
      decode_torch_objects(file_, scan, PersistentIdStyle::kZip, locate, big_endian_, sink_);
    }
  }

  void read_other_members() {
    std::string data_dir = prefix_ + "data/";
    for (const auto& e : zip_->entries()) {
      if (&e == main_entry_ || referenced_[zip_->index_of(e)]) continue;
      std::string_view rel = e.name.starts_with(prefix_) ? e.name.substr(prefix_.size()) : e.name;
      bool designated = ends_with(e.name, ".pkl") || ends_with(e.name, ".debug_pkl");
      bool storage_record = e.name.starts_with(data_dir);
      if (storage_record && file_.format == Format::kTorchZip && file_.main_pickle >= 0 &&
          file_.main()->run.complete()) {
        sink_.malformed("unreferenced",
                        "record " + show(e.name) + " is not referenced by data.pkl (stray or hidden data)");
      }
      if (!e.readable()) {
        if (designated)
          sink_.malformed("member", "cannot read " + show(e.name) + ": " + e.unreadable(),
                          dialect_ == PickleDialect::kTorchScript);
        continue;
      }
      // Only members that are pickles: by name, or by their first bytes.
      if (!designated) {
        // Stored: PROTO 2-5 up front, or a protocol 0/1 pickle that runs to STOP (a
        // hidden `cos\nsystem\n...` has no header to sniff).
        Bytes raw = zip_->raw(e);
        bool proto = raw.size() >= 2 && static_cast<uint8_t>(raw[0]) == 0x80 && static_cast<uint8_t>(raw[1]) <= 5;
        if (e.stored() && !proto && !(raw.size() <= (1u << 24) && looks_like_pickle(raw))) continue;
        if (!e.stored() && e.size > (1u << 26)) continue;
      }
      std::string error;
      auto bytes = member(e, error, designated);
      if (!bytes) {
        if (designated) sink_.malformed("member", "cannot read " + show(e.name) + ": " + error);
        continue;
      }
      if (!designated && !looks_like_pickle(bytes->substr(0, std::min<size_t>(bytes->size(), 1u << 24))) &&
          !(bytes->size() >= 2 && static_cast<uint8_t>((*bytes)[0]) == 0x80 &&
            static_cast<uint8_t>((*bytes)[1]) <= 5)) {
        continue;
      }
      bool loaded = designated && (dialect_ == PickleDialect::kTorchScript || file_.format == Format::kTorchZip);
      PickleScan& scan = scan_pickle(file_, *bytes, 0, e.stored() ? e.data_offset : 0, "zip member " + std::string(rel),
                                     dialect_, loaded, options_);
      if (!scan.run.complete()) {
        if (designated) {
          sink_.malformed("pickle", scan.where + ": " + scan.run.error,
                          dialect_ == PickleDialect::kTorchScript && rel == "constants.pkl");
        } else {
          file_.pickles.pop_back();  // it only looked like a pickle
        }
      }
    }
  }

  // A zip whose entries are not under one directory: .npz, or an archive with pickles.
  void read_plain_zip() {
    bool all_npy = std::all_of(zip_->entries().begin(), zip_->entries().end(),
                               [](const ZipEntry& e) { return ends_with(e.name, ".npy"); });
    file_.format = all_npy ? Format::kNpz : Format::kZip;
    if (!all_npy)
      sink_.malformed("not-torch", "zip archive without an archive directory: torch.load cannot read it", true);
    for (const auto& e : zip_->entries()) {
      if (!e.readable()) continue;
      if (!e.stored() && e.size > (1u << 28)) continue;
      std::string error;
      auto bytes = member(e, error);
      if (!bytes) continue;
      if (ends_with(e.name, ".npy")) {
        // Object arrays carry a pickle after the header.
        CheckpointFile inner;
        inner.bytes = MappedFile::from_string(std::string(*bytes));
        inner.size = bytes->size();
        inner.display = std::string(e.name);
        read_npy(inner, options_);
        for (auto& p : inner.pickles) {
          p->where = "zip member " + std::string(e.name) + " (" + p->where + ")";
          file_.pickles.push_back(std::move(p));
        }
        for (auto& i : inner.issues) file_.issues.push_back(std::move(i));
        file_.keep_alive.push_back(inner.bytes);  // the moved pickles point into it
        continue;
      }
      if (looks_like_pickle(bytes->substr(0, std::min<size_t>(bytes->size(), 1u << 16))) ||
          (bytes->size() >= 2 && static_cast<uint8_t>((*bytes)[0]) == 0x80)) {
        PickleScan& scan = scan_pickle(file_, *bytes, 0, e.stored() ? e.data_offset : 0,
                                       "zip member " + std::string(e.name), PickleDialect::kTorchLoad, false, options_);
        if (!scan.run.complete() && scan.safety.globals.empty() && scan.safety.hazards.empty())
          file_.pickles.pop_back();
      }
    }
  }

  CheckpointFile& file_;
  const ReaderOptions& options_;
  IssueSink sink_;
  const ZipArchive* zip_ = nullptr;
  std::string prefix_;
  std::string version_;
  bool big_endian_ = false;
  PickleDialect dialect_ = PickleDialect::kTorchLoad;
  const ZipEntry* main_entry_ = nullptr;
  std::vector<bool> referenced_;  // by entry index: storage records data.pkl uses
};

}  // namespace

void read_zip_checkpoint(CheckpointFile& file, const ReaderOptions& options) {
  ZipCheckpointReader reader(file, options);
  reader.read();
}

}  // namespace torchlint::ckpt
