#include "backends/nvptx/nan_blind_uses.h"

#include <map>
#include <vector>

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
  case OpCode::Maximum:
  case OpCode::Minimum:
    return true;
  default:
    return false;
  }
}

// A one-operand reduction whose combine is made of `allowed` ops only.
template <typename Allowed>
bool is_reduce_of(const ir::Operation &op, Allowed allowed) {
  if (op.code() != OpCode::Reduce || op.num_operands() != 1)
    return false;
  for (const auto &inner : op.region(0)->ops())
    if (inner->code() != OpCode::Yield && !allowed(inner->code()))
      return false;
  return true;
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

class Observers {
public:
  explicit Observers(ir::Function &function) {
    function.walk([&](ir::Operation &op) {
      for (size_t i = 0; i < op.num_operands(); ++i)
        users_[op.operand(i)].push_back(Use{&op, i});
    });
  }

  /// Whether anything the kernel does depends on v's bits when v is a NaN.
  bool observed(const ir::Value *v) {
    auto known = memo_.find(v);
    if (known != memo_.end())
      return known->second;
    bool seen = false;
    auto users = users_.find(v);
    if (users != users_.end())
      for (const Use &use : users->second)
        if (observes(*use.user, use.operand)) {
          seen = true;
          break;
        }
    memo_[v] = seen;
    return seen;
  }

private:
  bool observes(const ir::Operation &user, size_t index) {
    if (user.code() == OpCode::Cmp || is_nan_blind_arithmetic(user.code()) ||
        is_nan_blind_reduce(user))
      return false;
    if (passes_bits_on(user.code()))
      return observed(user.result());
    if (combines_by_passing_or_arithmetic(user))
      return observed(user.result());
    const ir::Operation *parent = user.parent_op();
    if (user.code() == OpCode::Yield && parent &&
        combines_by_passing_or_arithmetic(*parent))
      return observed(parent->result(index));
    return true;
  }

  struct Use {
    const ir::Operation *user;
    size_t operand;
  };
  std::map<const ir::Value *, std::vector<Use>> users_;
  std::map<const ir::Value *, bool> memo_;
};

} // namespace

std::set<const ir::Value *>
results_with_unobserved_nan_bits(const ir::Function &kernel) {
  auto &function = const_cast<ir::Function &>(kernel); // walk is not const
  Observers observers(function);
  std::set<const ir::Value *> unobserved;
  function.walk([&](ir::Operation &op) {
    if (has_nan_fixup(op) && !observers.observed(op.result()))
      unobserved.insert(op.result());
  });
  return unobserved;
}

std::set<const ir::Value *>
narrows_of_hardware_nans(const ir::Function &kernel) {
  auto &function = const_cast<ir::Function &>(kernel); // walk is not const
  std::set<const ir::Value *> out;
  function.walk([&](ir::Operation &op) {
    if (op.code() != OpCode::Cast)
      return;
    Scalar to = op.result()->type().element();
    const ir::Value *from = op.operand(0);
    const ir::Operation *producer = from->defining_op();
    if ((to != Scalar::F16 && to != Scalar::BF16) ||
        from->type().element() != Scalar::F32 || !producer)
      return;
    switch (producer->code()) {
    case OpCode::Add:
    case OpCode::Sub:
    case OpCode::Mul:
    case OpCode::Fma:
    case OpCode::Exp:
    case OpCode::Exp2:
      out.insert(op.result());
      break;
    default:
      break;
    }
  });
  return out;
}

} // namespace blocc::nvptx
