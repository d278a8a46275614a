#include "backends/nvptx/nan_blind_uses.h"

namespace blocc::nvptx {
namespace {

using ir::OpCode;
using ir::Scalar;

bool is_widen(const ir::Operation &op) {
  if (op.code() != OpCode::Cast)
    return false;
  Scalar from = op.operand(0)->type().element();
  return op.result()->type().element() == Scalar::F32 &&
         (from == Scalar::F16 || from == Scalar::BF16);
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

// A one-operand reduction whose combine is such arithmetic: every result
// combines at least two elements, so no element comes out untouched.
bool is_nan_blind_reduce(const ir::Operation &op) {
  if (op.code() != OpCode::Reduce || op.num_operands() != 1)
    return false;
  const ir::Type &type = op.operand(0)->type();
  int64_t axis = op.int_attr("axis");
  if (type.shape().empty() || axis < 0 ||
      axis >= static_cast<int64_t>(type.shape().size()) ||
      type.shape()[axis] < 2)
    return false;
  for (const auto &inner : op.region(0)->ops())
    if (inner->code() != OpCode::Yield &&
        !is_nan_blind_arithmetic(inner->code()))
      return false;
  return true;
}

bool is_nan_blind_use(const ir::Operation &user) {
  return user.code() == OpCode::Cmp || is_nan_blind_arithmetic(user.code()) ||
         is_nan_blind_reduce(user);
}

} // namespace

std::set<const ir::Value *>
widens_with_unobserved_nan_bits(const ir::Function &kernel) {
  auto &function = const_cast<ir::Function &>(kernel); // walk is not const
  std::set<const ir::Value *> widened, observed;
  function.walk([&](ir::Operation &op) {
    if (is_widen(op))
      widened.insert(op.result());
  });
  function.walk([&](ir::Operation &op) {
    for (const ir::Value *operand : op.operands())
      if (widened.count(operand) && !is_nan_blind_use(op))
        observed.insert(operand);
  });
  std::set<const ir::Value *> unobserved;
  for (const ir::Value *v : widened)
    if (!observed.count(v))
      unobserved.insert(v);
  return unobserved;
}

} // namespace blocc::nvptx
