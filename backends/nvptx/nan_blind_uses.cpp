#include "backends/nvptx/nan_blind_uses.h"

#include "backends/nvptx/observed_uses.h"

#include <cmath>
#include <variant>

namespace blocc::nvptx {
namespace {

using ir::OpCode;
using ir::Scalar;

// The ops whose NaN fix-up lower_math.cpp can leave out.
bool has_nan_fixup(const ir::Operation &op) {
  if (op.num_results() != 1 || op.result()->type().element() != Scalar::F32)
    return false;
  switch (op.code()) {
  case OpCode::Exp:
  case OpCode::Exp2:
  case OpCode::Maximum:
  case OpCode::Minimum:
    return true;
  case OpCode::Cast: {
    Scalar from = op.operand(0)->type().element();
    return from == Scalar::F16 || from == Scalar::BF16;
  }
  default:
    return false;
  }
}

// f32 arithmetic whose NaN result does not depend on the NaN operand's bits.
bool is_nan_blind_arithmetic(OpCode code) {
  switch (code) {
  case OpCode::Add:
  case OpCode::Sub:
  case OpCode::Mul:
  case OpCode::Div:
  case OpCode::Exp:
  case OpCode::Exp2:
    return true;
  default:
    return false;
  }
}

// Ops that hand an operand's bits on to their result unchanged, or (max,
// min) one operand's bits or the other's: their operand's NaN bits are seen
// exactly where their result's are.
bool passes_bits_on(OpCode code) {
  switch (code) {
  case OpCode::Splat:
  case OpCode::Broadcast:
  case OpCode::ExpandDims:
  case OpCode::Reshape:
  case OpCode::ConvertLayout:
  case OpCode::Maximum:
  case OpCode::Minimum:
    return true;
  default:
    return false;
  }
}

// Every result of the reduction combines at least two elements by such
// arithmetic, so no element comes out untouched.
bool is_nan_blind_reduce(const ir::Operation &op) {
  if (!is_reduce_of(op, is_nan_blind_arithmetic))
    return false;
  const ir::Type &type = op.operand(0)->type();
  int64_t axis = op.int_attr("axis");
  return !type.shape().empty() && axis >= 0 &&
         axis < static_cast<int64_t>(type.shape().size()) &&
         type.shape()[axis] >= 2;
}

bool combines_by_passing_or_arithmetic(const ir::Operation &op) {
  return is_reduce_of(op, [](OpCode code) {
    return passes_bits_on(code) || is_nan_blind_arithmetic(code);
  });
}

/// A cast between float types: a NaN stays a NaN of the same sign, its
/// payload quieted or cut, so its bits depend on the operand's.
bool is_float_to_float_cast(const ir::Operation &op) {
  return op.code() == OpCode::Cast &&
         ir::is_float(op.operand(0)->type().element()) &&
         ir::is_float(op.result()->type().element());
}

UseEffect nan_bits_use(const ir::Operation &user, size_t) {
  // A dot's NaN is the hardware's (mma.sync and fma.rn give the canonical
  // NaN whatever their operands' bits).
  if (user.code() == OpCode::Cmp || user.code() == OpCode::Dot ||
      is_nan_blind_arithmetic(user.code()) || is_nan_blind_reduce(user))
    return UseEffect::Hides;
  if (passes_bits_on(user.code()) || is_float_to_float_cast(user) ||
      combines_by_passing_or_arithmetic(user))
    return UseEffect::PassesOn;
  const ir::Operation *parent = user.parent_op();
  if (user.code() == OpCode::Yield && parent &&
      combines_by_passing_or_arithmetic(*parent))
    return UseEffect::PassesOn;
  return UseEffect::Observes;
}

} // namespace

std::set<const ir::Value *>
results_with_unobserved_nan_bits(const ir::Function &kernel) {
  ObservedUses nan_bits(kernel, nan_bits_use);
  std::set<const ir::Value *> unobserved;
  kernel.walk([&](const ir::Operation &op) {
    if (has_nan_fixup(op) && !nan_bits.observed(op.result()))
      unobserved.insert(op.result());
  });
  return unobserved;
}

namespace {

/// Whether every NaN `v` (f32) can hold is the hardware's: computed by f32
/// add, sub, mul, fma, exp or exp2, a constant that is no NaN, or a value
/// a loop carries whose initial and yielded values are such (attention's
/// probabilities carried into the next iteration). `seen`: the carried
/// values already asked about (a cycle through them brings no other NaN).
bool holds_hardware_nans_only(const ir::Value *v,
                              std::set<const ir::Value *> &seen) {
  if (!seen.insert(v).second)
    return true;
  if (v->is_block_argument()) {
    std::optional<ir::CarriedValues> carried = ir::carried_values(v);
    return carried && holds_hardware_nans_only(carried->initial, seen) &&
           holds_hardware_nans_only(carried->yielded, seen);
  }
  const ir::Operation *producer = v->defining_op();
  switch (producer->code()) {
  case OpCode::Add:
  case OpCode::Sub:
  case OpCode::Mul:
  case OpCode::Fma:
  case OpCode::Exp:
  case OpCode::Exp2:
    return true;
  case OpCode::Constant: {
    const auto *real = std::get_if<double>(&producer->attributes().at("value"));
    return real && !std::isnan(*real);
  }
  case OpCode::Splat:
  case OpCode::Broadcast:
    return holds_hardware_nans_only(producer->operand(0), seen);
  default:
    return false;
  }
}

} // namespace

std::set<const ir::Value *>
narrows_of_hardware_nans(const ir::Function &kernel) {
  std::set<const ir::Value *> out;
  kernel.walk([&](const ir::Operation &op) {
    if (op.code() != OpCode::Cast)
      return;
    Scalar to = op.result()->type().element();
    const ir::Value *from = op.operand(0);
    std::set<const ir::Value *> seen;
    if ((to == Scalar::F16 || to == Scalar::BF16) &&
        from->type().element() == Scalar::F32 &&
        holds_hardware_nans_only(from, seen))
      out.insert(op.result());
  });
  return out;
}

} // namespace blocc::nvptx
