// bl::dot: the block matrix product (tl.dot), traced to one Dot op.
//
// Typing follows Triton's (python/triton/language/semantic.py, `dot`), with
// the shape limits of its NVIDIA backend so that every traced dot maps onto
// mma/wgmma tiles:
//  - a is [M, K] and b is [K, N], or both carry one leading batch dimension
//    of the same size ([B, M, K] x [B, K, N]); M, N >= 16 and K >= 16
//    (K >= 32 for 8-bit inputs, the k of an 8-bit mma).
//  - a and b have one element type: int8, float16, bfloat16, float32 or
//    float64; the two fp8 formats may be mixed.
//  - The accumulator and result type: int32 for int8; float32 for float32
//    and bfloat16; float64 for float64; float16 or float32 (the default) for
//    float16 and fp8, chosen with `out_dtype`.
//  - `acc`, when given, must have exactly the result's shape and type (no
//    broadcasting, no conversion, as in Triton). Difference from Triton:
//    without `out_dtype`, the result type is taken from `acc` (Triton would
//    insist on out_dtype=float16 next to a float16 accumulator).
//  - input_precision only matters for float32 inputs, so the IR attribute is
//    recorded only there; for other inputs it is ignored, as on Triton's
//    NVIDIA backend. The reference interpreter computes every product in the
//    accumulator's type (IEEE), which tf32 backends match within tolerance.
#include "semantics.h"

#include <algorithm>
#include <tuple>

namespace blocc {

using detail::user_error;
using ir::OpCode;
using ir::Scalar;
using ir::Type;

namespace {

const char *precision_name(InputPrecision p) {
  switch (p) {
  case InputPrecision::IEEE:
    return "ieee";
  case InputPrecision::TF32:
    return "tf32";
  case InputPrecision::TF32x3:
    return "tf32x3";
  }
  return "tf32";
}

/// The block an input operand holds; numbers and pointers are rejected.
const Type &matrix_operand(const Operand &x, const char *name) {
  if (!x.is_value() || !x.value()->type().is_block())
    user_error(x.loc(), std::string("bl::dot: ") + name +
                            " must be a 2-D block (or 3-D with a batch "
                            "dimension), got " +
                            x.describe());
  const Type &t = x.value()->type();
  if (t.is_pointer())
    user_error(x.loc(), std::string("bl::dot: ") + name + " is " + t.str() +
                            ", a block of pointers; load the values first");
  if (t.rank() != 2 && t.rank() != 3)
    user_error(x.loc(), std::string("bl::dot: ") + name + " is " + t.str() +
                            " of rank " + std::to_string(t.rank()) +
                            "; expected a [M, K] x [K, N] product of rank-2 "
                            "blocks, or rank 3 with a leading batch dimension "
                            "(reshape with bl::reshape / bl::expand_dims)");
  return t;
}

bool is_dot_input(Scalar s) {
  return s == Scalar::I8 || s == Scalar::F16 || s == Scalar::BF16 ||
         s == Scalar::F32 || s == Scalar::F64 || ir::is_fp8(s);
}

/// The element types a dot of `input` elements may accumulate in.
std::vector<Scalar> allowed_accumulators(Scalar input) {
  if (input == Scalar::I8)
    return {Scalar::I32};
  if (input == Scalar::F32 || input == Scalar::BF16)
    return {Scalar::F32};
  if (input == Scalar::F64)
    return {Scalar::F64};
  return {Scalar::F32, Scalar::F16}; // f16 and fp8
}

/// How a user spells an accumulator type: "float32" for bl::float32.
std::string user_name(Scalar s) {
  switch (s) {
  case Scalar::I32:
    return "int32";
  case Scalar::F16:
    return "float16";
  case Scalar::F64:
    return "float64";
  default:
    return "float32";
  }
}

std::string names_of(const std::vector<Scalar> &types) {
  std::string s;
  for (size_t i = 0; i < types.size(); ++i)
    s += (i ? " or " : "") + detail::dtype_name(types[i]);
  return s;
}

void check_inputs(const Operand &a, const Operand &b, const Type &ta,
                  const Type &tb) {
  Scalar ea = ta.element(), eb = tb.element();
  for (auto [operand, e, name] :
       {std::tuple{&a, ea, "a"}, std::tuple{&b, eb, "b"}})
    if (!is_dot_input(e))
      user_error(operand->loc(),
                 std::string("bl::dot: ") + name + " has " +
                     detail::dtype_name(e) +
                     " elements; dot takes int8, float16, bfloat16, "
                     "float32, float64 or fp8 inputs (convert with "
                     "bl::cast, e.g. to int8 or float16)");
  if (ea != eb && !(ir::is_fp8(ea) && ir::is_fp8(eb)))
    user_error(a.loc(), "bl::dot: a has " + detail::dtype_name(ea) +
                            " elements but b has " + detail::dtype_name(eb) +
                            "; both inputs must have one element type "
                            "(convert one with bl::cast)");
  if (ta.rank() != tb.rank())
    user_error(a.loc(), "bl::dot: a is " + ta.str() + " but b is " + tb.str() +
                            "; both inputs must be rank 2, or both rank 3 "
                            "with one batch dimension");
  int r = ta.rank();
  int64_t m = ta.dim(r - 2), k = ta.dim(r - 1);
  int64_t kb = tb.dim(r - 2), n = tb.dim(r - 1);
  if (k != kb)
    user_error(a.loc(), "bl::dot: the inner dimensions differ: a is " +
                            ta.str() + " (K = " + std::to_string(k) +
                            ") but b is " + tb.str() +
                            " (K = " + std::to_string(kb) +
                            "); a must be [M, K] and b [K, N] (transpose "
                            "with bl::trans if b is [N, K])");
  if (r == 3 && ta.dim(0) != tb.dim(0))
    user_error(a.loc(), "bl::dot: a has batch size " +
                            std::to_string(ta.dim(0)) + " but b has " +
                            std::to_string(tb.dim(0)) +
                            "; batched inputs must share the leading "
                            "dimension");
  int64_t min_k = ir::scalar_bits(ea) == 8 ? 32 : 16;
  if (m < 16 || n < 16 || k < min_k)
    user_error(a.loc(), "bl::dot: a " + ta.str() + " times b " + tb.str() +
                            " has M = " + std::to_string(m) + ", N = " +
                            std::to_string(n) + ", K = " + std::to_string(k) +
                            "; dot needs M >= 16, N >= 16 and K >= " +
                            std::to_string(min_k) +
                            " (use larger blocks and mask the extra rows, "
                            "or multiply with * and bl::sum)");
}

Tensor dot_impl(const Operand &a, const Operand &b, const Operand *acc,
                InputPrecision precision, std::optional<DType> out_dtype) {
  const Type &ta = matrix_operand(a, "a");
  const Type &tb = matrix_operand(b, "b");
  check_inputs(a, b, ta, tb);
  int r = ta.rank();
  Shape shape = ta.shape();
  shape[r - 1] = tb.dim(r - 1); // [B,] M, N

  Scalar input = ta.element();
  std::vector<Scalar> allowed = allowed_accumulators(input);
  if (out_dtype &&
      std::find(allowed.begin(), allowed.end(), *out_dtype) == allowed.end())
    user_error(a.loc(), "bl::dot: out_dtype " + detail::dtype_name(*out_dtype) +
                            " is not " + "available for " +
                            detail::dtype_name(input) +
                            " inputs; they accumulate in " + names_of(allowed) +
                            " (convert the result with bl::cast afterwards)");

  ir::Value *acc_value = nullptr;
  Scalar result = out_dtype ? *out_dtype : allowed.front();
  if (acc) {
    if (!acc->is_value() || !acc->value()->type().is_block())
      user_error(acc->loc(),
                 "bl::dot: the accumulator must be a block of shape " +
                     detail::shape_str(shape) + ", got " + acc->describe() +
                     "; start from bl::zeros(" + detail::shape_str(shape) +
                     ", ...)");
    const Type &tc = acc->value()->type();
    if (tc.shape() != shape)
      user_error(acc->loc(), "bl::dot: the accumulator is " + tc.str() +
                                 " but a " + ta.str() + " times b " + tb.str() +
                                 " gives shape " + detail::shape_str(shape) +
                                 "; the accumulator must have exactly that "
                                 "shape");
    if (!out_dtype)
      result = tc.element();
    if (tc.element() != result ||
        std::find(allowed.begin(), allowed.end(), result) == allowed.end())
      user_error(
          acc->loc(),
          "bl::dot: the accumulator has " + detail::dtype_name(tc.element()) +
              " elements, but " + detail::dtype_name(input) +
              " inputs accumulate in " +
              (out_dtype ? detail::dtype_name(result) : names_of(allowed)) +
              "; make the accumulator that type (e.g. bl::zeros(" +
              detail::shape_str(shape) + ", bl::" +
              user_name(out_dtype ? result : allowed.front()) + "))");
    acc_value = acc->value();
  }

  auto &builder = detail::TraceContext::current(a.loc()).at(a.loc());
  Type result_type = Type::block(Type::scalar(result), shape);
  if (!acc_value) {
    ir::Value *zero = ir::is_integer(result)
                          ? builder.int_constant(0, Type::scalar(result))
                          : builder.float_constant(0.0, Type::scalar(result));
    acc_value = builder.splat(zero, shape);
  }
  ir::Attributes attrs;
  if (input == Scalar::F32)
    attrs["input_precision"] = std::string(precision_name(precision));
  return Tensor(builder.create_value(
      OpCode::Dot, {a.value(), b.value(), acc_value}, result_type, attrs));
}

} // namespace

Tensor dot(Operand a, Operand b, InputPrecision precision,
           std::optional<DType> out_dtype) {
  return dot_impl(a, b, nullptr, precision, out_dtype);
}

Tensor dot(Operand a, Operand b, Operand acc, InputPrecision precision,
           std::optional<DType> out_dtype) {
  return dot_impl(a, b, &acc, precision, out_dtype);
}

} // namespace blocc
