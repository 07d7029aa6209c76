#include "dtype.h"

#include <array>

namespace torchlint::ckpt {

namespace {
constexpr std::array kInfos = {
    DTypeInfo{DType::kUnknown, "unknown", 8, false},
    DTypeInfo{DType::kFloat64, "float64", 64, true},
    DTypeInfo{DType::kFloat32, "float32", 32, true},
    DTypeInfo{DType::kFloat16, "float16", 16, true},
    DTypeInfo{DType::kBFloat16, "bfloat16", 16, true},
    DTypeInfo{DType::kFloat8E5M2, "float8_e5m2", 8, true},
    DTypeInfo{DType::kFloat8E4M3FN, "float8_e4m3fn", 8, true},
    DTypeInfo{DType::kFloat8E5M2FNUZ, "float8_e5m2fnuz", 8, true},
    DTypeInfo{DType::kFloat8E4M3FNUZ, "float8_e4m3fnuz", 8, true},
    DTypeInfo{DType::kFloat8E8M0, "float8_e8m0fnu", 8, true},
    DTypeInfo{DType::kFloat4, "float4_e2m1fn_x2", 8, true},
    DTypeInfo{DType::kComplex128, "complex128", 128, false},
    DTypeInfo{DType::kComplex64, "complex64", 64, false},
    DTypeInfo{DType::kComplex32, "complex32", 32, false},
    DTypeInfo{DType::kInt64, "int64", 64, false},
    DTypeInfo{DType::kInt32, "int32", 32, false},
    DTypeInfo{DType::kInt16, "int16", 16, false},
    DTypeInfo{DType::kInt8, "int8", 8, false},
    DTypeInfo{DType::kUInt64, "uint64", 64, false},
    DTypeInfo{DType::kUInt32, "uint32", 32, false},
    DTypeInfo{DType::kUInt16, "uint16", 16, false},
    DTypeInfo{DType::kUInt8, "uint8", 8, false},
    DTypeInfo{DType::kBool, "bool", 8, false},
    DTypeInfo{DType::kQUInt8, "quint8", 8, false},
    DTypeInfo{DType::kQInt8, "qint8", 8, false},
    DTypeInfo{DType::kQInt32, "qint32", 32, false},
    DTypeInfo{DType::kQUInt4x2, "quint4x2", 8, false},
    DTypeInfo{DType::kQUInt2x4, "quint2x4", 8, false},
    DTypeInfo{DType::kSubByte, "sub-byte", 8, false},
};

struct Alias {
  std::string_view name;
  DType dtype;
};
}  // namespace

const DTypeInfo& dtype_info(DType d) { return kInfos[static_cast<size_t>(d)]; }

std::optional<DType> dtype_from_storage_class(std::string_view name) {
  static constexpr std::array kStorages = {
      Alias{"DoubleStorage", DType::kFloat64},
      Alias{"FloatStorage", DType::kFloat32},
      Alias{"HalfStorage", DType::kFloat16},
      Alias{"BFloat16Storage", DType::kBFloat16},
      Alias{"LongStorage", DType::kInt64},
      Alias{"IntStorage", DType::kInt32},
      Alias{"ShortStorage", DType::kInt16},
      Alias{"CharStorage", DType::kInt8},
      Alias{"ByteStorage", DType::kUInt8},
      Alias{"BoolStorage", DType::kBool},
      Alias{"ComplexDoubleStorage", DType::kComplex128},
      Alias{"ComplexFloatStorage", DType::kComplex64},
      Alias{"QUInt8Storage", DType::kQUInt8},
      Alias{"QInt8Storage", DType::kQInt8},
      Alias{"QInt32Storage", DType::kQInt32},
      Alias{"QUInt4x2Storage", DType::kQUInt4x2},
      Alias{"QUInt2x4Storage", DType::kQUInt2x4},
      Alias{"UntypedStorage", DType::kUInt8},
  };
  for (const auto& a : kStorages) {
    if (a.name == name) return a.dtype;
  }
  return std::nullopt;
}

std::optional<DType> dtype_from_torch_name(std::string_view name) {
  static constexpr std::array kNames = {
      Alias{"float64", DType::kFloat64},
      Alias{"double", DType::kFloat64},
      Alias{"float32", DType::kFloat32},
      Alias{"float", DType::kFloat32},
      Alias{"float16", DType::kFloat16},
      Alias{"half", DType::kFloat16},
      Alias{"bfloat16", DType::kBFloat16},
      Alias{"float8_e5m2", DType::kFloat8E5M2},
      Alias{"float8_e4m3fn", DType::kFloat8E4M3FN},
      Alias{"float8_e5m2fnuz", DType::kFloat8E5M2FNUZ},
      Alias{"float8_e4m3fnuz", DType::kFloat8E4M3FNUZ},
      Alias{"float8_e8m0fnu", DType::kFloat8E8M0},
      Alias{"float4_e2m1fn_x2", DType::kFloat4},
      Alias{"complex128", DType::kComplex128},
      Alias{"cdouble", DType::kComplex128},
      Alias{"complex64", DType::kComplex64},
      Alias{"cfloat", DType::kComplex64},
      Alias{"complex32", DType::kComplex32},
      Alias{"chalf", DType::kComplex32},
      Alias{"int64", DType::kInt64},
      Alias{"long", DType::kInt64},
      Alias{"int32", DType::kInt32},
      Alias{"int", DType::kInt32},
      Alias{"int16", DType::kInt16},
      Alias{"short", DType::kInt16},
      Alias{"int8", DType::kInt8},
      Alias{"uint64", DType::kUInt64},
      Alias{"uint32", DType::kUInt32},
      Alias{"uint16", DType::kUInt16},
      Alias{"uint8", DType::kUInt8},
      Alias{"bool", DType::kBool},
      Alias{"quint8", DType::kQUInt8},
      Alias{"qint8", DType::kQInt8},
      Alias{"qint32", DType::kQInt32},
      Alias{"quint4x2", DType::kQUInt4x2},
      Alias{"quint2x4", DType::kQUInt2x4},
      Alias{"bits8", DType::kUInt8},
      Alias{"bits16", DType::kUInt16},
      Alias{"bits1x8", DType::kUInt8},
      Alias{"bits2x4", DType::kUInt8},
      Alias{"bits4x2", DType::kUInt8},
  };
  for (const auto& a : kNames) {
    if (a.name == name) return a.dtype;
  }
  if (name.size() == 5 && name.starts_with("uint") && name[4] >= '1' && name[4] <= '7') return DType::kSubByte;
  if (name.size() == 4 && name.starts_with("int") && name[3] >= '1' && name[3] <= '7') return DType::kSubByte;
  return std::nullopt;
}

std::optional<DType> dtype_from_safetensors(std::string_view name) {
  static constexpr std::array kNames = {
      Alias{"F64", DType::kFloat64},
      Alias{"F32", DType::kFloat32},
      Alias{"F16", DType::kFloat16},
      Alias{"BF16", DType::kBFloat16},
      Alias{"F8_E5M2", DType::kFloat8E5M2},
      Alias{"F8_E4M3", DType::kFloat8E4M3FN},
      Alias{"F8_E8M0", DType::kFloat8E8M0},
      Alias{"F8_E4M3FNUZ", DType::kFloat8E4M3FNUZ},
      Alias{"F8_E5M2FNUZ", DType::kFloat8E5M2FNUZ},
      Alias{"C64", DType::kComplex64},
      Alias{"I64", DType::kInt64},
      Alias{"I32", DType::kInt32},
      Alias{"I16", DType::kInt16},
      Alias{"I8", DType::kInt8},
      Alias{"U64", DType::kUInt64},
      Alias{"U32", DType::kUInt32},
      Alias{"U16", DType::kUInt16},
      Alias{"U8", DType::kUInt8},
      Alias{"BOOL", DType::kBool},
  };
  for (const auto& a : kNames) {
    if (a.name == name) return a.dtype;
  }
  return std::nullopt;
}

std::optional<DType> dtype_from_numpy(std::string_view descr, bool& big_endian) {
  big_endian = false;
  if (descr.size() < 2) return std::nullopt;
  char order = descr[0];
  if (order == '>')
    big_endian = true;
  else if (order != '<' && order != '|' && order != '=')
    return std::nullopt;
  std::string_view t = descr.substr(1);
  static constexpr std::array kNames = {
      Alias{"f8", DType::kFloat64},     Alias{"f4", DType::kFloat32},   Alias{"f2", DType::kFloat16},
      Alias{"c16", DType::kComplex128}, Alias{"c8", DType::kComplex64}, Alias{"i8", DType::kInt64},
      Alias{"i4", DType::kInt32},       Alias{"i2", DType::kInt16},     Alias{"i1", DType::kInt8},
      Alias{"u8", DType::kUInt64},      Alias{"u4", DType::kUInt32},    Alias{"u2", DType::kUInt16},
      Alias{"u1", DType::kUInt8},       Alias{"b1", DType::kBool},
  };
  for (const auto& a : kNames) {
    if (a.name == t) return a.dtype;
  }
  return std::nullopt;
}

}  // namespace torchlint::ckpt
