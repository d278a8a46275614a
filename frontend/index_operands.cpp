#include "index_operands.h"

#include "semantics.h"

#include <limits>

namespace blocc::detail {

using ir::OpCode;
using ir::Scalar;
using ir::Type;

ir::Scalar expect_index(const Operand &x, const IndexUse &use,
                        const std::string &role) {
  if (x.is_value() && x.value()->type().is_block())
    user_error(x.loc(), use.what + ": " + role + " must be a scalar, got " +
                            x.describe() + "; a " + use.holder +
                            " has one extent, stride and offset per "
                            "dimension");
  Scalar s = natural_dtype(x);
  bool pointer = x.is_value() && x.value()->type().is_pointer();
  if (pointer || !ir::is_integer(s) || s == Scalar::I1)
    user_error(x.loc(), use.what + ": " + role + " must be an integer, got " +
                            x.describe());
  return s;
}

ir::Value *index_as_int64(const Operand &x, const IndexUse &use,
                          const std::string &role) {
  expect_index(x, use, role);
  return as_dtype(x, Scalar::I64);
}

ir::Value *offset_as_int32(const Operand &x, const IndexUse &use,
                           const std::string &role) {
  Scalar s = expect_index(x, use, role);
  if (x.is_value() && ir::scalar_bits(s) > 32)
    user_error(x.loc(), use.what + ": " + role + " is " + x.describe() + "; " +
                            use.holder +
                            " offsets are 32-bit, as in Triton: convert it "
                            "with bl::cast(x, bl::int32), or index with a "
                            "block of pointers for 64-bit offsets");
  if (!x.is_value() && (x.int_value() < std::numeric_limits<int32_t>::min() ||
                        x.int_value() > std::numeric_limits<int32_t>::max()))
    user_error(x.loc(), use.what + ": " + role + " " +
                            std::to_string(x.int_value()) +
                            " does not fit in int32; " + use.holder +
                            " offsets are 32-bit, as in Triton");
  ir::Value *v = as_dtype(x, x.is_value() ? s : Scalar::I32);
  if (ir::scalar_bits(s) == 32 && ir::is_unsigned(s))
    return TraceContext::current(x.loc()).at(x.loc()).create_value(
        OpCode::Bitcast, {v},
        v->type().with_element(Type::scalar(Scalar::I32)));
  return convert(v, Scalar::I32, x.loc());
}

} // namespace blocc::detail
