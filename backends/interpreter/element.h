// One element of a runtime value, held in 64 bits in a canonical form per
// IR scalar type, and the numeric conversions between element types.
//
// Canonical form (what RuntimeValue::bits holds):
//   i1                 0 or 1
//   i8 .. i64          the value sign-extended to 64 bits
//   u8 .. u64          the value zero-extended to 64 bits
//   f16, bf16, f8*, f32  the format's bit pattern, zero-extended
//   f64                the bit pattern
//   ptr                the address
// Keeping floats as bit patterns (not as double) means loads, stores,
// bitcasts and NaN payloads round-trip exactly.
#pragma once

#include "ir/type.h"

#include <cstdint>

namespace blocc::interp {

/// Truncates `raw` to the width of `s` and extends it by the signedness of
/// `s`: the canonical form of the element whose low bits are `raw`.
uint64_t canonicalize(uint64_t raw, ir::Scalar s);

/// Bytes one element of `s` occupies in memory (i1 takes a byte, as bool).
int storage_bytes(ir::Scalar s);

/// The exact value of a float element (f16 .. f64, fp8) or an integer
/// element (which may round when it exceeds 2^53).
double to_double(uint64_t bits, ir::Scalar s);
/// The f32 value of an f32, f16 or bf16 element (exact).
float to_float(uint64_t bits, ir::Scalar s);
/// `v` rounded to nearest-even in float type `s`. Narrow formats round
/// straight from the double, never through f32, so they round once.
uint64_t from_double(double v, ir::Scalar s);

/// The integer element as a signed (for signed and unsigned types alike,
/// its 64-bit pattern) value.
inline int64_t as_signed(uint64_t bits) { return static_cast<int64_t>(bits); }

/// Numeric conversion with the semantics of the cast op:
///  - int -> int: by the source's signedness, then truncated (C rules);
///  - anything -> i1: x != 0 (NaN counts as nonzero);
///  - int -> float: rounded to nearest-even from the exact integer;
///  - float -> int: truncated toward zero; NaN gives 0; values beyond the
///    destination's range saturate to its minimum/maximum (C leaves both
///    undefined; saturation is what GPUs' cvt.rzi does);
///  - float -> float: rounded to nearest-even (exact when widening);
///    converting to fp8 saturates per the OCP OFP8 spec (finite overflow
///    and infinities become the largest finite value; NaN stays NaN).
/// Pointer types are not numbers: callers handle them before this.
uint64_t convert(uint64_t bits, ir::Scalar from, ir::Scalar to);

} // namespace blocc::interp
