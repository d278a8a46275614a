#include "backends/llvm/trip_count.h"

#include <llvm/IR/IRBuilder.h>

namespace blocc::llvm_backend {

llvm::Value *trip_count(llvm::IRBuilderBase &builder, llvm::Value *lb,
                        llvm::Value *ub, llvm::Value *step, bool is_signed) {
  llvm::Type *wide = builder.getInt64Ty();
  // Distances are taken in 64 bits so that no 32-bit range overflows.
  auto widen = [&](llvm::Value *v) {
    return is_signed ? builder.CreateSExt(v, wide)
                     : builder.CreateZExt(v, wide);
  };
  llvm::Value *wide_lb = widen(lb), *wide_ub = widen(ub),
              *wide_step = widen(step);
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

} // namespace blocc::llvm_backend
