#pragma once
// Element types of tensors, with the spellings of every format that names them:
// torch storage classes (`FloatStorage`), torch dtype globals (`torch.float32`),
// safetensors (`F32`) and NumPy descriptors (`<f4`).
#include <cstdint>
#include <optional>
#include <string_view>

namespace torchlint::ckpt {

enum class DType : uint8_t {
  kUnknown,
  kFloat64,
  kFloat32,
  kFloat16,
  kBFloat16,
  kFloat8E5M2,
  kFloat8E4M3FN,
  kFloat8E5M2FNUZ,
  kFloat8E4M3FNUZ,
  kFloat8E8M0,
  kFloat4,
  kComplex128,
  kComplex64,
  kComplex32,
  kInt64,
  kInt32,
  kInt16,
  kInt8,
  kUInt64,
  kUInt32,
  kUInt16,
  kUInt8,
  kBool,
  kQUInt8,
  kQInt8,
  kQInt32,
  kQUInt4x2,
  kQUInt2x4,
  kSubByte,
};

struct DTypeInfo {
  DType dtype;
  std::string_view name;  // torch's name: "float32"
  uint8_t bits;           // per element
  bool floating;          // real floating point (what a NaN/Inf scan reads)
};

const DTypeInfo& dtype_info(DType d);
inline uint64_t dtype_bytes(DType d) { return (dtype_info(d).bits + 7) / 8; }

// `FloatStorage` (module torch or torch.cuda), `UntypedStorage` -> uint8.
std::optional<DType> dtype_from_storage_class(std::string_view name);
// `float32`, `float`, `half`, ... (attribute names of torch).
std::optional<DType> dtype_from_torch_name(std::string_view name);
// safetensors' `F32`, `BF16`, ...
std::optional<DType> dtype_from_safetensors(std::string_view name);
// NumPy `<f4`, `|u1`, `>f8` ...; sets big_endian.
std::optional<DType> dtype_from_numpy(std::string_view descr, bool& big_endian);

}  // namespace torchlint::ckpt
