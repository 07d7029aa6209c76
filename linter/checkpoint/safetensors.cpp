// safetensors (checkpoint-formats.md §9): u64 header length, a JSON header, the bytes.
// Validated as the reference Rust reader does (`Metadata::validate`), plus the checks
// the spec asks for that not every parser makes (duplicate keys, the leading `{`).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "readers.h"

namespace torchlint::ckpt {

namespace {

using json = nlohmann::json;

// Builds the header while noting duplicate keys (which nlohmann would silently merge) and
// refusing absurd nesting.
class HeaderSax : public nlohmann::json_sax<json> {
 public:
  explicit HeaderSax(std::vector<std::string>& duplicates) : duplicates_(duplicates) {}
  json result;

  bool null() override { return value(nullptr); }
  bool boolean(bool v) override { return value(v); }
  bool number_integer(number_integer_t v) override { return value(v); }
  bool number_unsigned(number_unsigned_t v) override { return value(v); }
  bool number_float(number_float_t v, const string_t&) override { return value(v); }
  bool string(string_t& v) override { return value(v); }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    auto& keys = keys_.back();
    if (!keys.insert(k).second) duplicates_.push_back(k);
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error = e.what();
    return false;
  }
  std::string error;

 private:
  bool value(json v) {
    if (stack_.empty()) {
      result = std::move(v);
      return true;
    }
    json& top = *stack_.back();
    if (top.is_object())
      top[key_] = std::move(v);
    else
      top.push_back(std::move(v));
    return true;
  }
  bool open(json v) {
    if (stack_.size() >= 16) {
      error = "header nests deeper than any safetensors header";
      return false;
    }
    json* slot;
    if (stack_.empty()) {
      result = std::move(v);
      slot = &result;
    } else if (stack_.back()->is_object()) {
      slot = &((*stack_.back())[key_] = std::move(v));
    } else {
      stack_.back()->push_back(std::move(v));
      slot = &stack_.back()->back();
    }
    stack_.push_back(slot);
    keys_.emplace_back();
    return true;
  }
  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }
  std::vector<json*> stack_;
  std::vector<std::set<std::string>> keys_;
  std::string key_;
  std::vector<std::string>& duplicates_;
};

uint32_t dtype_bits(std::string_view name) {
  if (name == "F4") return 4;
  if (name == "F6_E2M3" || name == "F6_E3M2") return 6;
  if (auto d = dtype_from_safetensors(name)) return dtype_info(*d).bits;
  return 0;
}

}  // namespace

void read_safetensors(CheckpointFile& file, const ReaderOptions&) {
  IssueSink sink(file.issues);
  Bytes b = file.bytes->bytes();
  if (b.size() < 8) {
    sink.malformed("header", "safetensors file shorter than its 8-byte header length", true);
    return;
  }
  uint64_t n = le64(b.data());
  if (n > 100'000'000) {
    sink.malformed("header", "safetensors header of " + std::to_string(n) + " bytes exceeds the format's 100 MB limit",
                   true);
    return;
  }
  if (n > b.size() - 8) {
    sink.malformed("header", "safetensors header length " + std::to_string(n) + " runs past the end of the file", true);
    return;
  }
  Bytes text = b.substr(8, n);
  if (text.empty() || text.front() != '{') {
    sink.ambiguous("brace",
                   "safetensors header does not start with `{`: the spec requires it, the Rust reader does not check");
  }
  std::vector<std::string> duplicates;
  HeaderSax sax(duplicates);
  bool parsed = json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json, true);
  if (!parsed || !sax.result.is_object()) {
    sink.malformed("header",
                   "safetensors header is not a JSON object" + (sax.error.empty() ? std::string() : ": " + sax.error),
                   true);
    return;
  }
  for (const auto& d : duplicates) {
    sink.ambiguous("duplicate", "safetensors header repeats the key `" + d + "`: parsers disagree on which value wins");
  }
  struct Slice {
    std::string name;
    uint64_t begin, end;
  };
  std::vector<Slice> slices;
  for (auto& [name, info] : sax.result.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) {
        sink.malformed("metadata", "`__metadata__` is not an object", true);
        continue;
      }
      for (auto& [k, v] : info.items()) {
        if (!v.is_string()) {
          sink.malformed("metadata", "`__metadata__` value `" + k + "` is not a string: the Rust reader refuses it",
                         true);
          continue;
        }
        file.metadata.emplace_back(k, v.get<std::string>());
      }
      continue;
    }
    const std::string& tensor_name = name;  // (clang < 16 cannot capture a structured binding)
    auto fail = [&](const std::string& why) { sink.malformed("tensor", "tensor `" + tensor_name + "`: " + why, true); };
    if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") || !info.contains("data_offsets")) {
      fail("needs `dtype`, `shape` and `data_offsets`");
      continue;
    }
    const json& dt = info["dtype"];
    const json& shape = info["shape"];
    const json& offsets = info["data_offsets"];
    if (!dt.is_string() || !shape.is_array() || !offsets.is_array() || offsets.size() != 2 ||
        !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      fail("malformed dtype, shape or data_offsets");
      continue;
    }
    std::string dtype_name = dt.get<std::string>();
    uint32_t bits = dtype_bits(dtype_name);
    if (!bits) {
      fail("unknown dtype `" + dtype_name + "`");
      continue;
    }
    TensorInfo t;
    t.name = name;
    t.dtype = dtype_from_safetensors(dtype_name).value_or(DType::kSubByte);
    uint64_t numel = 1;
    bool ok = true;
    for (const auto& d : shape) {
      if (!d.is_number_unsigned()) {
        ok = false;
        break;
      }
      auto v = d.get<uint64_t>();
      auto m = checked_mul(numel, v);
      if (!m || v > INT64_MAX) {
        ok = false;
        break;
      }
      numel = *m;
      t.shape.push_back(static_cast<int64_t>(v));
    }
    if (!ok) {
      fail("shape is not a list of sizes, or its element count overflows");
      continue;
    }
    uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    auto total_bits = checked_mul(numel, bits);
    if (end < begin) {
      fail("data_offsets end before they begin");
      continue;
    }
    if (!total_bits || *total_bits % 8 != 0) {
      fail("element count times bit width is not a whole number of bytes");
      continue;
    }
    if (end - begin != *total_bits / 8) {
      fail("data_offsets span " + std::to_string(end - begin) + " bytes, the shape needs " +
           std::to_string(*total_bits / 8));
      continue;
    }
    t.numel = numel;
    t.stride.resize(t.shape.size());
    int64_t s = 1;
    for (size_t i = t.shape.size(); i-- > 0;) {
      t.stride[i] = s;
      s *= std::max<int64_t>(t.shape[i], 1);
    }
    StorageInfo st;
    st.key = name;
    st.dtype = t.dtype;
    st.location = "cpu";
    st.numel = bits % 8 == 0 ? numel : (end - begin);
    if (bits % 8 != 0) st.dtype = DType::kUInt8;
    st.found = range_fits(8 + n + begin, end - begin, b.size());
    st.available_bytes = end - begin;
    st.data_offset = 8 + n + begin;
    st.tensors = 1;
    t.storage = static_cast<int32_t>(file.storages.size());
    file.storages.push_back(std::move(st));
    file.tensors.push_back(std::move(t));
    slices.push_back({name, begin, end});
  }
  // No gaps, no overlaps, no trailing bytes (MetadataIncompleteBuffer).
  std::sort(slices.begin(), slices.end(),
            [](const Slice& a, const Slice& c) { return std::tie(a.begin, a.end) < std::tie(c.begin, c.end); });
  uint64_t expected = 0;
  for (const auto& sl : slices) {
    if (sl.begin != expected) {
      sink.malformed("layout",
                     "tensor `" + sl.name + "` starts at " + std::to_string(sl.begin) +
                         " but the previous one ends at " + std::to_string(expected) +
                         " (gap or overlap): the Rust reader refuses the file",
                     true);
    }
    expected = std::max(expected, sl.end);
  }
  if (8 + n + expected != b.size()) {
    sink.malformed("layout",
                   "the byte buffer is " + std::to_string(b.size() - 8 - n) + " bytes, the tensors account for " +
                       std::to_string(expected) + ": the Rust reader refuses the file",
                   true);
  }
  file.format_detail = std::to_string(n) + "-byte header";
  for (const auto& [k, v] : file.metadata) {
    if (k == "format") file.format_detail += ", format " + v;
  }
}

}  // namespace torchlint::ckpt
