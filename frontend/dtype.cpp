// Host-side conversions of the 16-bit float storage types.
#include "blocc/dtype.h"

#include <cmath>

namespace blocc {

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

} // namespace

half::half(float f) {
  uint32_t u = bits_of(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) { // NaN: keep it quiet
    bits = static_cast<uint16_t>(sign | 0x7e00u);
    return;
  }
  if (magnitude >= 0x477ff000u) { // rounds to >= 65520: infinity
    bits = static_cast<uint16_t>(sign | 0x7c00u);
    return;
  }
  if (magnitude < 0x38800000u) {
    // Subnormal (or zero) in half: scale into the integer grid of 2^-24 and
    // let the FPU round to nearest even.
    float scaled = float_of(magnitude) * 16777216.0f; // * 2^24
    bits = static_cast<uint16_t>(sign |
                                 static_cast<uint32_t>(std::nearbyint(scaled)));
    return;
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits to
  // nearest even (a carry into the exponent is the right result).
  uint32_t rebased = magnitude - ((127u - 15u) << 23);
  uint32_t rounded = rebased + 0xfffu + ((rebased >> 13) & 1u);
  bits = static_cast<uint16_t>(sign | (rounded >> 13));
}

half::operator float() const {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) // zero or subnormal: mantissa * 2^-24
    return float_of(sign) +
           (sign ? -1.0f : 1.0f) * static_cast<float>(mantissa) * 0x1p-24f;
  if (exponent == 31)
    return float_of(sign | 0x7f800000u | (mantissa << 13));
  return float_of(sign | ((exponent + 127u - 15u) << 23) | (mantissa << 13));
}

bfloat16_t::bfloat16_t(float f) {
  uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    bits = static_cast<uint16_t>((u >> 16) | 0x40u); // quiet NaN
    return;
  }
  uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
  bits = static_cast<uint16_t>(rounded >> 16);
}

bfloat16_t::operator float() const {
  return float_of(static_cast<uint32_t>(bits) << 16);
}

} // namespace blocc
