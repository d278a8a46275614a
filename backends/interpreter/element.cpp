#include "backends/interpreter/element.h"

#include "backends/interpreter/float_format.h"
#include "ir/error.h"

#include <bit>
#include <cmath>
#include <limits>
#include <string>

namespace blocc::interp {

using ir::Scalar;

namespace {

const FloatFormat *narrow_format(Scalar s) {
  switch (s) {
  case Scalar::F16:
    return &kHalf;
  case Scalar::BF16:
    return &kBFloat16;
  case Scalar::F8E4M3:
    return &kFloat8E4M3;
  case Scalar::F8E5M2:
    return &kFloat8E5M2;
  default:
    return nullptr;
  }
}

/// Conversions into fp8 saturate (OCP saturation mode, what Triton's
/// fp8 casts do on NVIDIA GPUs); the 16-bit formats follow IEEE.
Overflow overflow_mode(Scalar to) {
  return ir::is_fp8(to) ? Overflow::SaturateFinite : Overflow::Infinity;
}

[[noreturn]] void unsupported(Scalar from, Scalar to) {
  throw Error("internal: no conversion from " +
              std::string(ir::scalar_name(from)) + " to " +
              std::string(ir::scalar_name(to)));
}

/// float -> integer: truncation toward zero, NaN -> 0, saturation.
uint64_t float_to_integer(double v, Scalar to) {
  if (to == Scalar::I1)
    return v != 0 ? 1 : 0; // NaN != 0
  if (std::isnan(v))
    return 0;
  v = std::trunc(v);
  int bits = ir::scalar_bits(to);
  if (ir::is_signed(to)) {
    // The range of a signed type is [-2^(b-1), 2^(b-1) - 1]; both bounds'
    // magnitudes as powers of two are exact doubles.
    double limit = std::ldexp(1.0, bits - 1);
    if (v >= limit)
      return canonicalize((uint64_t{1} << (bits - 1)) - 1, to);
    if (v < -limit)
      return canonicalize(uint64_t{1} << (bits - 1), to);
    return canonicalize(static_cast<uint64_t>(static_cast<int64_t>(v)), to);
  }
  double limit = std::ldexp(1.0, bits);
  if (v >= limit)
    return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  if (v <= 0)
    return 0;
  return static_cast<uint64_t>(v);
}

/// integer -> float, rounded once from the exact integer.
uint64_t integer_to_float(uint64_t bits, Scalar from, Scalar to) {
  bool negative = ir::is_signed(from) && as_signed(bits) < 0;
  // Two's complement negation gives the magnitude, also for INT64_MIN.
  uint64_t magnitude = negative ? ~bits + 1 : bits;
  if (const FloatFormat *f = narrow_format(to))
    return encode_integer(negative, magnitude, *f, overflow_mode(to));
  // Hardware conversions of 64-bit integers to f32/f64 round to nearest
  // even, once.
  if (to == Scalar::F32) {
    float r = ir::is_signed(from) ? static_cast<float>(as_signed(bits))
                                  : static_cast<float>(bits);
    return std::bit_cast<uint32_t>(r);
  }
  if (to == Scalar::F64) {
    double r = ir::is_signed(from) ? static_cast<double>(as_signed(bits))
                                   : static_cast<double>(bits);
    return std::bit_cast<uint64_t>(r);
  }
  unsupported(from, to);
}

} // namespace

uint64_t canonicalize(uint64_t raw, Scalar s) {
  int bits = ir::scalar_bits(s);
  if (bits >= 64)
    return raw;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t low = raw & mask;
  if (ir::is_signed(s) && (low >> (bits - 1)) != 0)
    return low | ~mask;
  return low;
}

int storage_bytes(Scalar s) {
  int bits = ir::scalar_bits(s);
  return bits < 8 ? 1 : bits / 8;
}

double to_double(uint64_t bits, Scalar s) {
  if (const FloatFormat *f = narrow_format(s))
    return decode_float(static_cast<uint32_t>(bits), *f);
  if (s == Scalar::F32)
    return std::bit_cast<float>(static_cast<uint32_t>(bits));
  if (s == Scalar::F64)
    return std::bit_cast<double>(bits);
  if (ir::is_signed(s))
    return static_cast<double>(as_signed(bits));
  return static_cast<double>(bits);
}

float to_float(uint64_t bits, Scalar s) {
  if (s == Scalar::F32)
    return std::bit_cast<float>(static_cast<uint32_t>(bits));
  return static_cast<float>(to_double(bits, s));
}

uint64_t from_double(double v, Scalar s) {
  if (const FloatFormat *f = narrow_format(s))
    return encode_float(v, *f, overflow_mode(s));
  if (s == Scalar::F32)
    return std::bit_cast<uint32_t>(static_cast<float>(v));
  if (s == Scalar::F64)
    return std::bit_cast<uint64_t>(v);
  throw Error("internal: from_double to " + std::string(ir::scalar_name(s)));
}

uint64_t convert(uint64_t bits, Scalar from, Scalar to) {
  if (from == Scalar::Ptr || to == Scalar::Ptr)
    unsupported(from, to);
  bool from_float = ir::is_float(from);
  bool to_float_type = ir::is_float(to);
  if (!from_float && !to_float_type) {
    if (to == Scalar::I1)
      return bits != 0 ? 1 : 0;
    return canonicalize(bits, to); // bits already carry the source's sign
  }
  if (!from_float)
    return integer_to_float(bits, from, to);
  double value = to_double(bits, from); // exact for every float type
  if (!to_float_type)
    return float_to_integer(value, to);
  if (from == to)
    return bits;
  return from_double(value, to);
}

} // namespace blocc::interp
