// fp8 values as bytes, for the tests that feed fp8 dots from the host (fp8
// has no host type: kernels load bytes and bitcast them).
#pragma once

#include <cmath>
#include <cstdint>

namespace blocc::fp8_bytes {

/// An fp8 byte's value: 1 sign bit, `exponent_bits` (4: E4M3, 5: E5M2)
/// with the IEEE bias, the rest mantissa; exponent 0 is subnormal.
inline double decode(uint8_t byte, int exponent_bits) {
  int mantissa_bits = 7 - exponent_bits;
  int bias = (1 << (exponent_bits - 1)) - 1;
  int e = (byte >> mantissa_bits) & ((1 << exponent_bits) - 1);
  int m = byte & ((1 << mantissa_bits) - 1);
  double scale = std::ldexp(1.0, -mantissa_bits);
  double v = e == 0 ? m * scale * std::ldexp(1.0, 1 - bias)
                    : (1 + m * scale) * std::ldexp(1.0, e - bias);
  return byte & 0x80 ? -v : v;
}

/// Whether the byte is a number (E4M3 keeps S.1111.111 for NaN, E5M2 its
/// largest exponent for inf and NaN).
inline bool is_number(uint8_t byte, int exponent_bits) {
  if (exponent_bits == 4)
    return (byte & 0x7f) != 0x7f;
  return (byte & 0x7c) != 0x7c;
}

} // namespace blocc::fp8_bytes
