#include "result_cache.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>

#include "source_file.h"

namespace torchlint {

namespace fs = std::filesystem;

namespace {

// Bumped with the entry layout (2: related locations).
constexpr char kMagic[8] = {'T', 'L', 'C', 'P', 'A', 'C', 'K', '2'};

uint64_t fnv1a(std::string_view data, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Keys and checksums of cache entries: a whole file's text goes through this on every run,
// so a word-at-a-time hash (libstdc++'s, linked into the binary) rather than FNV's byte
// loop. Entries are only ever compared with keys of the same binary (its version is part
// of the key), and a mismatch is only a miss.
uint64_t content_hash(std::string_view data, uint64_t seed) {
  uint64_t h = std::hash<std::string_view>{}(data);
  return seed ^ (h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

class Writer {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void u64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  void strings(const std::vector<std::string>& v) {
    u32(static_cast<uint32_t>(v.size()));
    for (const auto& s : v) str(s);
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

// Every read is bounds-checked; the first failure poisons the reader.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  uint8_t u8() { return take<uint8_t>(); }
  uint32_t u32() { return take<uint32_t>(); }
  uint64_t u64() { return take<uint64_t>(); }
  std::string str() {
    uint32_t n = u32();
    if (!ok_ || n > in_.size() - pos_) return fail<std::string>();
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  std::vector<std::string> strings() {
    uint32_t n = count();
    std::vector<std::string> v;
    for (uint32_t i = 0; i < n && ok_; ++i) v.push_back(str());
    return v;
  }
  // A count can never exceed the bytes left (each element takes at least one byte).
  uint32_t count() {
    uint32_t n = u32();
    return ok_ && n <= in_.size() - pos_ ? n : fail<uint32_t>();
  }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  template <class T>
  T take() {
    if (!ok_ || sizeof(T) > in_.size() - pos_) return fail<T>();
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  template <class T>
  T fail() {
    ok_ = false;
    return T{};
  }
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

void write_position(Writer& w, const Position& p) {
  w.u32(p.line);
  w.u32(p.column);
}
Position read_position(Reader& r) {
  Position p;
  p.line = r.u32();
  p.column = r.u32();
  return p;
}

}  // namespace

std::string serialize_file_result(const FileResult& result) {
  Writer w;
  w.u32(static_cast<uint32_t>(result.diagnostics.size()));
  for (const auto& d : result.diagnostics) {
    w.str(d.code);
    w.str(d.name);
    w.u8(static_cast<uint8_t>(d.severity));
    w.str(d.message);
    w.u32(d.start_byte);
    w.u32(d.end_byte);
    write_position(w, d.start);
    write_position(w, d.end);
    w.u32(d.statement_first_line);
    w.u32(d.statement_last_line);
    w.str(d.scope);
    w.u32(d.cell);
    write_position(w, d.cell_start);
    w.u8(d.fix ? 1 : 0);
    if (d.fix) {
      w.str(d.fix->message);
      w.u8(d.fix->unsafe ? 1 : 0);
      w.u32(static_cast<uint32_t>(d.fix->edits.size()));
      for (const auto& e : d.fix->edits) {
        w.u32(e.start);
        w.u32(e.end);
        w.str(e.replacement);
      }
    }
    w.u32(static_cast<uint32_t>(d.conditions.size()));
    for (const auto& c : d.conditions) {
      w.u8(static_cast<uint8_t>(c.kind));
      w.strings(c.roots);
      w.str(c.fact);
      w.str(c.unknown_callee_hint);
      w.str(c.scope);
      w.str(c.unless);
    }
    w.u32(static_cast<uint32_t>(d.related.size()));
    for (const auto& rl : d.related) {
      w.str(rl.message);
      w.u32(rl.start_byte);
      w.u32(rl.end_byte);
      write_position(w, rl.start);
      write_position(w, rl.end);
    }
  }
  w.u32(static_cast<uint32_t>(result.suppressions.size()));
  for (const auto& s : result.suppressions) {
    w.u32(s.line);
    w.u32(s.comment_line);
    w.u32(s.column);
    w.u8(s.file_level ? 1 : 0);
    w.strings(s.codes);
  }
  w.str(result.facts.module);
  w.u32(static_cast<uint32_t>(result.facts.functions.size()));
  for (const auto& f : result.facts.functions) {
    w.str(f.qualname);
    w.strings(f.facts);
    w.u32(static_cast<uint32_t>(f.calls.size()));
    for (const auto& c : f.calls) {
      w.str(c.callee);
      w.strings(c.contexts);
    }
  }
  return std::move(w.bytes());
}

std::optional<FileResult> deserialize_file_result(std::string_view bytes) {
  Reader r(bytes);
  FileResult result;
  uint32_t n = r.count();
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    Diagnostic d;
    d.code = r.str();
    d.name = r.str();
    uint8_t severity = r.u8();
    if (severity > static_cast<uint8_t>(Severity::kError)) return std::nullopt;
    d.severity = static_cast<Severity>(severity);
    d.message = r.str();
    d.start_byte = r.u32();
    d.end_byte = r.u32();
    d.start = read_position(r);
    d.end = read_position(r);
    d.statement_first_line = r.u32();
    d.statement_last_line = r.u32();
    d.scope = r.str();
    d.cell = r.u32();
    d.cell_start = read_position(r);
    if (r.u8()) {
      Fix fix;
      fix.message = r.str();
      fix.unsafe = r.u8() != 0;
      uint32_t edits = r.count();
      for (uint32_t k = 0; k < edits && r.ok(); ++k) {
        Edit e;
        e.start = r.u32();
        e.end = r.u32();
        e.replacement = r.str();
        fix.edits.push_back(std::move(e));
      }
      d.fix = std::move(fix);
    }
    uint32_t conditions = r.count();
    for (uint32_t k = 0; k < conditions && r.ok(); ++k) {
      ProjectCondition c;
      uint8_t kind = r.u8();
      if (kind > static_cast<uint8_t>(ProjectCondition::Kind::kProgramHas)) return std::nullopt;
      c.kind = static_cast<ProjectCondition::Kind>(kind);
      c.roots = r.strings();
      c.fact = r.str();
      c.unknown_callee_hint = r.str();
      c.scope = r.str();
      c.unless = r.str();
      d.conditions.push_back(std::move(c));
    }
    uint32_t related = r.count();
    for (uint32_t k = 0; k < related && r.ok(); ++k) {
      RelatedLocation rl;
      rl.message = r.str();
      rl.start_byte = r.u32();
      rl.end_byte = r.u32();
      rl.start = read_position(r);
      rl.end = read_position(r);
      d.related.push_back(std::move(rl));
    }
    result.diagnostics.push_back(std::move(d));
  }
  uint32_t suppressions = r.count();
  for (uint32_t i = 0; i < suppressions && r.ok(); ++i) {
    Suppression s;
    s.line = r.u32();
    s.comment_line = r.u32();
    s.column = r.u32();
    s.file_level = r.u8() != 0;
    s.codes = r.strings();
    s.used.assign(s.codes.empty() ? 1 : s.codes.size(), false);
    result.suppressions.push_back(std::move(s));
  }
  result.facts.module = r.str();
  uint32_t functions = r.count();
  for (uint32_t i = 0; i < functions && r.ok(); ++i) {
    FunctionFacts f;
    f.qualname = r.str();
    f.facts = r.strings();
    uint32_t calls = r.count();
    for (uint32_t k = 0; k < calls && r.ok(); ++k) {
      CallFact c;
      c.callee = r.str();
      c.contexts = r.strings();
      f.calls.push_back(std::move(c));
    }
    result.facts.functions.push_back(std::move(f));
  }
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return result;
}

ResultCache::ResultCache(fs::path dir, std::string tool_version, std::string pack_prefix)
    : dir_(std::move(dir)), version_(std::move(tool_version)), prefix_(std::move(pack_prefix)) {}

uint64_t ResultCache::hash(std::string_view data, uint64_t seed) { return content_hash(data, seed); }

std::string executable_identity(const std::string& version) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::string id = version;
  if (!ec) {
    auto size = fs::file_size(exe, ec);
    auto time = fs::last_write_time(exe, ec).time_since_epoch().count();
    id += ":" + std::to_string(size) + ":" + std::to_string(time);
  }
  return id;
}

uint64_t ResultCache::key(std::string_view text, const RuleSet& enabled, TorchVersion target, std::string_view module,
                          TorchVersion target_torchvision) const {
  uint64_t h = fnv1a(version_);
  h = fnv1a(module, h);
  std::string config;
  for (size_t i = 0; i < enabled.size(); ++i) config += enabled.contains(i) ? '1' : '0';
  config += target.str();
  config += '/';
  config += target_torchvision.str();
  h = fnv1a(config, h);
  return content_hash(text, h);
}

fs::path ResultCache::shard_path(size_t index) const {
  char name[24];
  std::snprintf(name, sizeof name, "pack-%zu.tlc", index);
  return dir_ / (prefix_ + name);
}

// A shard file: kMagic, then entries of [u64 path hash][u64 key][u32 size][size bytes:
// u64 checksum of the payload, payload]. Anything unreadable ends the shard's reading (the
// entries read so far stay; the rest are misses and get rewritten).
ResultCache::Shard& ResultCache::shard_for(uint64_t path_hash) const {
  size_t index = path_hash % kShards;
  Shard& shard = shards_[index];
  if (shard.read) return shard;
  shard.read = true;
  std::string error;
  auto read = read_file_bytes(shard_path(index).string(), error);
  if (!read || read->size() < sizeof kMagic || std::memcmp(read->data(), kMagic, sizeof kMagic) != 0) return shard;
  std::string_view rest = std::string_view(*read).substr(sizeof kMagic);
  while (rest.size() >= 20) {
    uint64_t hash, key;
    uint32_t size;
    std::memcpy(&hash, rest.data(), 8);
    std::memcpy(&key, rest.data() + 8, 8);
    std::memcpy(&size, rest.data() + 16, 4);
    rest.remove_prefix(20);
    if (size < 8 || size > rest.size()) break;
    shard.entries[hash] = Entry{key, std::string(rest.substr(0, size))};
    rest.remove_prefix(size);
  }
  return shard;
}

std::optional<std::string> ResultCache::load_bytes(const std::string& path, uint64_t key) const {
  uint64_t hash = fnv1a(path);
  std::string bytes;
  {
    Shard& shard = shards_[hash % kShards];
    std::lock_guard lock(shard.mutex);
    shard_for(hash);
    auto it = shard.entries.find(hash);
    if (it == shard.entries.end() || it->second.key != key) return std::nullopt;
    bytes = it->second.bytes;
  }
  uint64_t checksum;
  std::memcpy(&checksum, bytes.data(), 8);
  if (checksum != content_hash(std::string_view(bytes).substr(8), 0)) return std::nullopt;
  bytes.erase(0, 8);
  return bytes;
}

void ResultCache::store_bytes(const std::string& path, uint64_t key, std::string_view payload) const {
  uint64_t hash = fnv1a(path);
  std::string bytes(8, '\0');
  uint64_t checksum = content_hash(payload, 0);
  std::memcpy(bytes.data(), &checksum, 8);
  bytes += payload;
  Shard& shard = shards_[hash % kShards];
  std::lock_guard lock(shard.mutex);
  shard_for(hash);
  shard.entries[hash] = Entry{key, std::move(bytes)};
  shard.dirty = true;
}

std::optional<FileResult> ResultCache::load(const std::string& relative_path, uint64_t key) const {
  auto payload = load_bytes(relative_path, key);
  if (!payload) return std::nullopt;
  return deserialize_file_result(*payload);
}

void ResultCache::store(const std::string& relative_path, uint64_t key, const FileResult& result) const {
  store_bytes(relative_path, key, serialize_file_result(result));
}

void ResultCache::flush() const {
  std::error_code ec;
  bool any = false;
  for (auto& shard : shards_) any = any || shard.dirty;
  if (!any) return;
  if (!fs::exists(dir_, ec)) {
    fs::create_directories(dir_, ec);
    if (ec) return;  // a cache that cannot be written is only slower
    std::ofstream(dir_ / ".gitignore") << "# Created by torchlint\n*\n";
    std::ofstream(dir_ / "CACHEDIR.TAG") << "Signature: 8a477f597d28d172789f06886806bc55\n# torchlint cache\n";
  }
  for (size_t index = 0; index < kShards; ++index) {
    Shard& shard = shards_[index];
    std::lock_guard lock(shard.mutex);
    if (!shard.dirty) continue;
    std::string out(kMagic, sizeof kMagic);
    for (const auto& [hash, entry] : shard.entries) {
      out.append(reinterpret_cast<const char*>(&hash), 8);
      out.append(reinterpret_cast<const char*>(&entry.key), 8);
      uint32_t size = static_cast<uint32_t>(entry.bytes.size());
      out.append(reinterpret_cast<const char*>(&size), 4);
      out += entry.bytes;
    }
    fs::path target = shard_path(index);
    fs::path tmp = target;
    tmp += "." + std::to_string(::getpid()) + ".tmp";
    {
      std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
      file << out;
      if (!file) {
        fs::remove(tmp, ec);
        continue;
      }
    }
    fs::rename(tmp, target, ec);  // atomic: readers see the old shard or the new one
    if (ec) fs::remove(tmp, ec);
    shard.dirty = false;
  }
}

ResultCache::~ResultCache() { flush(); }

}  // namespace torchlint
