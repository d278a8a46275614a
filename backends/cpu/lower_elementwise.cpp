// Elementwise ops (arithmetic, math, comparisons, select, casts, pointer
// arithmetic) and constants, on vectors of a chunk or on scalars. The
// arithmetic itself is backends/llvm/element_ops (shared with the GPU
// backend); this file feeds it operands and reports integer division by
// zero as the interpreter does.
#include "backends/cpu/kernel_lowering.h"

#include "backends/llvm/constants.h"
#include "backends/llvm/element_ops.h"
#include "backends/llvm/one_divisor.h"
#include "ir/error.h"

#include <llvm/Analysis/VectorUtils.h>

namespace blocc::cpu {

using ir::OpCode;
using ir::Scalar;

namespace llb = llvm_backend;

llvm::Value *KernelLowering::constant_value(const ir::Operation &op) {
  const ir::Type &type = op.result()->type();
  auto it = op.attributes().find("value");
  if (it == op.attributes().end())
    unsupported(op, "a constant without a value");
  try {
    return llb::element_constant(context, type.element(), it->second);
  } catch (const Error &e) {
    unsupported(op, e.what());
  }
}

llvm::Value *
KernelLowering::apply_elementwise(const ir::Operation &op,
                                  const std::vector<llvm::Value *> &x) {
  OpCode code = op.code();
  const ir::Type &result = op.result()->type();
  Scalar element = result.element();
  Scalar operand =
      op.num_operands() > 0 ? op.operand(0)->type().element() : element;
  try {
    switch (code) {
    case OpCode::Cmp:
      return llb::emit_compare(builder, op.string_attr("predicate"), operand,
                               x[0], x[1]);
    case OpCode::Select:
      return builder.CreateSelect(x[0], x[1], x[2]);
    case OpCode::AddPtr: {
      Scalar offset = op.operand(1)->type().element();
      llvm::Type *i64 =
          x[1]->getType()->isVectorTy()
              ? vector_of(builder.getInt64Ty(),
                          static_cast<int>(
                              llvm::cast<llvm::FixedVectorType>(x[1]->getType())
                                  ->getNumElements()))
              : builder.getInt64Ty();
      // Offsets extend by their signedness, then wrap like the address.
      llvm::Value *wide = ir::is_signed(offset)
                              ? builder.CreateSExtOrTrunc(x[1], i64)
                              : builder.CreateZExtOrTrunc(x[1], i64);
      return builder.CreateGEP(storage_type(op.operand(0)->type().pointee()),
                               x[0], wide);
    }
    case OpCode::Cast:
      if (operand == Scalar::Ptr && element == Scalar::Ptr)
        return x[0];
      return llb::emit_cast(builder, operand, element, x[0]);
    case OpCode::Bitcast:
    case OpCode::PtrToInt:
    case OpCode::IntToPtr:
      return llb::emit_bitcast(builder, operand, element, x[0]);
    case OpCode::Div:
      // A divisor that is one value across the vector (x / sum in a
      // softmax): one division per divisor, multiplications per element.
      if (element == Scalar::F32 && x[1]->getType()->isVectorTy())
        if (llvm::Value *divisor = llvm::getSplatValue(x[1]))
          if (llvm::Value *q =
                  llb::divide_by_one_divisor(builder, x[0], divisor))
            return q;
      break;
    case OpCode::Fma:
      return llb::emit_fma(builder, element, x[0], x[1], x[2]);
    case OpCode::Neg:
    case OpCode::Not:
    case OpCode::Abs:
      return llb::emit_unary(builder, code, element, x[0]);
    default:
      break;
    }
    if (ir::is_unary_math(code)) {
      llvm::Value *r = llb::emit_unary(builder, code, element, x[0]);
      return ir::flushes_subnormals(op) ? llb::flush_subnormals(builder, r) : r;
    }
    if (code >= OpCode::Add && code <= OpCode::Umulhi)
      return llb::emit_binary(builder, code, element, x[0], x[1]);
  } catch (const Error &e) {
    unsupported(op, e.what());
  }
  unsupported(op, "not an elementwise operation");
}

bool is_integer_division(const ir::Operation &op) {
  return (op.code() == OpCode::Div || op.code() == OpCode::Rem) &&
         op.result()->type().is_integer();
}

void KernelLowering::check_divisors(const ir::Operation &op,
                                    llvm::Value *divisor, llvm::Value *base,
                                    int vl, llvm::Value *active) {
  const char *what = op.code() == OpCode::Div ? "integer division by zero"
                                              : "integer remainder by zero";
  int site = add_fault_site(op, what, op.result()->type().shape());
  llvm::Value *zero = llb::emit_divisor_is_zero(builder, divisor);
  if (active)
    zero = builder.CreateAnd(zero, active);
  if (!divisor->getType()->isVectorTy()) {
    fail_if(zero, site, [&] { return i64(0); });
    return;
  }
  llvm::Value *any = builder.CreateOrReduce(zero);
  fail_if(any, site, [&] {
    if (!base)
      return i64(0);
    return builder.CreateAdd(builder.CreateZExt(base, builder.getInt64Ty()),
                             first_set_lane(zero, vl));
  });
}

llvm::Value *KernelLowering::elementwise_vector(Chunk &chunk,
                                                const ir::Operation &op,
                                                const Lanes &lanes) {
  std::vector<llvm::Value *> operands;
  for (const ir::Value *v : op.operands())
    operands.push_back(evaluate(chunk, v, lanes));
  if (is_integer_division(op)) {
    // Integer divisions are materialized where they stand (see
    // lower_op), always over contiguous chunks of their own shape.
    if (lanes.kind != Lanes::Kind::Contiguous)
      throw Error("internal: an integer division evaluated off its own loop");
    check_divisors(op, operands[1], lanes.base, chunk.vl);
  }
  return apply_elementwise(op, operands);
}

void KernelLowering::lower_scalar_elementwise(const ir::Operation &op) {
  std::vector<llvm::Value *> operands;
  for (const ir::Value *v : op.operands())
    operands.push_back(scalar(v));
  if (is_integer_division(op))
    check_divisors(op, operands[1], nullptr, 1);
  set_scalar(op.result(), apply_elementwise(op, operands));
}

} // namespace blocc::cpu
