// The tar format of torch <= 0.1 (checkpoint-formats.md §7): members `sys_info`,
// `storages`, `tensors` and `pickle`, each a sequence of pickles and raw records.
// torch.load still reads it (and unpickles every pickle in it with weights_only=False).
#include <algorithm>
#include <unordered_map>

#include "container.h"
#include "readers.h"
#include "torch_objects.h"

namespace torchlint::ckpt {

namespace {

struct TarMember {
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
};

std::optional<uint64_t> tar_number(Bytes field) {
  if (!field.empty() && (static_cast<uint8_t>(field[0]) & 0x80)) {  // GNU base-256
    uint64_t v = 0;
    for (size_t i = 1; i < field.size(); ++i) {
      if (v >> 56) return std::nullopt;
      v = (v << 8) | static_cast<uint8_t>(field[i]);
    }
    return v;
  }
  uint64_t v = 0;
  size_t i = 0;
  while (i < field.size() && field[i] == ' ') ++i;
  for (; i < field.size() && field[i] >= '0' && field[i] <= '7'; ++i) {
    if (v >> 60) return std::nullopt;
    v = v * 8 + static_cast<uint64_t>(field[i] - '0');
  }
  return v;
}

// Keys in the tar format are ints (old pointer values) or strings.
std::optional<std::string> key_text(ValueRef v) {
  if (auto s = v.as_str()) return std::string(*s);
  if (auto i = v.as_int()) return std::to_string(*i);
  return std::nullopt;
}

std::string c_string(Bytes field) { return std::string(field.substr(0, std::min(field.size(), field.find('\0')))); }

class TarReader {
 public:
  TarReader(CheckpointFile& file, const ReaderOptions& options) : file_(file), options_(options), sink_(file.issues) {}

  void read() {
    if (!list_members()) return;
    file_.format_detail = std::to_string(members_.size()) + " members";
    const TarMember* storages = member("storages");
    const TarMember* tensors = member("tensors");
    const TarMember* pickle = member("pickle");
    if (const TarMember* sys_info = member("sys_info")) {
      PickleScan& s = scan_pickle(file_, bytes(), sys_info->offset, 0, "tar member sys_info", PickleDialect::kTorchLoad,
                                  false, options_);
      if (!s.run.complete()) sink_.malformed("pickle", "sys_info: " + s.run.error);
    }
    if (!storages || !tensors || !pickle) {
      sink_.malformed("tar", "tar archive without the `storages`, `tensors` and `pickle` members of a torch checkpoint",
                      true);
    }
    if (storages) read_storages(*storages);
    if (tensors) read_tensors(*tensors);
    if (pickle) {
      PickleScan& s = scan_pickle(file_, bytes(), pickle->offset, 0, "tar member pickle", PickleDialect::kTorchLoad,
                                  true, options_);
      if (!s.run.complete()) {
        sink_.malformed("pickle", "tar member pickle: " + s.run.error, true);
      } else {
        file_.main_pickle = static_cast<int>(file_.pickles.size() - 1);
        // Persistent ids in the object pickle are tensor keys.
        const ValueGraph& g = *s.run.graph;
        for (ValueId id = 0; id < g.size(); ++id) {
          ValueRef pid = ValueRef(&g, id).persistent_id();
          if (!pid) continue;
          auto key = key_text(pid);
          auto it = key ? tensor_keys_.find(*key) : tensor_keys_.end();
          if (it != tensor_keys_.end())
            file_.tensor_of_value[id] = it->second;
          else if (pid.kind() != ValueKind::kTuple)
            sink_.malformed("pid", "persistent id " + pid.describe() + " names no tensor", true);
        }
        name_tensors(file_);
      }
    }
  }

 private:
  Bytes bytes() const { return file_.bytes->bytes(); }

  const TarMember* member(const std::string& name) const {
    // Python's tarfile takes the last member of a name.
    const TarMember* found = nullptr;
    for (const auto& m : members_) {
      if (m.name == name) found = &m;
    }
    return found;
  }

  bool list_members() {
    Bytes b = bytes();
    uint64_t pos = 0;
    std::string long_name;
    std::unordered_map<std::string, int> seen;
    while (pos + 512 <= b.size()) {
      Bytes h = b.substr(pos, 512);
      if (std::all_of(h.begin(), h.end(), [](char c) { return c == 0; })) return true;
      if (!is_tar_header(h)) {
        sink_.malformed("tar", "corrupt tar header at byte " + std::to_string(pos), true);
        return false;
      }
      auto size = tar_number(h.substr(124, 12));
      if (!size || !range_fits(pos + 512, *size, b.size())) {
        sink_.malformed("tar", "tar member at byte " + std::to_string(pos) + " runs past the end of the file", true);
        return false;
      }
      char type = h[156];
      std::string name = c_string(h.substr(0, 100));
      if (h.substr(257, 5) == "ustar") {
        std::string prefix = c_string(h.substr(345, 155));
        if (!prefix.empty()) name = prefix + "/" + name;
      }
      uint64_t data = pos + 512;
      if (type == 'L') {
        long_name = c_string(b.substr(data, *size));
      } else if (type == 'x') {
        // PAX records "LEN key=value\n": only `path` matters here.
        Bytes rec = b.substr(data, *size);
        size_t p = rec.find(" path=");
        if (p != Bytes::npos) {
          size_t e = rec.find('\n', p);
          long_name = std::string(rec.substr(p + 6, (e == Bytes::npos ? rec.size() : e) - p - 6));
        }
      } else if (type == '0' || type == '\0') {
        if (!long_name.empty()) name = long_name;
        long_name.clear();
        if (++seen[name] == 2)
          sink_.ambiguous("duplicate", "two tar members are named `" + name + "`: readers may take either");
        members_.push_back({name, data, *size});
      }
      auto next = checked_add(data, (*size + 511) / 512 * 512);
      if (!next) return false;
      pos = *next;
    }
    return true;
  }

  // A pickle inside a member; false when it does not parse (the member is then broken).
  PickleScan* member_pickle(const TarMember& m, uint64_t& pos, const std::string& what) {
    if (pos >= m.offset + m.size) {
      sink_.malformed("tar", "tar member `" + m.name + "` ends before " + what, true);
      return nullptr;
    }
    Bytes b = bytes().substr(0, m.offset + m.size);
    PickleScan& s = scan_pickle(file_, b, pos, 0, "tar member " + m.name + " (" + what + ")", PickleDialect::kTorchLoad,
                                true, options_);
    if (!s.run.complete()) {
      sink_.malformed("pickle", s.where + ": " + s.run.error, true);
      return nullptr;
    }
    pos = s.run.end;
    return &s;
  }

  void read_storages(const TarMember& m) {
    uint64_t pos = m.offset, end = m.offset + m.size;
    PickleScan* count_scan = member_pickle(m, pos, "storage count");
    if (!count_scan) return;
    auto count = count_scan->run.root_ref().as_int();
    if (!count || *count < 0 || static_cast<uint64_t>(*count) > m.size) {
      sink_.malformed("tar", "storage count " + count_scan->run.root_ref().describe() + " is not plausible", true);
      return;
    }
    for (int64_t i = 0; i < *count; ++i) {
      PickleScan* s = member_pickle(m, pos, "storage " + std::to_string(i));
      if (!s) return;
      ValueRef args = s->run.root_ref();
      auto key = key_text(args[0]);
      auto location = args[1].as_str();
      const GlobalName* type = args[2].global();
      auto dtype = type ? dtype_from_storage_class(type->name) : std::nullopt;
      if (args.size() != 3 || !key || !location || !dtype) {
        sink_.malformed("tar", "storage header " + args.describe() + " is not (key, location, storage type)", true);
        return;
      }
      if (!range_fits(pos, 8, end)) {
        sink_.malformed("tar", "storage '" + std::string(*key) + "' is truncated", true);
        return;
      }
      uint64_t numel = le64(bytes().data() + pos);
      DType element = *dtype;
      auto n = checked_mul(numel, dtype_bytes(element));
      if (!n || !range_fits(pos + 8, *n, end)) {
        sink_.malformed("tar", "storage '" + std::string(*key) + "' declares more bytes than its member holds", true);
        return;
      }
      StorageInfo st;
      st.key = std::string(*key);
      st.dtype = element;
      st.location = std::string(*location);
      st.numel = numel;
      st.found = true;
      st.available_bytes = *n;
      st.data_offset = pos + 8;
      storage_keys_[st.key] = static_cast<int32_t>(file_.storages.size());
      file_.storages.push_back(std::move(st));
      pos += 8 + *n;
    }
    member_pickle(m, pos, "storage views");
  }

  void read_tensors(const TarMember& m) {
    uint64_t pos = m.offset, end = m.offset + m.size;
    PickleScan* count_scan = member_pickle(m, pos, "tensor count");
    if (!count_scan) return;
    auto count = count_scan->run.root_ref().as_int();
    if (!count || *count < 0 || static_cast<uint64_t>(*count) > m.size) {
      sink_.malformed("tar", "tensor count " + count_scan->run.root_ref().describe() + " is not plausible", true);
      return;
    }
    for (int64_t i = 0; i < *count; ++i) {
      PickleScan* s = member_pickle(m, pos, "tensor " + std::to_string(i));
      if (!s) return;
      ValueRef args = s->run.root_ref();
      auto key = key_text(args[0]);
      auto storage_id = key_text(args[1]);
      if (!key || !storage_id || !range_fits(pos, 8, end)) {
        sink_.malformed("tar", "tensor header " + args.describe() + " is not (key, storage id, type)", true);
        return;
      }
      int32_t ndim = static_cast<int32_t>(le32(bytes().data() + pos));
      pos += 8;  // ndim and 4 bytes of padding
      if (ndim < 0 || ndim > 64 || !range_fits(pos, 16ull * ndim + 8, end)) {
        sink_.malformed("tar", "tensor '" + std::string(*key) + "' has a bad dimension count or is truncated", true);
        return;
      }
      TensorInfo t;
      for (int d = 0; d < ndim; ++d) t.shape.push_back(static_cast<int64_t>(le64(bytes().data() + pos + 8 * d)));
      for (int d = 0; d < ndim; ++d)
        t.stride.push_back(static_cast<int64_t>(le64(bytes().data() + pos + 8 * (ndim + d))));
      t.storage_offset = static_cast<int64_t>(le64(bytes().data() + pos + 16 * ndim));
      pos += 16ull * ndim + 8;
      auto st = storage_keys_.find(std::string(*storage_id));
      if (st == storage_keys_.end()) {
        sink_.malformed(
            "missing-storage",
            "tensor '" + std::string(*key) + "' uses storage '" + std::string(*storage_id) + "', which is missing",
            true);
        continue;
      }
      t.storage = st->second;
      StorageInfo& storage = file_.storages[st->second];
      t.dtype = storage.dtype;
      uint64_t needed = 0;
      std::string why;
      if (!tensor_extent(t.shape, t.stride, t.storage_offset, t.numel, needed, why) ||
          (t.numel && needed > storage.numel)) {
        t.bounds_ok = false;
        sink_.malformed("bounds",
                        "tensor '" + std::string(*key) + "' does not fit its storage" + (why.empty() ? "" : ": " + why),
                        true);
      }
      ++storage.tensors;
      tensor_keys_[std::string(*key)] = static_cast<uint32_t>(file_.tensors.size());
      file_.tensors.push_back(std::move(t));
    }
  }

  CheckpointFile& file_;
  const ReaderOptions& options_;
  IssueSink sink_;
  std::vector<TarMember> members_;
  std::unordered_map<std::string, int32_t> storage_keys_;
  std::unordered_map<std::string, uint32_t> tensor_keys_;
};

}  // namespace

void read_legacy_tar(CheckpointFile& file, const ReaderOptions& options) { TarReader(file, options).read(); }

}  // namespace torchlint::ckpt
