#include "host_element.h"

#include "ir/error.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

namespace blocc::differential {

using ir::Scalar;

namespace {

double half_value(uint16_t h) {
  int exponent = (h >> 10) & 0x1f;
  int mantissa = h & 0x3ff;
  double magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(mantissa, -24);
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

uint16_t half_bits(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (std::isnan(v))
    return 0x7e00; // the quiet NaN
  if (std::isinf(v))
    return static_cast<uint16_t>(sign | 0x7c00);
  if (a == 0)
    return sign;
  int exponent = std::ilogb(a); // a = 1.f * 2^exponent
  uint32_t bits;
  if (exponent < -14) { // subnormal: a multiple of 2^-24
    double m = std::ldexp(a, 24);
    if (m != std::trunc(m) || m >= 1024)
      throw Error("internal: " + std::to_string(v) + " is not an f16 value");
    bits = static_cast<uint32_t>(m);
  } else {
    double m = std::ldexp(a, 10 - exponent) - 1024; // the 10 fraction bits
    if (m != std::trunc(m) || exponent > 15)
      throw Error("internal: " + std::to_string(v) + " is not an f16 value");
    bits =
        static_cast<uint32_t>(exponent + 15) << 10 | static_cast<uint32_t>(m);
  }
  return static_cast<uint16_t>(sign | bits);
}

} // namespace

int element_bytes(Scalar s) {
  int bits = ir::scalar_bits(s);
  return bits < 8 ? 1 : bits / 8;
}

uint64_t read_bits(Scalar s, const unsigned char *p) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, static_cast<size_t>(element_bytes(s))); // little-endian
  return bits;
}

double read_value(Scalar s, const unsigned char *p) {
  uint64_t bits = read_bits(s, p);
  switch (s) {
  case Scalar::F16:
    return half_value(static_cast<uint16_t>(bits));
  case Scalar::BF16:
    return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
  case Scalar::F32:
    return std::bit_cast<float>(static_cast<uint32_t>(bits));
  case Scalar::F64:
    return std::bit_cast<double>(bits);
  case Scalar::I1:
    return bits != 0;
  default:
    break;
  }
  int width = ir::scalar_bits(s);
  if (!ir::is_signed(s))
    return static_cast<double>(bits);
  // Sign-extend from the element's width.
  int shift = 64 - width;
  return static_cast<double>(static_cast<int64_t>(bits << shift) >> shift);
}

bool is_nan(Scalar s, const unsigned char *p) {
  return ir::is_float(s) && std::isnan(read_value(s, p));
}

void write_float(Scalar s, double value, unsigned char *p) {
  uint64_t bits = 0;
  switch (s) {
  case Scalar::F16:
    bits = half_bits(value);
    break;
  case Scalar::BF16: {
    uint32_t f = std::bit_cast<uint32_t>(static_cast<float>(value));
    if (std::isnan(value))
      f = 0x7fc00000;
    else if ((f & 0xffff) != 0 || static_cast<float>(value) != value)
      throw Error("internal: " + std::to_string(value) +
                  " is not a bf16 value");
    bits = f >> 16;
    break;
  }
  case Scalar::F32:
    if (!std::isnan(value) && static_cast<float>(value) != value)
      throw Error("internal: " + std::to_string(value) +
                  " is not an f32 value");
    bits = std::bit_cast<uint32_t>(static_cast<float>(value));
    break;
  default:
    bits = std::bit_cast<uint64_t>(value);
    break;
  }
  std::memcpy(p, &bits, static_cast<size_t>(element_bytes(s)));
}

void write_integer(Scalar s, int64_t value, unsigned char *p) {
  if (s == Scalar::I1)
    value = value != 0;
  std::memcpy(p, &value, static_cast<size_t>(element_bytes(s)));
}

} // namespace blocc::differential
