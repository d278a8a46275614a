// Element types as users name them (bl::float32, like tl.float32) and the
// host types that stand for the 16-bit floats in buffers.
#pragma once

#include "ir/type.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace blocc {

using DType = ir::Scalar;

inline constexpr DType int1 = ir::Scalar::I1;
inline constexpr DType int8 = ir::Scalar::I8;
inline constexpr DType int16 = ir::Scalar::I16;
inline constexpr DType int32 = ir::Scalar::I32;
inline constexpr DType int64 = ir::Scalar::I64;
inline constexpr DType uint8 = ir::Scalar::U8;
inline constexpr DType uint16 = ir::Scalar::U16;
inline constexpr DType uint32 = ir::Scalar::U32;
inline constexpr DType uint64 = ir::Scalar::U64;
inline constexpr DType float16 = ir::Scalar::F16;
inline constexpr DType bfloat16 = ir::Scalar::BF16;
inline constexpr DType float32 = ir::Scalar::F32;
inline constexpr DType float64 = ir::Scalar::F64;
inline constexpr DType float8e4m3 = ir::Scalar::F8E4M3;
inline constexpr DType float8e5m2 = ir::Scalar::F8E5M2;

/// IEEE binary16 as stored in host buffers. Arithmetic happens in float.
struct half {
  uint16_t bits = 0;
  half() = default;
  explicit half(float f);
  explicit operator float() const;
};

/// bfloat16 as stored in host buffers. Arithmetic happens in float.
struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  explicit bfloat16_t(float f);
  explicit operator float() const;
};

/// The DType of a C++ element type (for Ptr<T> and scalar arguments).
template <typename T> constexpr DType dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>)
    return int1;
  else if constexpr (std::is_same_v<U, int8_t>)
    return int8;
  else if constexpr (std::is_same_v<U, int16_t>)
    return int16;
  else if constexpr (std::is_same_v<U, int32_t>)
    return int32;
  else if constexpr (std::is_same_v<U, int64_t>)
    return int64;
  else if constexpr (std::is_same_v<U, uint8_t>)
    return uint8;
  else if constexpr (std::is_same_v<U, uint16_t>)
    return uint16;
  else if constexpr (std::is_same_v<U, uint32_t>)
    return uint32;
  else if constexpr (std::is_same_v<U, uint64_t>)
    return uint64;
  else if constexpr (std::is_same_v<U, half>)
    return float16;
  else if constexpr (std::is_same_v<U, bfloat16_t>)
    return bfloat16;
  else if constexpr (std::is_same_v<U, float>)
    return float32;
  else if constexpr (std::is_same_v<U, double>)
    return float64;
  else
    static_assert(sizeof(U) == 0, "blocc: no DType for this C++ type");
}

} // namespace blocc
