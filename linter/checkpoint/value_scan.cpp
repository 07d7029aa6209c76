#include "value_scan.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "inflate.h"

namespace torchlint::ckpt {

namespace {

// Four lanes at a time with the compilers' vector extensions (SSE2 on baseline x86-64,
// NEON on aarch64): classify by exponent bits, keep min/max/sum of the finite values and
// count NaN and Inf, all without branches. Each block's partial sums are folded into a
// double, so the mean of 10^9 values stays accurate.
typedef float vf __attribute__((vector_size(16)));
typedef int32_t vi __attribute__((vector_size(16)));
typedef uint32_t vu __attribute__((vector_size(16)));
typedef uint16_t vh __attribute__((vector_size(8)));
constexpr int kLanes = 4;

inline float bf16_to_float(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

inline float f16_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  float normal = std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  float sub = static_cast<float>(mant) * 0x1p-24f;
  sub = sign ? -sub : sub;
  return exp == 0 ? sub : normal;
}

// Four float32 bit patterns (in host order) from four elements of each dtype.
__attribute__((always_inline)) inline vu load_f32(const char* p, bool swap) {
  vu bits;
  std::memcpy(&bits, p, sizeof bits);
  if (swap) {
    for (int j = 0; j < kLanes; ++j) bits[j] = __builtin_bswap32(bits[j]);
  }
  return bits;
}
__attribute__((always_inline)) inline vh load_16(const char* p, bool swap) {
  vh h;
  std::memcpy(&h, p, sizeof h);
  if (swap) h = (h << 8) | (h >> 8);
  return h;
}
__attribute__((always_inline)) inline vu bf16_bits(vh h) { return __builtin_convertvector(h, vu) << 16; }
// float16 -> float32 bits; subnormals exactly, Inf/NaN classified by the caller.
__attribute__((always_inline)) inline vu f16_bits(vh h16) {
  vu h = __builtin_convertvector(h16, vu);
  vu sign = (h & 0x8000u) << 16;
  vu exp = (h >> 10) & 0x1fu;
  vu mant = h & 0x3ffu;
  vu normal = sign | ((exp + 112u) << 23) | (mant << 13);
  vf sub = __builtin_convertvector(mant, vf) * 0x1p-24f;
  vu sub_bits = std::bit_cast<vu>(sub) | sign;
  return exp == 0u ? sub_bits : normal;
}

struct Block {
  vf mn, mx, sum;
  vi nonfinite, nan;  // counted as -1 per hit (vector comparisons give -1)
  Block() {
    mn = vf{} + std::numeric_limits<float>::infinity();
    mx = vf{} - std::numeric_limits<float>::infinity();
    sum = vf{};
    nonfinite = vi{};
    nan = vi{};
  }
  // `bits`: float32 patterns; `nonfinite_mask`/`nan_mask`: -1 where the source value was.
  __attribute__((always_inline)) void add(vu bits, vi nonfinite_mask, vi nan_mask) {
    vf v = std::bit_cast<vf>(bits);
    vi finite = ~nonfinite_mask;
    vf inf = vf{} + std::numeric_limits<float>::infinity();
    vf lo = std::bit_cast<vf>((std::bit_cast<vi>(v) & finite) | (std::bit_cast<vi>(inf) & nonfinite_mask));
    vf hi = std::bit_cast<vf>((std::bit_cast<vi>(v) & finite) | (std::bit_cast<vi>(-inf) & nonfinite_mask));
    sum += std::bit_cast<vf>(std::bit_cast<vi>(v) & finite);
    mn = lo < mn ? lo : mn;
    mx = hi > mx ? hi : mx;
    nonfinite += nonfinite_mask;
    nan += nan_mask;
  }
  void fold(uint64_t n, ValueStats& stats, double& total) const {
    uint64_t bad = 0, nans = 0;
    double block_sum = 0;
    float lo = std::numeric_limits<float>::infinity(), hi = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < kLanes; ++j) {
      bad += static_cast<uint64_t>(-static_cast<int64_t>(nonfinite[j]));
      nans += static_cast<uint64_t>(-static_cast<int64_t>(nan[j]));
      block_sum += sum[j];
      lo = std::min(lo, mn[j]);
      hi = std::max(hi, mx[j]);
    }
    if (n > bad) {
      stats.min = stats.finite == 0 ? lo : std::min<double>(stats.min, lo);
      stats.max = stats.finite == 0 ? hi : std::max<double>(stats.max, hi);
    }
    stats.nan += nans;
    stats.inf += bad - nans;
    stats.finite += n - bad;
    total += block_sum;
  }
};

// The elements past the last full vector, one at a time.
void scan_tail(DType dtype, const char* data, uint64_t n, bool swap, ValueStats& stats, double& sum) {
  for (uint64_t i = 0; i < n; ++i) {
    float v;
    bool finite, is_nan;
    if (dtype == DType::kFloat32) {
      uint32_t bits;
      std::memcpy(&bits, data + 4 * i, 4);
      if (swap) bits = __builtin_bswap32(bits);
      finite = (bits & 0x7f800000u) != 0x7f800000u;
      is_nan = !finite && (bits & 0x007fffffu);
      v = std::bit_cast<float>(bits);
    } else {
      uint16_t h;
      std::memcpy(&h, data + 2 * i, 2);
      if (swap) h = __builtin_bswap16(h);
      if (dtype == DType::kFloat16) {
        finite = (h & 0x7c00u) != 0x7c00u;
        is_nan = !finite && (h & 0x03ffu);
        v = f16_to_float(h);
      } else {
        finite = (h & 0x7f80u) != 0x7f80u;
        is_nan = !finite && (h & 0x007fu);
        v = bf16_to_float(h);
      }
    }
    if (!finite) {
      (is_nan ? stats.nan : stats.inf) += 1;
      continue;
    }
    if (stats.finite == 0) stats.min = stats.max = v;
    stats.min = std::min<double>(stats.min, v);
    stats.max = std::max<double>(stats.max, v);
    sum += v;
    ++stats.finite;
  }
}

void scan_f64(const char* data, uint64_t n, bool swap, ValueStats& stats, double& sum) {
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t bits;
    std::memcpy(&bits, data + 8 * i, 8);
    if (swap) bits = __builtin_bswap64(bits);
    if ((bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull) {
      if (bits & 0x000fffffffffffffull)
        ++stats.nan;
      else
        ++stats.inf;
      continue;
    }
    double v = std::bit_cast<double>(bits);
    if (stats.finite == 0) stats.min = stats.max = v;
    stats.min = std::min(stats.min, v);
    stats.max = std::max(stats.max, v);
    sum += v;
    ++stats.finite;
  }
}

}  // namespace

void accumulate_values(DType dtype, const char* data, uint64_t n, bool swap, ValueStats& stats, double& sum) {
  if (dtype == DType::kFloat64) {
    scan_f64(data, n, swap, stats, sum);
    return;
  }
  if (dtype != DType::kFloat32 && dtype != DType::kFloat16 && dtype != DType::kBFloat16) return;
  const uint64_t width = dtype == DType::kFloat32 ? 4 : 2;
  constexpr uint64_t kBlock = 4096;  // elements per block (a multiple of kLanes)
  uint64_t full = n / kLanes * kLanes;
  for (uint64_t start = 0; start < full; start += kBlock) {
    uint64_t m = std::min(kBlock, full - start);
    const char* p = data + start * width;
    Block b;
    if (dtype == DType::kFloat32) {
      for (uint64_t i = 0; i < m; i += kLanes) {
        vu bits = load_f32(p + 4 * i, swap);
        vi nonfinite = (bits & 0x7f800000u) == 0x7f800000u;
        vi nan = nonfinite & ((bits & 0x007fffffu) != 0u);
        b.add(bits, nonfinite, nan);
      }
    } else if (dtype == DType::kBFloat16) {
      for (uint64_t i = 0; i < m; i += kLanes) {
        vu bits = bf16_bits(load_16(p + 2 * i, swap));
        vi nonfinite = (bits & 0x7f800000u) == 0x7f800000u;
        vi nan = nonfinite & ((bits & 0x007fffffu) != 0u);
        b.add(bits, nonfinite, nan);
      }
    } else {
      for (uint64_t i = 0; i < m; i += kLanes) {
        vh h = load_16(p + 2 * i, swap);
        vu h32 = __builtin_convertvector(h, vu);
        vi nonfinite = (h32 & 0x7c00u) == 0x7c00u;
        vi nan = nonfinite & ((h32 & 0x03ffu) != 0u);
        b.add(f16_bits(h), nonfinite, nan);
      }
    }
    b.fold(m, stats, sum);
  }
  scan_tail(dtype, data + full * width, n - full, swap, stats, sum);
}

namespace {

bool scannable(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat64;
}

// The bytes [begin, end) of a storage, in chunks, from the map or through zlib.
class StorageReader {
 public:
  StorageReader(const CheckpointFile& file, const StorageInfo& s) : file_(file), s_(s) {}

  template <class Fn>
  bool read(uint64_t begin, uint64_t end, Fn&& fn, std::string& error) {
    Bytes all = file_.bytes->bytes();
    if (s_.compressed_bytes == 0) {
      if (!range_fits(s_.data_offset, end, all.size()) || end > s_.available_bytes) {
        error = "storage bytes run past the end of the file";
        return false;
      }
      constexpr uint64_t kChunk = 8u << 20;
      for (uint64_t pos = begin; pos < end; pos += kChunk) {
        uint64_t n = std::min(kChunk, end - pos);
        file_.bytes->advise_sequential(s_.data_offset + pos, n);
        fn(all.data() + s_.data_offset + pos, n);
        // Unmap what was read: the file stays in the page cache, the process stays small.
        file_.bytes->advise_done(s_.data_offset + pos, n);
      }
      return true;
    }
    if (!range_fits(s_.data_offset, s_.compressed_bytes, all.size())) {
      error = "compressed storage runs past the end of the file";
      return false;
    }
    InflateStream stream(all.substr(s_.data_offset, s_.compressed_bytes));
    std::string buf(1u << 20, '\0');
    uint64_t pos = 0;
    std::string carry;
    while (pos < end) {
      size_t got = stream.read(buf.data(), buf.size());
      if (got == 0) {
        error = stream.failed() ? "compressed storage is corrupt" : "compressed storage is shorter than declared";
        return false;
      }
      uint64_t chunk_begin = pos, chunk_end = pos + got;
      pos = chunk_end;
      uint64_t from = std::max(begin, chunk_begin), to = std::min(end, chunk_end);
      if (from >= to) continue;
      // Elements may straddle chunks: hand over whole elements only.
      carry.append(buf.data() + (from - chunk_begin), to - from);
      size_t whole = carry.size() / element_ * element_;
      if (whole) {
        fn(carry.data(), whole);
        carry.erase(0, whole);
      }
    }
    return true;
  }
  void set_element_size(uint64_t e) { element_ = std::max<uint64_t>(1, e); }

 private:
  const CheckpointFile& file_;
  const StorageInfo& s_;
  uint64_t element_ = 1;
};

bool tensor_values(const CheckpointFile& file, const TensorInfo& t, ValueStats& stats, double& sum,
                   const std::function<void(uint64_t)>& advance) {
  if (t.storage < 0) {
    stats.error = "no storage";
    return false;
  }
  const StorageInfo& s = file.storages[t.storage];
  if (!s.found || !t.bounds_ok) {
    stats.error = "storage missing or too small";
    return false;
  }
  uint64_t el = dtype_bytes(t.dtype);
  StorageReader reader(file, s);
  reader.set_element_size(el);
  std::string error;
  bool ok;
  if (t.contiguous()) {
    uint64_t begin = static_cast<uint64_t>(t.storage_offset) * el;
    ok = reader.read(
        begin, begin + t.numel * el,
        [&](const char* d, uint64_t n) {
          accumulate_values(t.dtype, d, n / el, s.big_endian, stats, sum);
          advance(n);
        },
        error);
  } else if (s.compressed_bytes == 0) {
    // A strided view: visit exactly its elements.
    Bytes all = file.bytes->bytes();
    std::vector<int64_t> index(t.shape.size(), 0);  // the element's coordinates
    for (uint64_t k = 0; k < t.numel; ++k) {
      uint64_t off = static_cast<uint64_t>(t.storage_offset);
      for (size_t d = 0; d < index.size(); ++d) off += static_cast<uint64_t>(index[d] * t.stride[d]);
      if (!range_fits(s.data_offset + off * el, el, all.size())) {
        stats.error = "element outside the file";
        return false;
      }
      accumulate_values(t.dtype, all.data() + s.data_offset + off * el, 1, s.big_endian, stats, sum);
      for (size_t d = index.size(); d-- > 0;) {
        if (++index[d] < t.shape[d]) break;
        index[d] = 0;
      }
    }
    advance(t.numel * el);
    ok = true;
  } else {
    stats.error = "strided view of a compressed storage";
    return false;
  }
  if (!ok) stats.error = error;
  return ok;
}

}  // namespace

void scan_values(CheckpointFile& file, const std::function<void(uint64_t, uint64_t)>& progress) {
  file.stats.assign(file.tensors.size(), {});
  file.values_scanned = true;
  uint64_t total = 0, done = 0;
  for (const auto& t : file.tensors) {
    if (scannable(t.dtype)) total += t.nbytes();
  }
  auto advance = [&](uint64_t n) {
    done += n;
    if (progress) progress(done, total);
  };
  for (size_t i = 0; i < file.tensors.size(); ++i) {
    const TensorInfo& t = file.tensors[i];
    ValueStats& st = file.stats[i];
    if (!scannable(t.dtype) || t.numel == 0) continue;
    double sum = 0;
    if (tensor_values(file, t, st, sum, advance)) {
      st.scanned = true;
      st.mean = st.finite ? sum / static_cast<double>(st.finite) : 0;
    }
  }
}

namespace {

bool comparable(DType d) {
  switch (d) {
    case DType::kFloat64:
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kInt64:
    case DType::kInt32:
    case DType::kInt16:
    case DType::kInt8:
    case DType::kUInt64:
    case DType::kUInt32:
    case DType::kUInt16:
    case DType::kUInt8:
    case DType::kBool:
      return true;
    default:
      return false;
  }
}

// One element as a double (exact for integers below 2^53; larger ones still compare by
// their bits below).
double element(DType dtype, const char* p, bool swap) {
  auto load = [&]<class U>(U) {
    U bits;
    std::memcpy(&bits, p, sizeof(U));
    if (swap) {
      if constexpr (sizeof(U) == 8)
        bits = static_cast<U>(__builtin_bswap64(static_cast<uint64_t>(bits)));
      else if constexpr (sizeof(U) == 4)
        bits = static_cast<U>(__builtin_bswap32(static_cast<uint32_t>(bits)));
      else if constexpr (sizeof(U) == 2)
        bits = static_cast<U>(__builtin_bswap16(static_cast<uint16_t>(bits)));
    }
    return bits;
  };
  switch (dtype) {
    case DType::kFloat64:
      return std::bit_cast<double>(load(uint64_t{}));
    case DType::kFloat32:
      return std::bit_cast<float>(load(uint32_t{}));
    case DType::kFloat16:
      return f16_to_float(load(uint16_t{}));
    case DType::kBFloat16:
      return bf16_to_float(load(uint16_t{}));
    case DType::kInt64:
      return static_cast<double>(load(int64_t{}));
    case DType::kInt32:
      return load(int32_t{});
    case DType::kInt16:
      return load(int16_t{});
    case DType::kInt8:
      return load(int8_t{});
    case DType::kUInt64:
      return static_cast<double>(load(uint64_t{}));
    case DType::kUInt32:
      return load(uint32_t{});
    case DType::kUInt16:
      return load(uint16_t{});
    default:
      return static_cast<uint8_t>(*p);  // uint8, bool
  }
}

}  // namespace

std::optional<ValueDifference> compare_values(const CheckpointFile& a, const TensorInfo& ta, const CheckpointFile& b,
                                              const TensorInfo& tb) {
  if (ta.dtype != tb.dtype || ta.numel != tb.numel || !comparable(ta.dtype) || !ta.contiguous() || !tb.contiguous())
    return std::nullopt;
  if (ta.storage < 0 || tb.storage < 0) return std::nullopt;
  const StorageInfo& sa = a.storages[ta.storage];
  const StorageInfo& sb = b.storages[tb.storage];
  if (!sa.found || !sb.found || sa.compressed_bytes || sb.compressed_bytes || !ta.bounds_ok || !tb.bounds_ok)
    return std::nullopt;
  uint64_t el = dtype_bytes(ta.dtype);
  Bytes fa = a.bytes->bytes(), fb = b.bytes->bytes();
  uint64_t oa = sa.data_offset + static_cast<uint64_t>(ta.storage_offset) * el;
  uint64_t ob = sb.data_offset + static_cast<uint64_t>(tb.storage_offset) * el;
  if (!range_fits(oa, ta.numel * el, fa.size()) || !range_fits(ob, tb.numel * el, fb.size())) return std::nullopt;
  const bool floating = ta.dtype == DType::kFloat64 || ta.dtype == DType::kFloat32 || ta.dtype == DType::kFloat16 ||
                        ta.dtype == DType::kBFloat16;
  ValueDifference out;
  constexpr uint64_t kChunk = 16ull << 20;  // bytes per side between hand-backs
  uint64_t per_chunk = std::max<uint64_t>(1, kChunk / el);
  for (uint64_t begin = 0; begin < ta.numel; begin += per_chunk) {
    uint64_t end = std::min(ta.numel, begin + per_chunk);
    a.bytes->advise_sequential(oa + begin * el, (end - begin) * el);
    b.bytes->advise_sequential(ob + begin * el, (end - begin) * el);
    // Most of two checkpoints' tensors are bit-identical: compare whole chunks first.
    bool same_chunk = sa.big_endian == sb.big_endian &&
                      std::memcmp(fa.data() + oa + begin * el, fb.data() + ob + begin * el, (end - begin) * el) == 0;
    for (uint64_t i = same_chunk ? end : begin; i < end; ++i) {
      const char* pa = fa.data() + oa + i * el;
      const char* pb = fb.data() + ob + i * el;
      if (sa.big_endian == sb.big_endian && std::memcmp(pa, pb, el) == 0) continue;  // same bits
      double x = element(ta.dtype, pa, sa.big_endian), y = element(ta.dtype, pb, sb.big_endian);
      if (floating && (std::isnan(x) || std::isnan(y))) {
        if (std::isnan(x) != std::isnan(y)) {
          ++out.nan_mismatch;
          ++out.differing;
        }
        continue;
      }
      if (x == y) continue;  // -0.0 and 0.0, or the same value in another byte order
      ++out.differing;
      out.max_abs = std::max(out.max_abs, std::fabs(x - y));
    }
    a.bytes->advise_done(oa + begin * el, (end - begin) * el);
    b.bytes->advise_done(ob + begin * el, (end - begin) * el);
  }
  return out;
}

}  // namespace torchlint::ckpt
