#include "backends/interpreter/float_format.h"

#include <bit>
#include <cmath>
#include <limits>

namespace blocc::interp {

uint32_t FloatFormat::max_finite() const {
  uint32_t all_mantissa = (uint32_t{1} << mantissa_bits) - 1;
  uint32_t top_exponent = (uint32_t{1} << exponent_bits) - 1;
  if (has_infinity)
    return ((top_exponent - 1) << mantissa_bits) | all_mantissa;
  // The top binade is finite except for its all-ones NaN pattern.
  return (top_exponent << mantissa_bits) | (all_mantissa - 1);
}

uint32_t FloatFormat::quiet_nan() const {
  uint32_t top_exponent = (uint32_t{1} << exponent_bits) - 1;
  if (has_infinity)
    return (top_exponent << mantissa_bits) |
           (uint32_t{1} << (mantissa_bits - 1));
  return (top_exponent << mantissa_bits) | ((uint32_t{1} << mantissa_bits) - 1);
}

uint32_t FloatFormat::infinity() const {
  return ((uint32_t{1} << exponent_bits) - 1) << mantissa_bits;
}

double decode_float(uint32_t bits, const FloatFormat &f) {
  bool negative = (bits & f.sign_bit()) != 0;
  uint32_t magnitude = bits & (f.sign_bit() - 1);
  uint32_t exponent = magnitude >> f.mantissa_bits;
  uint32_t mantissa = magnitude & ((uint32_t{1} << f.mantissa_bits) - 1);
  uint32_t top_exponent = (uint32_t{1} << f.exponent_bits) - 1;
  double value;
  if (f.has_infinity && exponent == top_exponent) {
    value = mantissa == 0 ? std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.has_infinity && magnitude == f.quiet_nan()) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa),
                       1 - f.bias() - f.mantissa_bits);
  } else {
    value = std::ldexp(
        static_cast<double>(mantissa | (uint32_t{1} << f.mantissa_bits)),
        static_cast<int>(exponent) - f.bias() - f.mantissa_bits);
  }
  return negative ? -value : value;
}

namespace {

/// Rounds magnitude * 2^exponent (magnitude > 0) to nearest-even and
/// returns the encoding without sign, or nothing-fits as a value above
/// max_finite() (the caller handles overflow).
uint64_t round_magnitude(uint64_t magnitude, int exponent,
                         const FloatFormat &f) {
  int msb = 63 - std::countl_zero(magnitude);
  int value_exponent = msb + exponent; // floor(log2(value))
  int min_exponent = 1 - f.bias();
  // Weight (power of two) of the result's last mantissa bit: normal numbers
  // keep mantissa_bits below the leading one, subnormals share emin's.
  int lsb_weight =
      (value_exponent >= min_exponent ? value_exponent : min_exponent) -
      f.mantissa_bits;
  int shift = lsb_weight - exponent; // low bits of magnitude to drop
  uint64_t q;
  if (shift <= 0) {
    q = magnitude << -shift; // exact; at most mantissa_bits + 1 bits
  } else {
    q = shift >= 64 ? 0 : magnitude >> shift;
    uint64_t remainder =
        shift >= 64 ? magnitude : magnitude & ((uint64_t{1} << shift) - 1);
    // Compare the dropped bits with one half of the last kept bit.
    bool above_half, exactly_half;
    if (shift > 64) {
      above_half = false;
      exactly_half = false;
    } else {
      uint64_t half = uint64_t{1} << (shift - 1);
      above_half = remainder > half;
      exactly_half = remainder == half;
    }
    if (above_half || (exactly_half && (q & 1)))
      ++q;
  }
  if (q == 0)
    return 0;
  uint64_t implicit = uint64_t{1} << f.mantissa_bits;
  if (q >= (implicit << 1)) { // rounding carried into a new binade
    q >>= 1;
    ++lsb_weight;
  }
  if (q < implicit) // subnormal (lsb_weight is emin - mantissa_bits)
    return q;
  int64_t biased = int64_t{lsb_weight} + f.mantissa_bits + f.bias();
  if (biased >= (int64_t{1} << f.exponent_bits))
    return uint64_t{f.max_finite()} + 1; // far beyond the format: overflow
  return (static_cast<uint64_t>(biased) << f.mantissa_bits) | (q - implicit);
}

uint32_t finish(bool negative, uint64_t magnitude_bits, const FloatFormat &f,
                Overflow overflow) {
  uint32_t sign = negative ? f.sign_bit() : 0;
  if (magnitude_bits <= f.max_finite())
    return sign | static_cast<uint32_t>(magnitude_bits);
  if (overflow == Overflow::SaturateFinite)
    return sign | f.max_finite();
  return sign | (f.has_infinity ? f.infinity() : f.quiet_nan());
}

} // namespace

uint32_t encode_float(double value, const FloatFormat &f, Overflow overflow) {
  bool negative = std::signbit(value);
  if (std::isnan(value))
    return f.quiet_nan() | (negative ? f.sign_bit() : 0);
  if (std::isinf(value)) {
    if (overflow == Overflow::Infinity && f.has_infinity)
      return (negative ? f.sign_bit() : 0) | f.infinity();
    return finish(negative, uint64_t{f.max_finite()} + 1, f, overflow);
  }
  if (value == 0)
    return negative ? f.sign_bit() : 0;
  // Split the double into an integer mantissa and a power of two.
  uint64_t bits = std::bit_cast<uint64_t>(value);
  int biased = static_cast<int>((bits >> 52) & 0x7ff);
  uint64_t mantissa = bits & ((uint64_t{1} << 52) - 1);
  int exponent;
  if (biased == 0) {
    exponent = 1 - 1023 - 52;
  } else {
    mantissa |= uint64_t{1} << 52;
    exponent = biased - 1023 - 52;
  }
  return finish(negative, round_magnitude(mantissa, exponent, f), f, overflow);
}

uint32_t encode_integer(bool negative, uint64_t magnitude, const FloatFormat &f,
                        Overflow overflow) {
  if (magnitude == 0)
    return 0; // integers have no negative zero
  return finish(negative, round_magnitude(magnitude, 0, f), f, overflow);
}

double add_round_to_odd(double x, double y) {
  double sum = x + y;
  if (!std::isfinite(sum))
    return sum;
  // Knuth's TwoSum: sum + error == x + y exactly.
  double y_part = sum - x;
  double x_part = sum - y_part;
  double error = (x - x_part) + (y - y_part);
  if (error == 0)
    return sum;
  // The exact sum lies strictly between `sum` and its neighbour on the side
  // of `error`; exactly one of the two has an odd last bit.
  if ((std::bit_cast<uint64_t>(sum) & 1) != 0)
    return sum;
  return std::nextafter(sum, error > 0
                                 ? std::numeric_limits<double>::infinity()
                                 : -std::numeric_limits<double>::infinity());
}

} // namespace blocc::interp
