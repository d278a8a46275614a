// Elementwise ops on one element (a register or a scalar) through
// backends/llvm's element ops, which carry the interpreter's semantics;
// only what involves pointers (global, address space 1, here) is done in
// this file.
#include "backends/nvptx/kernel_lowering.h"

#include "backends/llvm/element_ops.h"
#include "ir/error.h"

namespace blocc::nvptx {

using ir::OpCode;
using ir::Scalar;
namespace llb = llvm_backend;

llvm::Value *KernelLowering::elementwise(const ir::Operation &op,
                                         const std::vector<llvm::Value *> &x) {
  if (llvm::Value *v = gpu_element_op(op, x))
    return v;
  Scalar operand = op.operand(0)->type().element();
  Scalar result = op.result()->type().element();
  switch (op.code()) {
  case OpCode::Add:
  case OpCode::Sub:
  case OpCode::Mul:
  case OpCode::Div:
  case OpCode::Rem:
  case OpCode::And:
  case OpCode::Or:
  case OpCode::Xor:
  case OpCode::Shl:
  case OpCode::Shr:
  case OpCode::Minimum:
  case OpCode::Maximum:
  case OpCode::Umulhi:
    // A zero divisor stopped the program before (check_division); the
    // emitted division divides by 1 there and never traps.
    return llb::emit_binary(builder, op.code(), operand, x[0], x[1]);
  case OpCode::Cmp:
    return llb::emit_compare(builder, op.string_attr("predicate"), operand,
                             x[0], x[1]);
  case OpCode::AddPtr: {
    // Offsets extend by their signedness, then wrap like the address.
    Scalar offset = op.operand(1)->type().element();
    llvm::Value *wide =
        ir::is_signed(offset)
            ? builder.CreateSExtOrTrunc(x[1], builder.getInt64Ty())
            : builder.CreateZExtOrTrunc(x[1], builder.getInt64Ty());
    return builder.CreateGEP(storage_type(op.operand(0)->type().pointee()),
                             x[0], wide);
  }
  case OpCode::Neg:
  case OpCode::Not:
  case OpCode::Abs:
  case OpCode::Exp:
  case OpCode::Exp2:
  case OpCode::Log:
  case OpCode::Log2:
  case OpCode::Sqrt:
  case OpCode::Rsqrt:
  case OpCode::Sin:
  case OpCode::Cos:
  case OpCode::Tanh:
  case OpCode::Erf:
  case OpCode::Floor:
  case OpCode::Ceil:
    return llb::emit_unary(builder, op.code(), operand, x[0]);
  case OpCode::Fma:
    return llb::emit_fma(builder, operand, x[0], x[1], x[2]);
  case OpCode::Select:
    return builder.CreateSelect(x[0], x[1], x[2]);
  case OpCode::Cast:
    return llb::emit_cast(builder, operand, result, x[0]);
  case OpCode::Bitcast:
  case OpCode::PtrToInt:
  case OpCode::IntToPtr:
    if (operand == Scalar::Ptr && result == Scalar::Ptr)
      return x[0]; // opaque pointers: only the pointee changes
    if (operand == Scalar::Ptr)
      return builder.CreatePtrToInt(x[0], value_type(op.result()->type()));
    if (result == Scalar::Ptr)
      return builder.CreateIntToPtr(x[0], value_type(op.result()->type()));
    return llb::emit_bitcast(builder, operand, result, x[0]);
  default:
    throw Error("internal: " + op.describe() + " is not elementwise");
  }
}

} // namespace blocc::nvptx
