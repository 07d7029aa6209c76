#pragma once
// dtype names as torch spells them (float32, bfloat16, int64), both ways.
#include <c10/core/ScalarType.h>

#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "probe.h"

namespace torchlint::probe {

// Parallel to kInputDTypes (probe.h, which stays free of LibTorch headers).
inline constexpr c10::ScalarType kInputScalarTypes[] = {
    c10::ScalarType::Float, c10::ScalarType::Half, c10::ScalarType::BFloat16, c10::ScalarType::Double,
    c10::ScalarType::Long,  c10::ScalarType::Int,  c10::ScalarType::Short,    c10::ScalarType::Char,
    c10::ScalarType::Byte,  c10::ScalarType::Bool,
};
static_assert(std::size(kInputScalarTypes) == std::size(kInputDTypes));

inline std::optional<c10::ScalarType> scalar_type_named(std::string_view name) {
  for (size_t i = 0; i < std::size(kInputDTypes); ++i)
    if (kInputDTypes[i] == name) return kInputScalarTypes[i];
  return std::nullopt;
}

// `name` is one of kInputDTypes (the command line validated it).
inline c10::ScalarType scalar_type(std::string_view name) {
  return scalar_type_named(name).value_or(c10::ScalarType::Float);
}

inline std::string dtype_name(c10::ScalarType type) {
  for (size_t i = 0; i < std::size(kInputScalarTypes); ++i)
    if (kInputScalarTypes[i] == type) return std::string(kInputDTypes[i]);
  return c10::toString(type);
}

}  // namespace torchlint::probe
