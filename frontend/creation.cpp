// Ops that make values from nothing: program ids, ranges, filled blocks.
#include "semantics.h"

namespace blocc {

using detail::user_error;
using ir::OpCode;
using ir::Scalar;
using ir::Type;

namespace {

void check_axis(int axis, const char *what, const SourceLoc &loc) {
  if (axis < 0 || axis > 2)
    user_error(loc, std::string(what) + "(" + std::to_string(axis) +
                        "): the grid has axes 0, 1 and 2");
}

} // namespace

Tensor program_id(int axis, SourceLoc loc) {
  check_axis(axis, "bl::program_id", loc);
  auto &b = detail::TraceContext::current(loc).at(loc);
  return Tensor(b.create_value(OpCode::ProgramId, {}, Type::scalar(Scalar::I32),
                               {{"axis", int64_t{axis}}}));
}

Tensor num_programs(int axis, SourceLoc loc) {
  check_axis(axis, "bl::num_programs", loc);
  auto &b = detail::TraceContext::current(loc).at(loc);
  return Tensor(b.create_value(OpCode::NumPrograms, {},
                               Type::scalar(Scalar::I32),
                               {{"axis", int64_t{axis}}}));
}

Tensor arange(int64_t start, int64_t end, SourceLoc loc) {
  if (end <= start)
    user_error(loc, "bl::arange(" + std::to_string(start) + ", " +
                        std::to_string(end) +
                        "): end must be greater than start");
  if (!ir::is_power_of_two(end - start))
    user_error(loc, "bl::arange(" + std::to_string(start) + ", " +
                        std::to_string(end) + "): the length " +
                        std::to_string(end - start) +
                        " is not a power of two; round the block size up to "
                        "a power of two and mask the extra lanes");
  if (start < INT32_MIN || end > int64_t{INT32_MAX} + 1)
    user_error(loc, "bl::arange: the range must fit in int32");
  auto &b = detail::TraceContext::current(loc).at(loc);
  return Tensor(b.create_value(
      OpCode::Arange, {}, Type::block(Type::scalar(Scalar::I32), {end - start}),
      {{"start", start}, {"end", end}}));
}

namespace {

// bl::full and bl::zeros share this; `what` names the one the user called.
Tensor filled(const Shape &shape, const Operand &value, DType dtype,
              const char *what) {
  detail::check_block_shape(shape, what, value.loc());
  if (value.is_value() && value.value()->type().is_block())
    user_error(value.loc(), std::string(what) +
                                ": the fill value must be a scalar, got " +
                                value.describe());
  ir::Value *v = detail::as_dtype(value, dtype);
  return Tensor(detail::broadcast_value(v, shape, value.loc()));
}

} // namespace

Tensor full(const Shape &shape, Operand value, DType dtype) {
  return filled(shape, value, dtype, "bl::full");
}

Tensor zeros(const Shape &shape, DType dtype, SourceLoc loc) {
  return filled(shape, Operand(0, loc), dtype, "bl::zeros");
}

Tensor zeros_like(Operand x) { return full_like(x, Operand(0, x.loc())); }

Tensor full_like(Operand x, Operand value) {
  if (!x.is_value())
    user_error(x.loc(), "bl::full_like needs a tensor, got " + x.describe());
  Type t = x.value()->type();
  if (!t.is_block())
    return scalar(value, t.element());
  return full(t.shape(), value, t.element());
}

Tensor scalar(Operand value, DType dtype) {
  if (value.is_value() && value.value()->type().is_block())
    user_error(value.loc(),
               "bl::scalar needs a scalar, got " + value.describe());
  return Tensor(detail::as_dtype(value, dtype));
}

void static_assert_(bool condition, const std::string &message, SourceLoc loc) {
  if (!condition)
    user_error(loc, "static assertion failed: " + message);
}

} // namespace blocc
