// Values that come from nowhere but the program's position: constants,
// program ids, arange; and the ops that only change how a value is seen
// (splat, broadcast, expand_dims), which move no data: in a layout, the
// operand's register r is the result's register r (layout.h).
#include "backends/nvptx/kernel_lowering.h"

#include "backends/llvm/constants.h"
#include "ir/error.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

namespace blocc::nvptx {

using ir::OpCode;

namespace {

llvm::Intrinsic::ID program_register(OpCode code, int64_t axis) {
  static const llvm::Intrinsic::ID ids[] = {
      llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
      llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
      llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  static const llvm::Intrinsic::ID counts[] = {
      llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
      llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
      llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
  return code == OpCode::ProgramId ? ids[axis] : counts[axis];
}

} // namespace

llvm::Value *KernelLowering::creation_scalar(const ir::Operation &op) {
  switch (op.code()) {
  case OpCode::Constant:
    return llvm_backend::element_constant(
        context, op.result()->type().element(), op.attributes().at("value"));
  case OpCode::ProgramId:
  case OpCode::NumPrograms:
    return builder.CreateIntrinsic(
        program_register(op.code(), op.int_attr("axis")), {}, {});
  default:
    throw Error("internal: " + op.describe() + " is not a creation op");
  }
}

KernelLowering::Registers
KernelLowering::creation_block(const ir::Operation &op, const Layout &layout) {
  int64_t n = parent(layout).num_registers();
  switch (op.code()) {
  case OpCode::Constant:
    return Registers(n, llvm_backend::element_constant(
                            context, op.result()->type().element(),
                            op.attributes().at("value")));
  case OpCode::Splat:
    return Registers(n, scalar(op.operand(0)));
  case OpCode::Arange: {
    llvm::Value *start =
        builder.getInt32(static_cast<uint32_t>(op.int_attr("start")));
    return per_register(layout, [&](int64_t r) {
      return builder.CreateAdd(start, element_index(layout, r, 0));
    });
  }
  case OpCode::Reshape:
    return registers(op.operand(0), reshaped_operand_layout(op, layout));
  case OpCode::Broadcast:
  case OpCode::ExpandDims: {
    // The operand's layout shares the result's parent (assign_layouts.h).
    const ir::Value *operand = op.operand(0);
    if (!operand->type().is_block()) // a scalar made a block of one
      return Registers(n, scalar(operand));
    Layout seen{layout.parent, layout.dims, operand->type().shape()};
    if (op.code() == OpCode::ExpandDims)
      seen.dims.erase(seen.dims.begin() + op.int_attr("axis"));
    return registers(operand, seen);
  }
  default:
    throw Error("internal: " + op.describe() + " is not a creation op");
  }
}

} // namespace blocc::nvptx
