#include "backends/llvm/trip_count.h"

#include <llvm/IR/IRBuilder.h>

namespace blocc::llvm_backend {

namespace {

// Loop bounds are used in 64 bits so that no 32-bit range overflows.
llvm::Value *widen(llvm::IRBuilderBase &builder, llvm::Value *v,
                   bool is_signed) {
  return is_signed ? builder.CreateSExt(v, builder.getInt64Ty())
                   : builder.CreateZExt(v, builder.getInt64Ty());
}

} // namespace

llvm::Value *trip_count(llvm::IRBuilderBase &builder, llvm::Value *lb,
                        llvm::Value *ub, llvm::Value *step, bool is_signed) {
  llvm::Type *wide = builder.getInt64Ty();
  llvm::Value *wide_lb = widen(builder, lb, is_signed),
              *wide_ub = widen(builder, ub, is_signed),
              *wide_step = widen(builder, step, is_signed);
  llvm::Value *upward =
      is_signed ? builder.CreateICmpSGT(
                      step, llvm::Constant::getNullValue(step->getType()))
                : builder.getTrue();
  llvm::Value *nonempty = builder.CreateSelect(
      upward,
      is_signed ? builder.CreateICmpSLT(lb, ub) : builder.CreateICmpULT(lb, ub),
      builder.CreateICmpSGT(lb, ub));
  llvm::Value *distance =
      builder.CreateSelect(upward, builder.CreateSub(wide_ub, wide_lb),
                           builder.CreateSub(wide_lb, wide_ub));
  llvm::Value *magnitude = builder.CreateSelect(
      upward, wide_step, builder.CreateSub(builder.getInt64(0), wide_step));
  // ceil(distance / magnitude) without overflow near the top of the range.
  llvm::Value *count = builder.CreateAdd(
      builder.CreateUDiv(distance, magnitude),
      builder.CreateZExt(
          builder.CreateICmpNE(builder.CreateURem(distance, magnitude),
                               builder.getInt64(0)),
          wide));
  return builder.CreateSelect(nonempty, count, builder.getInt64(0));
}

llvm::Value *induction_value(llvm::IRBuilderBase &builder, llvm::Value *lb,
                             llvm::Value *step, llvm::Value *trip,
                             bool is_signed) {
  llvm::Value *wide_iv = builder.CreateAdd(
      widen(builder, lb, is_signed),
      builder.CreateMul(builder.CreateZExt(trip, builder.getInt64Ty()),
                        widen(builder, step, is_signed)));
  return builder.CreateTrunc(wide_iv, lb->getType());
}

llvm::Type *counter_type(llvm::IRBuilderBase &builder, llvm::Value *lb) {
  return lb->getType()->getIntegerBitWidth() <= 32 ? builder.getInt32Ty()
                                                   : builder.getInt64Ty();
}

} // namespace blocc::llvm_backend
