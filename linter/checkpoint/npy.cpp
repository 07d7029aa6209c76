// NumPy .npy (checkpoint-formats.md §10): the header is a Python literal, parsed as data
// and never evaluated; an object dtype means a pickle follows, which is walked like any
// other.
#include <algorithm>
#include <cctype>

#include "readers.h"

namespace torchlint::ckpt {

namespace {

// A Python literal: strings, ints, True/False/None, tuples, lists, dicts.
struct Literal {
  enum class Kind { kString, kInt, kBool, kNone, kSequence, kDict } kind = Kind::kNone;
  std::string text;
  int64_t number = 0;
  std::vector<Literal> items;  // sequences; dicts alternate key, value
};

class LiteralParser {
 public:
  explicit LiteralParser(std::string_view s) : s_(s) {}
  std::optional<Literal> parse(std::string& error) {
    auto v = value(0);
    skip();
    if (!v || pos_ != s_.size()) {
      error = "header is not a Python literal";
      return std::nullopt;
    }
    return v;
  }

 private:
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<Literal> value(int depth) {
    if (depth > 32) return std::nullopt;
    skip();
    if (pos_ >= s_.size()) return std::nullopt;
    char c = s_[pos_];
    Literal out;
    if (c == '\'' || c == '"') {
      ++pos_;
      out.kind = Literal::Kind::kString;
      while (pos_ < s_.size() && s_[pos_] != c) {
        if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
        out.text += s_[pos_++];
      }
      if (pos_ >= s_.size()) return std::nullopt;
      ++pos_;
      return out;
    }
    if (c == '(' || c == '[' || c == '{') {
      char close = c == '(' ? ')' : c == '[' ? ']' : '}';
      ++pos_;
      out.kind = c == '{' ? Literal::Kind::kDict : Literal::Kind::kSequence;
      while (!eat(close)) {
        auto item = value(depth + 1);
        if (!item) return std::nullopt;
        out.items.push_back(std::move(*item));
        if (c == '{') {
          if (!eat(':')) return std::nullopt;
          auto v = value(depth + 1);
          if (!v) return std::nullopt;
          out.items.push_back(std::move(*v));
        }
        if (!eat(',')) {
          if (!eat(close)) return std::nullopt;
          break;
        }
      }
      return out;
    }
    for (std::string_view word : {"True", "False", "None"}) {
      if (s_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        out.kind = word == "None" ? Literal::Kind::kNone : Literal::Kind::kBool;
        out.number = word == "True";
        return out;
      }
    }
    size_t start = pos_;
    if (c == '-' || c == '+') ++pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;
    std::string digits(s_.substr(start, pos_ - start));
    if (!digits.empty() && digits.back() == 'L') digits.pop_back();
    if (digits.empty() || digits == "-" || digits == "+" || digits.size() > 18) return std::nullopt;
    out.kind = Literal::Kind::kInt;
    out.number = std::stoll(digits);
    return out;
  }
  std::string_view s_;
  size_t pos_ = 0;
};

bool has_object_field(const Literal& descr) {
  if (descr.kind == Literal::Kind::kString) return descr.text.find('O') != std::string::npos;
  return std::any_of(descr.items.begin(), descr.items.end(), has_object_field);
}

}  // namespace

std::optional<NpyHeader> parse_npy_header(std::string_view text, std::string& error) {
  auto lit = LiteralParser(text).parse(error);
  if (!lit) return std::nullopt;
  if (lit->kind != Literal::Kind::kDict) {
    error = "header is not a dict";
    return std::nullopt;
  }
  NpyHeader h;
  bool have_descr = false, have_shape = false;
  for (size_t i = 0; i + 1 < lit->items.size(); i += 2) {
    const Literal& k = lit->items[i];
    const Literal& v = lit->items[i + 1];
    if (k.kind != Literal::Kind::kString) continue;
    if (k.text == "descr") {
      have_descr = true;
      h.object = has_object_field(v);
      h.descr = v.kind == Literal::Kind::kString ? v.text : "structured";
    } else if (k.text == "fortran_order") {
      h.fortran_order = v.kind == Literal::Kind::kBool && v.number;
    } else if (k.text == "shape") {
      have_shape = v.kind == Literal::Kind::kSequence;
      for (const auto& d : v.items) {
        if (d.kind != Literal::Kind::kInt || d.number < 0) {
          error = "shape holds something other than sizes";
          return std::nullopt;
        }
        h.shape.push_back(d.number);
      }
    }
  }
  if (!have_descr || !have_shape) {
    error = "header lacks `descr` or `shape`";
    return std::nullopt;
  }
  return h;
}

void read_npy(CheckpointFile& file, const ReaderOptions& options) {
  IssueSink sink(file.issues);
  Bytes b = file.bytes->bytes();
  if (b.size() < 10) {
    sink.malformed("npy", ".npy file ends inside its header", true);
    return;
  }
  unsigned major = static_cast<uint8_t>(b[6]);
  uint64_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = le16(b.data() + 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) {
      sink.malformed("npy", ".npy file ends inside its header", true);
      return;
    }
    header_len = le32(b.data() + 8);
    start = 12;
  } else {
    sink.malformed("npy", ".npy format version " + std::to_string(major) + " is unknown", true);
    return;
  }
  if (!range_fits(start, header_len, b.size())) {
    sink.malformed("npy", ".npy header runs past the end of the file", true);
    return;
  }
  std::string error;
  auto header = parse_npy_header(b.substr(start, header_len), error);
  if (!header) {
    sink.malformed("npy", ".npy " + error, true);
    return;
  }
  uint64_t data = start + header_len;
  file.metadata.emplace_back("descr", header->descr);
  file.format_detail = "version " + std::to_string(major) + ", dtype " + header->descr;
  if (header->object) {
    // np.load(allow_pickle=True) unpickles the rest with the full unpickler.
    file.format_detail += " (object array: a pickle follows)";
    PickleScan& s = scan_pickle(file, b, data, 0, "object array pickle", PickleDialect::kTorchLoad, false, options);
    file.main_pickle = static_cast<int>(file.pickles.size() - 1);
    if (!s.run.complete()) sink.malformed("pickle", "object array pickle: " + s.run.error, true);
    return;
  }
  bool big_endian = false;
  auto dtype = dtype_from_numpy(header->descr, big_endian);
  if (!dtype) return;  // structured or exotic dtypes: nothing more to check
  TensorInfo t;
  t.name = "array";
  t.dtype = *dtype;
  t.shape = header->shape;
  uint64_t numel = 1;
  for (int64_t d : t.shape) {
    auto m = checked_mul(numel, static_cast<uint64_t>(d));
    if (!m) {
      sink.malformed("npy", ".npy shape overflows", true);
      return;
    }
    numel = *m;
  }
  t.numel = numel;
  t.stride.assign(t.shape.size(), 1);
  int64_t s = 1;
  if (header->fortran_order) {
    for (size_t i = 0; i < t.shape.size(); ++i) {
      t.stride[i] = s;
      s *= std::max<int64_t>(t.shape[i], 1);
    }
  } else {
    for (size_t i = t.shape.size(); i-- > 0;) {
      t.stride[i] = s;
      s *= std::max<int64_t>(t.shape[i], 1);
    }
  }
  auto nbytes = checked_mul(numel, dtype_bytes(*dtype));
  StorageInfo st;
  st.key = "array";
  st.dtype = *dtype;
  st.location = "cpu";
  st.numel = numel;
  st.data_offset = data;
  st.available_bytes = b.size() - data;
  st.found = true;
  st.big_endian = big_endian;
  st.tensors = 1;
  if (!nbytes || *nbytes > b.size() - data) {
    sink.malformed("npy", ".npy data is shorter than its shape needs (" + std::to_string(b.size() - data) + " bytes)",
                   true);
  }
  t.storage = 0;
  file.storages.push_back(std::move(st));
  file.tensors.push_back(std::move(t));
}

}  // namespace torchlint::ckpt
