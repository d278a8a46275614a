// Triton's typing rules, shared by every frontend op: how weak constants
// take a type, how two element types promote, and how shapes broadcast.
// Internal to the frontend (not installed with the public headers).
#pragma once

#include "blocc/ops.h"
#include "blocc/trace.h"

namespace blocc::detail {

/// The element type two operands compute in (Triton's computation type):
/// floats win over integers, the wider float wins (f16 with bf16 gives f32),
/// integers of one signedness take the wider, mixed signedness takes the
/// unsigned type when it is at least as wide, else the signed one.
ir::Scalar promote(ir::Scalar a, ir::Scalar b);

/// The element type of an operand; a weak integer constant is i32 (i64 when
/// it does not fit), a weak float constant f32, a bool constant i1.
ir::Scalar natural_dtype(const Operand &x);

/// The element type `a op b` computes in, weak constants taking the other
/// side's type when that side is a tensor.
ir::Scalar computation_dtype(const Operand &a, const Operand &b);

/// The value of an operand, converted to `dtype` (weak constants become
/// constants of that type; tensors are cast when their type differs).
ir::Value *as_dtype(const Operand &x, ir::Scalar dtype);

/// A block needs 1 to 3 dimensions, each a power of two; `what` names the
/// op in the message.
void check_block_shape(const Shape &shape, const std::string &what,
                       const SourceLoc &loc);

/// The value of an operand in its own type: a tensor's value, or a weak
/// constant materialized in its natural dtype.
ir::Value *natural_value(const Operand &x);

/// Converts a value's element type (no op when it already matches).
ir::Value *convert(ir::Value *v, ir::Scalar dtype, const SourceLoc &loc);

/// Numpy/Triton broadcasting of two shapes (the shorter one is padded with
/// leading 1s); `what` names the operation in the error.
Shape broadcast_shapes(const Shape &a, const Shape &b, const SourceLoc &loc,
                       const std::string &what);

/// Splats a scalar or broadcasts a block to `shape`.
ir::Value *broadcast_value(ir::Value *v, const Shape &shape,
                           const SourceLoc &loc);

/// Brings every operand to one shape (their broadcast) after converting each
/// to the matching dtype in `dtypes`.
std::vector<ir::Value *> unify(const std::vector<const Operand *> &operands,
                               const std::vector<ir::Scalar> &dtypes,
                               const std::string &what);

/// A user error when the op being traced would land in the combine function
/// of a reduction or scan: `what` ("bl::load") touches memory, prints or
/// asserts, and a combine is a pure function of the elements it combines
/// (reduce.cpp). `instead` says what to do.
void reject_in_combine(const std::string &what, const SourceLoc &loc,
                       const std::string &instead =
                           "do it with the result, after the reduction or "
                           "scan");

/// A user error, at the value's line, when a store's `value` is a pointer
/// or a block of them (bl::store through pointers, block pointers and
/// tensor descriptors alike).
void reject_stored_pointers(const Operand &value);

std::string dtype_name(ir::Scalar s);
std::string shape_str(const Shape &s);

} // namespace blocc::detail
