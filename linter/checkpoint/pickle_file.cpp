// Files that are pickles: the legacy torch.save format (a magic-number pickle, protocol
// version, sys_info, the object, the storage keys, then raw storages; §6) and plain
// pickles, one or several stacked. Every pickle in the file is walked.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "readers.h"
#include "torch_objects.h"
#include "pickle_ops.h"

namespace torchlint::ckpt {

PickleScan& scan_pickle(CheckpointFile& file, Bytes bytes, size_t offset, uint64_t base_offset, std::string where,
                        PickleDialect dialect, bool loaded_by_torch, const ReaderOptions& options) {
  auto scan = std::make_unique<PickleScan>();
  scan->where = std::move(where);
  scan->dialect = dialect;
  scan->loaded_by_torch = loaded_by_torch;
  // Offsets in the file: `bytes` starts at base_offset - (offset of bytes in file)...
  // callers pass the file position of bytes[0] as base_offset.
  scan->run =
      run_pickle(bytes, offset, base_offset, PickleLimits::for_size(bytes.size() - std::min(offset, bytes.size())));
  scan->safety = assess(scan->run, options.policy, dialect);
  scan->input = bytes;
  scan->input_start = offset;
  scan->input_base = base_offset;
  file.pickles.push_back(std::move(scan));
  return *file.pickles.back();
}

void scan_stream_readings(CheckpointFile& file, const ReaderOptions& options) {
  IssueSink sink(file.issues);
  for (size_t p = 0, n = file.pickles.size(); p < n; ++p) {
    const PickleScan& buffered = *file.pickles[p];
    // Frames are where the two readings can part (see ReadMode); torch.save never writes them.
    if (!buffered.loaded_by_torch || !buffered.run.used[op::FRAME] || buffered.input.empty()) continue;
    PickleLimits limits =
        PickleLimits::for_size(buffered.input.size() - std::min(buffered.input_start, buffered.input.size()));
    limits.mode = ReadMode::kStream;
    auto stream = std::make_unique<PickleScan>();
    stream->run = run_pickle(buffered.input, buffered.input_start, buffered.input_base, limits);
    if (!stream->run.stream_skipped) continue;
    sink.ambiguous("stream",
                   "pickle `" + buffered.where + "`: an opcode at byte " +
                       std::to_string(stream->run.stream_skip_offset) +
                       " reads past the end of its FRAME; the C unpickler reading a stream without peek "
                       "(torch.load of a zip archive's records, or of an io.BytesIO) skips the rest of the frame, "
                       "a reader of the whole buffer (pickle.loads, most scanners) continues in it, so the two run "
                       "different pickles; the stream reading is inspected as `" +
                       buffered.where + " as a stream`");
    stream->where = buffered.where + " as a stream";
    stream->dialect = buffered.dialect;
    stream->loaded_by_torch = true;
    stream->safety = assess(stream->run, options.policy, stream->dialect);
    stream->input = buffered.input;
    stream->input_start = buffered.input_start;
    stream->input_base = buffered.input_base;
    file.pickles.push_back(std::move(stream));
  }
}

namespace {

// A bytes constant that is itself a pickle: PROTO 2-5, or a protocol 0/1 pickle that
// runs to STOP with more than one opcode.
bool embedded_pickle_candidate(std::string_view b) {
  if (b.size() < 4) return false;
  if (static_cast<uint8_t>(b[0]) == 0x80) return static_cast<uint8_t>(b[1]) >= 2 && static_cast<uint8_t>(b[1]) <= 5;
  return b.size() <= (1u << 20) && looks_like_pickle(b);
}

// `_codecs.encode(s, 'latin1')`: how protocol 2 pickles a bytes object; the bytes are s's
// code points (all below 256).
std::optional<std::string> latin1_bytes(ValueRef call) {
  const GlobalName* callee = call.callee();
  if (!callee || callee->module != "_codecs" || callee->name != "encode") return std::nullopt;
  ValueRef args = call.call_args();
  if (!args.is_sequence() || args.size() != 2) return std::nullopt;
  auto text = args[0].as_str();
  auto encoding = args[1].as_str();
  if (!text || !encoding || (*encoding != "latin1" && *encoding != "latin-1" && *encoding != "iso-8859-1"))
    return std::nullopt;
  std::string out;
  out.reserve(text->size());
  const auto* p = reinterpret_cast<const unsigned char*>(text->data());
  for (size_t i = 0, n = text->size(); i < n;) {
    if (p[i] < 0x80) {
      out += static_cast<char>(p[i++]);
    } else if ((p[i] & 0xE0) == 0xC0 && i + 1 < n && p[i] <= 0xC3) {
      out += static_cast<char>(((p[i] & 0x1F) << 6) | (p[i + 1] & 0x3F));
      i += 2;
    } else {
      return std::nullopt;  // a code point above U+00FF: encode() would fail
    }
  }
  return out;
}

}  // namespace

void scan_embedded_pickles(CheckpointFile& file, const ReaderOptions& options) {
  constexpr size_t kMaxEmbedded = 64;
  size_t found = 0;
  Bytes whole = file.bytes ? file.bytes->bytes() : Bytes();
  // Appended scans are examined too (a pickle in a pickle in a pickle), up to the cap.
  for (size_t p = 0; p < file.pickles.size() && found < kMaxEmbedded; ++p) {
    const ValueGraph& graph = *file.pickles[p]->run.graph;
    std::string parent = file.pickles[p]->where;
    std::vector<std::pair<Bytes, uint64_t>> candidates;  // bytes, file offset (0: not in the file)
    bool has_encode = false;
    for (uint32_t g = 0; g < graph.global_count() && !has_encode; ++g) {
      has_encode = graph.global_name(g).module == "_codecs" && graph.global_name(g).name == "encode";
    }
    for (ValueId id = 0; id < graph.size() && candidates.size() + found < kMaxEmbedded; ++id) {
      ValueKind kind = graph.node(id).kind;
      if (kind == ValueKind::kBytes) {
        auto b = ValueRef(&graph, id).as_bytes();
        if (!b || !embedded_pickle_candidate(*b)) continue;
        bool in_file =
            !whole.empty() && b->data() >= whole.data() && b->data() + b->size() <= whole.data() + whole.size();
        candidates.emplace_back(*b, in_file ? static_cast<uint64_t>(b->data() - whole.data()) : 0);
      } else if (kind == ValueKind::kCall && has_encode) {
        auto text = latin1_bytes(ValueRef(&graph, id));
        if (!text || !embedded_pickle_candidate(*text)) continue;
        file.buffers.push_back(std::make_unique<std::string>(std::move(*text)));
        candidates.emplace_back(Bytes(*file.buffers.back()), 0);
      }
    }
    for (const auto& [bytes, offset] : candidates) {
      std::string where = "pickle embedded as a bytes constant in " + parent;
      if (offset) where += " (byte " + std::to_string(offset) + ")";
      PickleScan& scan =
          scan_pickle(file, bytes, 0, offset, std::move(where), PickleDialect::kTorchLoad, false, options);
      ++found;
      // Random bytes that merely start like a pickle: keep only what says something.
      if (!scan.run.complete() && scan.safety.globals.empty() && scan.safety.hazards.empty()) file.pickles.pop_back();
    }
  }
}

namespace {

// 0x1950a86a20f9469cfc6c, little-endian.
constexpr std::string_view kMagic("\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10);
constexpr int64_t kProtocolVersion = 1001;

bool is_magic(ValueRef v) {
  auto bytes = v.big_int_bytes();
  return bytes && *bytes == kMagic;
}

// Storage key -> dtype, from every persistent id in the graph (keys are views into it).
std::unordered_map<std::string_view, DType> storage_types(const ValueGraph& graph) {
  std::unordered_map<std::string_view, DType> out;
  out.reserve(graph.calls().size());
  for (ValueId id = 0; id < graph.size(); ++id) {
    ValueRef v(&graph, id);
    ValueRef pid = v.persistent_id();
    if (!pid || pid.kind() != ValueKind::kTuple || pid.size() < 5) continue;
    const GlobalName* type = pid[1].global();
    auto key = pid[2].as_str();
    if (!type || !key) continue;
    if (auto d = dtype_from_storage_class(type->name)) out.emplace(*key, *d);
  }
  return out;
}

class PickleFileReader {
 public:
  PickleFileReader(CheckpointFile& file, const ReaderOptions& options)
      : file_(file), options_(options), sink_(file.issues) {}

  void read() {
    Bytes bytes = file_.bytes->bytes();
    PickleScan& first = scan_pickle(file_, bytes, 0, 0, "pickle 1", PickleDialect::kTorchLoad, true, options_);
    if (!first.run.complete()) {
      sink_.malformed(
          "pickle", "pickle 1: " + first.run.error + " (at byte " + std::to_string(first.run.error_offset) + ")", true);
      return;
    }
    if (is_magic(first.run.root_ref())) {
      read_legacy(first.run.end);
      return;
    }
    // A plain pickle: torch.load unpickles it with the full unpickler before noticing
    // that the magic number is missing. Walk whatever else is stacked after it.
    file_.format = Format::kRawPickle;
    file_.main_pickle = 0;
    file_.format_detail = "torch.load runs it through the full unpickler before rejecting it (no magic number)";
    uint64_t pos = first.run.end;
    for (int n = 2; pos < bytes.size() && n <= 64; ++n) {
      Bytes rest = bytes.substr(pos);
      if (!looks_like_pickle(rest)) {
        if (!std::all_of(rest.begin(), rest.end(), [](char c) { return c == '\n' || c == '\0' || c == ' '; })) {
          sink_.ambiguous("trailing", std::to_string(rest.size()) + " bytes after the pickle that are not a pickle");
        }
        break;
      }
      PickleScan& scan =
          scan_pickle(file_, bytes, pos, 0, "pickle " + std::to_string(n), PickleDialect::kTorchLoad, false, options_);
      if (!scan.run.complete()) break;
      pos = scan.run.end;
    }
    name_tensors(file_);
  }

 private:
  void read_legacy(uint64_t pos) {
    file_.format = Format::kLegacyPickle;
    Bytes bytes = file_.bytes->bytes();
    const char* names[] = {"protocol version", "sys_info", "object", "storage keys"};
    PickleScan* parts[4] = {};
    for (int i = 0; i < 4; ++i) {
      PickleScan& scan =
          scan_pickle(file_, bytes, pos, 0, std::string("pickle ") + std::to_string(i + 2) + " (" + names[i] + ")",
                      PickleDialect::kTorchLoad, true, options_);
      if (!scan.run.complete()) {
        sink_.malformed("pickle",
                        scan.where + ": " + scan.run.error + " (at byte " + std::to_string(scan.run.error_offset) + ")",
                        true);
        return;
      }
      parts[i] = &scan;
      pos = scan.run.end;
    }
    file_.main_pickle = 3;
    // The header pickles hold plain values in every file torch writes; anything else
    // there (a call, an import) is how the magic-number bypass hides a payload.
    auto plain = [](const PickleScan& s) { return s.run.globals.empty() && s.run.graph->calls().empty(); };
    for (int i : {0, 1, 3}) {
      if (!plain(*parts[i]) || !plain(*file_.pickles[0])) {
        sink_.ambiguous("legacy-header",
                        "the legacy header pickles import or call something (torch writes plain values there)");
        break;
      }
    }
    auto version = parts[0]->run.root_ref().as_int();
    if (version != kProtocolVersion) {
      sink_.malformed(
          "legacy",
          "legacy protocol version is " + parts[0]->run.root_ref().describe() + ", not 1001: torch.load fails", true);
    }
    ValueRef sys_info = parts[1]->run.root_ref();
    bool big_endian = false;
    if (sys_info.is_mapping()) {
      if (auto le = sys_info.get("little_endian").as_bool()) big_endian = !*le;
    }
    file_.format_detail = "protocol 1001" + std::string(big_endian ? ", big-endian" : "");
    file_.version_hints.push_back("written by torch < 1.6, or with _use_new_zipfile_serialization=False");

    // The storage section: for each key of pickle 5, an int64 element count and the bytes.
    ValueRef keys = parts[3]->run.root_ref();
    auto types = storage_types(*parts[2]->run.graph);
    std::unordered_map<std::string_view, StorageBytes> section;  // keys: views into pickle 5
    section.reserve(keys.size());
    bool section_ok = true;
    if (keys.kind() != ValueKind::kList) {
      sink_.malformed("legacy", "the storage key pickle is a " + keys.describe() + ", not a list: torch.load fails",
                      true);
      section_ok = false;
    }
    for (size_t i = 0; section_ok && i < keys.size(); ++i) {
      auto key = keys[i].as_str();
      if (!key) {
        sink_.malformed("legacy", "storage key " + keys[i].describe() + " is not a string", true);
        section_ok = false;
        break;
      }
      auto type = types.find(*key);
      if (type == types.end()) {
        sink_.malformed("legacy",
                        "storage key '" + std::string(*key) + "' is listed but no tensor uses it: torch.load fails",
                        true);
        section_ok = false;
        break;
      }
      if (!range_fits(pos, 8, bytes.size())) {
        sink_.malformed("legacy", "file ends inside the storage section (storage '" + std::string(*key) + "')", true);
        section_ok = false;
        break;
      }
      uint64_t count = le64(bytes.data() + pos);
      if (big_endian) count = __builtin_bswap64(count);
      auto n = checked_mul(count, dtype_bytes(type->second));
      if (!n || !range_fits(pos + 8, *n, bytes.size())) {
        sink_.malformed("legacy",
                        "storage '" + std::string(*key) + "' declares " + std::to_string(count) +
                            " elements, more than the rest of the file holds",
                        true);
        section_ok = false;
        break;
      }
      StorageBytes sb;
      sb.found = true;
      sb.available = *n;
      sb.data_offset = pos + 8;
      sb.record = "storage section";
      if (!section.emplace(*key, sb).second) {
        sink_.ambiguous("legacy", "storage key '" + std::string(*key) + "' is listed twice in the storage section");
      }
      pos += 8 + *n;
    }
    if (section_ok && pos < bytes.size()) {
      sink_.ambiguous("trailing",
                      std::to_string(bytes.size() - pos) + " bytes after the last storage: torch ignores them");
    }
    StorageLocator locate = [&](std::string_view key, uint64_t declared) {
      auto it = section.find(key);
      if (it == section.end()) {
        StorageBytes missing;
        missing.record = section_ok ? "storage section" : "";
        return missing;
      }
      StorageBytes sb = it->second;
      if (sb.available != declared && declared != UINT64_MAX && sb.available > declared) {
        sink_.malformed("legacy",
                        "storage '" + std::string(key) + "' holds " + std::to_string(sb.available) +
                            " bytes but declares " + std::to_string(declared) + ": torch.load fails (wrong byte size)",
                        true);
      }
      return sb;
    };
    if (section_ok) decode_torch_objects(file_, *parts[2], PersistentIdStyle::kLegacy, locate, big_endian, sink_);
    name_tensors(file_);
  }

  CheckpointFile& file_;
  const ReaderOptions& options_;
  IssueSink sink_;
};

}  // namespace

void read_pickle_file(CheckpointFile& file, const ReaderOptions& options) { PickleFileReader(file, options).read(); }

}  // namespace torchlint::ckpt
