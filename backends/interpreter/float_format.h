// Bit-exact conversions between double and the narrow float formats the IR
// stores (f16, bf16, f8e4m3, f8e5m2), written out by hand so that the
// interpreter does not depend on compiler extensions (_Float16, __bf16) whose
// rounding it is meant to check.
//
// Every value of every narrow format (and of f32) is exactly representable
// in double, so decoding is exact, and encoding from double rounds exactly
// once: round to nearest, ties to even.
#pragma once

#include <cstdint>

namespace blocc::interp {

/// What happens to a value whose rounded magnitude exceeds the largest
/// finite value of a format (and to infinities, for SaturateFinite).
enum class Overflow {
  /// IEEE behaviour: overflow gives infinity (formats with infinities) or
  /// NaN (formats without), infinities stay infinities.
  Infinity,
  /// OCP OFP8 "saturation mode" (NVIDIA's .satfinite): overflow and
  /// infinities clamp to the largest finite value of the same sign; NaN
  /// stays NaN.
  SaturateFinite,
};

/// A binary floating-point format with an implicit leading bit, gradual
/// underflow and a sign bit.
struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  /// IEEE-style: exponent all ones is infinity (mantissa 0) or NaN.
  /// Without infinities (OCP E4M3), only exponent and mantissa all ones is
  /// NaN and the rest of the top binade holds finite values.
  bool has_infinity;

  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  uint32_t sign_bit() const {
    return uint32_t{1} << (exponent_bits + mantissa_bits);
  }
  /// Encoding (without sign) of the largest finite magnitude.
  uint32_t max_finite() const;
  /// Encoding (without sign) of the canonical quiet NaN.
  uint32_t quiet_nan() const;
  /// Encoding (without sign) of infinity; only with has_infinity.
  uint32_t infinity() const;
};

inline constexpr FloatFormat kHalf{5, 10, true};
inline constexpr FloatFormat kBFloat16{8, 7, true};
inline constexpr FloatFormat kFloat8E4M3{4, 3, false}; // OCP E4M3 ("FN")
inline constexpr FloatFormat kFloat8E5M2{5, 2, true};  // OCP E5M2

/// The exact value of `bits` in `format`.
double decode_float(uint32_t bits, const FloatFormat &format);

/// `value` rounded to nearest-even in `format`.
uint32_t encode_float(double value, const FloatFormat &format,
                      Overflow overflow = Overflow::Infinity);

/// The exact integer value (-1)^negative * magnitude rounded to nearest-even
/// in `format`. Integers reach 64 bits, more than double holds, so they are
/// rounded from their exact value rather than through double (rounding
/// twice can differ from rounding once).
uint32_t encode_integer(bool negative, uint64_t magnitude,
                        const FloatFormat &format,
                        Overflow overflow = Overflow::Infinity);

/// x + y rounded to double with "round to odd": an inexact sum gets the
/// neighbour whose last mantissa bit is 1. Rounding that result again to a
/// format with at most 51 mantissa bits equals rounding the exact sum once,
/// which is how narrow-format fma stays correctly rounded.
double add_round_to_odd(double x, double y);

} // namespace blocc::interp
