// The arithmetic of single elements, in canonical form (element.h), with
// the semantics the IR documents in ir/opcode.h. Integers wrap around at
// their width; f32 is computed in float and f64 in double; f16 and bf16 are
// computed in float and rounded back to nearest-even (for +, -, *, / and
// sqrt this double rounding is exact, as f32 holds more than twice their
// precision plus two bits); fp8 has no arithmetic.
//
// Decisions the IR leaves open, made here once for every backend to match:
//  - integer division or remainder by zero throws LaneError (never UB);
//    INT_MIN / -1 wraps to INT_MIN and INT_MIN % -1 is 0;
//  - shift amounts are read as unsigned numbers of the operand's width; an
//    amount >= the width gives 0 for shl and logical shr, and the sign fill
//    (0 or -1) for arithmetic shr;
//  - minimum/maximum ignore a NaN operand (like fmin/fmax; NaN only when
//    both are NaN) and order -0 below +0;
//  - umulhi reads both operands as unsigned numbers of their width;
//  - neg and abs of floats only flip/clear the sign bit; abs(INT_MIN) wraps;
//  - rsqrt is 1 / sqrt(x), rounded twice, in the element's precision;
//  - fma rounds once in every float type (narrow types via round-to-odd).
#pragma once

#include "ir/opcode.h"
#include "ir/type.h"

#include <cstdint>
#include <string>

namespace blocc::interp {

enum class Predicate { Eq, Ne, Lt, Le, Gt, Ge };
/// Parses "eq", "ne", "lt", "le", "gt", "ge"; nothing else.
bool parse_predicate(const std::string &name, Predicate &out);

/// Binary ops whose operands and result share the element type `s`:
/// add .. umulhi (see opcode.h). Throws LaneError for undefined cases.
uint64_t binary_element(ir::OpCode op, ir::Scalar s, uint64_t a, uint64_t b);

/// neg, not, abs and the unary math functions.
uint64_t unary_element(ir::OpCode op, ir::Scalar s, uint64_t a);

/// a * b + c rounded once (integers: wrapped).
uint64_t fma_element(ir::Scalar s, uint64_t a, uint64_t b, uint64_t c);
/// The f32 `bits` with a value below 2^-126 (a subnormal, positive: exp2's
/// results are) made +0; everything else (NaN too) as it is.
uint64_t flush_subnormal_f32(uint64_t bits);

/// Ordered float comparisons (false on NaN) except ne (true on NaN);
/// integers by signedness; pointers as unsigned addresses.
bool compare_element(Predicate p, ir::Scalar s, uint64_t a, uint64_t b);

} // namespace blocc::interp
