#include "backends/nvptx/unobserved_zero_signs.h"

#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/observed_uses.h"

namespace blocc::nvptx {
namespace {

using ir::OpCode;
using ir::Scalar;

// Ops whose result is the same for both zeros in the operand.
bool hides_zero_sign(const ir::Operation &op) {
  switch (op.code()) {
  case OpCode::Exp:
  case OpCode::Exp2:
  case OpCode::Cos:
  case OpCode::Log:
  case OpCode::Log2:
  case OpCode::Abs:
  case OpCode::Cmp:
    return true;
  case OpCode::Cast: // to an integer: both zeros are 0
    return !ir::is_float(op.result()->type().element());
  default:
    return false;
  }
}

// Ops whose results differ at most in a zero's sign when the operand's
// zero changes sign (a NaN stays a NaN).
bool passes_zero_sign_on(OpCode code) {
  switch (code) {
  case OpCode::Add:
  case OpCode::Sub:
  case OpCode::Mul:
  case OpCode::Neg:
  case OpCode::Fma:
  case OpCode::Maximum:
  case OpCode::Minimum:
  case OpCode::Select:
  case OpCode::Sqrt:
  case OpCode::Floor:
  case OpCode::Ceil:
  case OpCode::Sin:
  case OpCode::Tanh:
  case OpCode::Erf:
  case OpCode::Splat:
  case OpCode::Broadcast:
  case OpCode::ExpandDims:
  case OpCode::Reshape:
  case OpCode::ConvertLayout:
    return true;
  default:
    return false;
  }
}

bool combines_passing_zero_sign_on(const ir::Operation &op) {
  return is_reduce_of(op, passes_zero_sign_on);
}

UseEffect zero_sign_use(const ir::Operation &user, size_t operand) {
  if (hides_zero_sign(user))
    return UseEffect::Hides;
  if (user.code() == OpCode::Cast) // float to float keeps the sign
    return UseEffect::PassesOn;
  // ±0 / y is a zero of either sign (or the same NaN); x / ±0 is ±inf.
  if (passes_zero_sign_on(user.code()) ||
      (user.code() == OpCode::Div && operand == 0) ||
      combines_passing_zero_sign_on(user))
    return UseEffect::PassesOn;
  const ir::Operation *parent = user.parent_op();
  if (user.code() == OpCode::Yield && parent &&
      combines_passing_zero_sign_on(*parent))
    return UseEffect::PassesOn;
  return UseEffect::Observes;
}

} // namespace

std::set<const ir::Value *>
results_with_unobserved_zero_signs(const ir::Function &kernel) {
  ObservedUses zero_signs(kernel, zero_sign_use);
  std::set<const ir::Value *> unobserved;
  kernel.walk([&](const ir::Operation &op) {
    const bool min_max =
        op.code() == OpCode::Maximum || op.code() == OpCode::Minimum;
    const bool from_zero =
        op.code() == OpCode::Dot && is_positive_zero(op.operand(2));
    if ((min_max || from_zero) &&
        op.result()->type().element() == Scalar::F32 &&
        !zero_signs.observed(op.result()))
      unobserved.insert(op.result());
  });
  return unobserved;
}

} // namespace blocc::nvptx
