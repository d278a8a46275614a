// Evaluation of elementwise ops on constant elements, in the arithmetic of
// the element type: integers wrap around at their bit width and divide,
// shift and compare by their signedness; floats are rounded to their
// format's precision after every operation. Canonicalize folds constants
// through these functions.
//
// Every function returns nullopt where the result is not a single
// well-defined value (division by zero, signed overflow of division, shifts
// by the bit width or more, float-to-int conversions out of range) or where
// folding could disagree with what the backends compute (fp8 arithmetic,
// transcendental math whose device implementations are not correctly
// rounded): such ops are left for the backend to evaluate.
#pragma once

#include "ir/opcode.h"
#include "ir/type.h"

#include <cstdint>
#include <optional>
#include <string>

namespace blocc::ir {

/// One element of a constant. Integers are held normalized to their type:
/// sign-extended for signed types, zero-extended for unsigned ones (u64
/// values above INT64_MAX as their bit pattern), i1 as 0 or 1. Floats hold
/// a double whose value is exactly representable in the element type.
struct ConstantElement {
  bool is_float = false;
  int64_t integer = 0;
  double real = 0.0;

  static ConstantElement of_integer(int64_t v) { return {false, v, 0.0}; }
  static ConstantElement of_real(double v) { return {true, 0, v}; }
};

/// `v` reduced to the bit width of integer type `s`, sign- or zero-extended.
int64_t wrap_integer(int64_t v, Scalar s);
/// `v` rounded to the nearest value of float type `s` (ties to even,
/// overflow to infinity, subnormals kept).
double round_to_format(double v, Scalar s);

/// The element an integer or float constant attribute denotes in `s`.
std::optional<ConstantElement> element_from_attribute(int64_t v, Scalar s);
std::optional<ConstantElement> element_from_attribute(double v, Scalar s);

/// Elementwise ops with operands and result of element type `s`.
std::optional<ConstantElement> fold_unary(OpCode code, Scalar s,
                                          ConstantElement a);
std::optional<ConstantElement>
fold_binary(OpCode code, Scalar s, ConstantElement a, ConstantElement b);
std::optional<ConstantElement> fold_fma(Scalar s, ConstantElement a,
                                        ConstantElement b, ConstantElement c);
/// Cmp on operands of element type `s`; the result is an i1 element.
std::optional<ConstantElement> fold_compare(const std::string &predicate,
                                            Scalar s, ConstantElement a,
                                            ConstantElement b);
/// Cast (numeric conversion) from `from` to `to`.
std::optional<ConstantElement> fold_cast(Scalar from, Scalar to,
                                         ConstantElement a);

} // namespace blocc::ir
