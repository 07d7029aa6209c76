#pragma once
// Byte-by-byte builders for hostile and benign inputs: pickles assembled opcode by
// opcode, zip archives laid out the way torch writes them (with knobs to break every
// rule of the format), a torch-style state_dict pickle. Used by the tests and the fuzz
// seeds; nothing here depends on Python.
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace torchlint::ckpt::testing {

inline void put16(std::string& s, uint16_t v) { s.append(reinterpret_cast<const char*>(&v), 2); }
inline void put32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
inline void put64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }

// Assembles a pickle; every method appends one opcode with its argument.
class Pickle {
 public:
  Pickle& proto(int v = 2) { return raw("\x80").byte(static_cast<uint8_t>(v)); }
  Pickle& raw(std::string_view bytes) {
    out_.append(bytes);
    return *this;
  }
  Pickle& byte(uint8_t b) {
    out_ += static_cast<char>(b);
    return *this;
  }
  Pickle& op(char c) { return byte(static_cast<uint8_t>(c)); }
  Pickle& global(std::string_view module, std::string_view name) {
    return op('c').raw(module).raw("\n").raw(name).raw("\n");
  }
  Pickle& inst(std::string_view module, std::string_view name) {
    return op('i').raw(module).raw("\n").raw(name).raw("\n");
  }
  Pickle& unicode(std::string_view s) {  // BINUNICODE
    op('X');
    put32(out_, static_cast<uint32_t>(s.size()));
    return raw(s);
  }
  Pickle& short_unicode(std::string_view s) {  // SHORT_BINUNICODE
    byte(0x8c).byte(static_cast<uint8_t>(s.size()));
    return raw(s);
  }
  Pickle& string0(std::string_view s) { return op('S').raw("'").raw(s).raw("'\n"); }  // STRING
  Pickle& unicode0(std::string_view s) { return op('V').raw(s).raw("\n"); }           // UNICODE
  Pickle& int1(uint8_t v) { return op('K').byte(v); }
  Pickle& int4(int32_t v) {
    op('J');
    put32(out_, static_cast<uint32_t>(v));
    return *this;
  }
  Pickle& mark() { return op('('); }
  Pickle& tuple() { return op('t'); }
  Pickle& tuple1() { return byte(0x85); }
  Pickle& tuple2() { return byte(0x86); }
  Pickle& empty_tuple() { return op(')'); }
  Pickle& empty_dict() { return op('}'); }
  Pickle& empty_list() { return op(']'); }
  Pickle& reduce() { return op('R'); }
  Pickle& build() { return op('b'); }
  Pickle& newobj() { return byte(0x81); }
  Pickle& obj() { return op('o'); }
  Pickle& setitem() { return op('s'); }
  Pickle& setitems() { return op('u'); }
  Pickle& append() { return op('a'); }
  Pickle& appends() { return op('e'); }
  Pickle& pop() { return op('0'); }
  Pickle& dup() { return op('2'); }
  Pickle& none() { return op('N'); }
  Pickle& newfalse() { return byte(0x89); }
  Pickle& put(uint8_t i) { return op('q').byte(i); }
  Pickle& get(uint8_t i) { return op('h').byte(i); }
  Pickle& long_put(uint32_t i) {
    op('r');
    put32(out_, i);
    return *this;
  }
  Pickle& memoize() { return byte(0x94); }
  Pickle& stack_global() { return byte(0x93); }
  Pickle& binpersid() { return op('Q'); }
  Pickle& frame(uint64_t n) {
    byte(0x95);
    put64(out_, n);
    return *this;
  }
  Pickle& stop() { return op('.'); }
  const std::string& bytes() const { return out_; }
  operator std::string() const { return out_; }

 private:
  std::string out_;
};

// `os.system("echo pwned")` at the given protocol, the way CPython's pickler writes it.
inline std::string os_system_pickle(int protocol) {
  Pickle p;
  if (protocol >= 2) p.proto(protocol);
  if (protocol >= 4) {
    p.short_unicode("posix").memoize().short_unicode("system").memoize().stack_global().memoize();
  } else {
    p.global("posix", "system");
  }
  return p.unicode("echo pwned").tuple1().reduce().stop();
}

// A torch.save state_dict of float32 tensors: OrderedDict name -> _rebuild_tensor_v2
// with persistent id ('storage', torch.FloatStorage, key, location, numel). The storage
// of tensor i is key "i"; numel and shape are given per tensor.
struct TensorSpec {
  std::string name;
  std::vector<uint8_t> shape;
  uint8_t numel = 0;  // storage numel (elements)
  std::string location = "cpu";
  std::string storage_class = "FloatStorage";
};
inline std::string state_dict_pickle(const std::vector<TensorSpec>& tensors, bool protocol_header = true) {
  Pickle p;
  if (protocol_header) p.proto(2);
  p.global("collections", "OrderedDict").put(0).empty_tuple().reduce().put(1).mark();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorSpec& t = tensors[i];
    p.unicode(t.name).global("torch._utils", "_rebuild_tensor_v2").mark();
    p.mark()
        .unicode("storage")
        .global("torch", t.storage_class)
        .unicode(std::to_string(i))
        .unicode(t.location)
        .int1(t.numel)
        .tuple();
    p.binpersid().int1(0);
    p.mark();
    for (uint8_t d : t.shape) p.int1(d);
    p.tuple();
    // Contiguous strides.
    std::vector<uint8_t> stride(t.shape.size(), 1);
    for (size_t d = t.shape.size(); d-- > 1;) stride[d - 1] = static_cast<uint8_t>(stride[d] * t.shape[d]);
    p.mark();
    for (uint8_t s : stride) p.int1(s);
    p.tuple();
    p.newfalse().get(0).empty_tuple().reduce().tuple().reduce();
  }
  return p.setitems().stop();
}

struct ZipMember {
  std::string name;
  std::string data;
  uint16_t method = 0;      // 0 stored, 8 deflated
  uint16_t flags = 0x0808;  // as torch writes: descriptor + UTF-8
  uint16_t local_flags = 0x0808;
  std::string local_name;  // "" = same as name
  bool wrong_crc = false;
  uint64_t declared_size = 0;  // 0 = the real size
};

struct ZipLayout {
  bool zip64 = true;          // torch always writes ZIP64 end records
  size_t hidden_entries = 0;  // directory entries the end record does not count
  std::string trailing;       // bytes after the end record
  bool align = true;          // 64-byte aligned data (FB extra), as torch does
};

inline std::string deflate_raw(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()) + 16, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

inline std::string build_zip(const std::vector<ZipMember>& members, const ZipLayout& layout = {}) {
  std::string out, cd;
  for (const auto& m : members) {
    std::string stored = m.method == 8 ? deflate_raw(m.data) : m.data;
    uint32_t crc = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(m.data.data()), static_cast<uInt>(m.data.size())));
    if (m.wrong_crc) crc ^= 0xFFFFFFFFu;
    uint64_t size = m.declared_size ? m.declared_size : m.data.size();
    const std::string& local_name = m.local_name.empty() ? m.name : m.local_name;
    uint64_t offset = out.size();
    std::string extra;
    if (layout.align) {
      size_t data_at = offset + 30 + local_name.size() + 4;
      size_t pad = (64 - data_at % 64) % 64;
      extra = "FB";
      put16(extra, static_cast<uint16_t>(pad));
      extra.append(pad, 'Z');
    }
    bool descriptor = m.local_flags & 0x8;
    put32(out, 0x04034b50);
    put16(out, 45);
    put16(out, m.local_flags);
    put16(out, m.method);
    put32(out, 0);
    put32(out, descriptor ? 0 : crc);
    put32(out, descriptor ? 0 : static_cast<uint32_t>(stored.size()));
    put32(out, descriptor ? 0 : static_cast<uint32_t>(size));
    put16(out, static_cast<uint16_t>(local_name.size()));
    put16(out, static_cast<uint16_t>(extra.size()));
    out += local_name;
    out += extra;
    out += stored;
    if (descriptor) {
      put32(out, 0x08074b50);
      put32(out, crc);
      put32(out, static_cast<uint32_t>(stored.size()));
      put32(out, static_cast<uint32_t>(size));
    }
    put32(cd, 0x02014b50);
    put16(cd, 45);
    put16(cd, 45);
    put16(cd, m.flags);
    put16(cd, m.method);
    put32(cd, 0);
    put32(cd, crc);
    put32(cd, static_cast<uint32_t>(stored.size()));
    put32(cd, static_cast<uint32_t>(size));
    put16(cd, static_cast<uint16_t>(m.name.size()));
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put32(cd, 0);
    put32(cd, static_cast<uint32_t>(offset));
    cd += m.name;
  }
  uint64_t cd_offset = out.size();
  out += cd;
  uint64_t counted = members.size() - std::min(layout.hidden_entries, members.size());
  uint64_t cd_size = cd.size();
  if (layout.hidden_entries) {
    // The counted entries' bytes only: what a count-driven reader (miniz) sees.
    cd_size = cd.size();
  }
  if (layout.zip64) {
    uint64_t record = out.size();
    put32(out, 0x06064b50);
    put64(out, 44);
    put16(out, 45);
    put16(out, 45);
    put32(out, 0);
    put32(out, 0);
    put64(out, counted);
    put64(out, counted);
    put64(out, cd_size);
    put64(out, cd_offset);
    put32(out, 0x07064b50);
    put32(out, 0);
    put64(out, record);
    put32(out, 1);
  }
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<uint16_t>(layout.zip64 ? 0xFFFF : counted));
  put16(out, static_cast<uint16_t>(layout.zip64 ? 0xFFFF : counted));
  put32(out, static_cast<uint32_t>(layout.zip64 ? 0xFFFFFFFF : cd_size));
  put32(out, static_cast<uint32_t>(layout.zip64 ? 0xFFFFFFFF : cd_offset));
  put16(out, 0);
  out += layout.trailing;
  return out;
}

// A complete torch.save-style zip: <prefix>/data.pkl, data/<i>, version.
inline std::vector<ZipMember> torch_members(const std::string& pickle, const std::vector<std::string>& storages,
                                            const std::string& prefix = "archive") {
  std::vector<ZipMember> m;
  m.push_back({prefix + "/data.pkl", pickle});
  for (size_t i = 0; i < storages.size(); ++i) m.push_back({prefix + "/data/" + std::to_string(i), storages[i]});
  m.push_back({prefix + "/version", "3\n"});
  return m;
}

// A benign two-tensor checkpoint (fc.weight [2, 3], fc.bias [2]) and its storages.
inline std::string benign_pickle() { return state_dict_pickle({{"fc.weight", {2, 3}, 6}, {"fc.bias", {2}, 2}}); }
inline std::vector<std::string> benign_storages() {
  std::vector<float> w = {0.5f, -1.f, 2.f, 0.f, 1.5f, -0.25f}, b = {1.f, -1.f};
  return {std::string(reinterpret_cast<const char*>(w.data()), w.size() * 4),
          std::string(reinterpret_cast<const char*>(b.data()), b.size() * 4)};
}
inline std::string benign_zip() { return build_zip(torch_members(benign_pickle(), benign_storages())); }

inline std::string safetensors_file(const std::string& header, const std::string& data) {
  std::string out;
  put64(out, header.size());
  return out + header + data;
}

}  // namespace torchlint::ckpt::testing
