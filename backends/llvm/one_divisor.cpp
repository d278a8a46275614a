// The quotients of one_divisor.h (the reasoning is at its top).
#include "backends/llvm/one_divisor.h"

#include "backends/llvm/math_lanes.h"

#include <llvm/IR/MDBuilder.h>

namespace blocc::llvm_backend {

namespace {

llvm::Value *f32(llvm::IRBuilderBase &b, float v) {
  return llvm::ConstantFP::get(b.getFloatTy(), v);
}

/// v splatted to x's shape (v itself where x is a scalar).
llvm::Value *shaped_like(llvm::IRBuilderBase &b, llvm::Value *v,
                         llvm::Value *x) {
  if (auto *vector = llvm::dyn_cast<llvm::FixedVectorType>(x->getType()))
    return b.CreateVectorSplat(vector->getNumElements(), v);
  return v;
}

} // namespace

OneDivisor::OneDivisor(llvm::IRBuilderBase &b, llvm::Value *d) : divisor(d) {
  reciprocal = b.CreateFDiv(f32(b, 1.0f), d);
  llvm::Value *size = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d);
  fits = b.CreateAnd(b.CreateFCmpOGE(size, f32(b, 0x1p-125f)),
                     b.CreateFCmpOLE(size, f32(b, 0x1p125f)));
  // minnum/maxnum of a NaN |b| give the constant: `fits` is false then.
  low =
      b.CreateMaxNum(f32(b, 0x1p-100f), b.CreateFMul(size, f32(b, 0x1p-100f)));
  high = b.CreateMinNum(f32(b, 0x1p125f), b.CreateFMul(size, f32(b, 0x1p125f)));
}

llvm::Value *OneDivisor::numerator_fits(llvm::IRBuilderBase &b,
                                        llvm::Value *magnitude) {
  return b.CreateAnd(
      b.CreateFCmpOGE(magnitude, shaped_like(b, low, magnitude)),
      b.CreateFCmpOLE(magnitude, shaped_like(b, high, magnitude)));
}

llvm::Value *OneDivisor::quotient(llvm::IRBuilderBase &b, llvm::Value *a) {
  llvm::Value *y = shaped_like(b, reciprocal, a);
  llvm::Value *d = shaped_like(b, divisor, a);
  llvm::Value *q = b.CreateFMul(a, y);
  llvm::Value *rest = b.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()},
                                        {b.CreateFNeg(q), d, a});
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {rest, y, q});
}

llvm::Value *divide_by_one_divisor(llvm::IRBuilderBase &b, llvm::Value *a,
                                   llvm::Value *divisor) {
  if (!math::target_has_fma(b))
    return nullptr;
  OneDivisor one(b, divisor);
  llvm::Value *magnitude = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
  llvm::Value *fast = b.CreateAnd(
      one.fits, b.CreateAndReduce(one.numerator_fits(b, magnitude)));
  llvm::Value *quick = one.quotient(b, a);

  llvm::BasicBlock *from = b.GetInsertBlock();
  llvm::Function *f = from->getParent();
  auto *slow = llvm::BasicBlock::Create(b.getContext(), "div.slow", f);
  auto *join = llvm::BasicBlock::Create(b.getContext(), "div.join", f);
  // The weights keep the division out of the hot loop's straight line.
  llvm::MDBuilder weights(b.getContext());
  b.CreateCondBr(fast, join, slow, weights.createBranchWeights(1 << 20, 1));
  b.SetInsertPoint(slow);
  llvm::Value *exact = b.CreateFDiv(
      a, b.CreateVectorSplat(
             llvm::cast<llvm::FixedVectorType>(a->getType())->getNumElements(),
             divisor));
  b.CreateBr(join);
  b.SetInsertPoint(join);
  llvm::PHINode *result = b.CreatePHI(a->getType(), 2);
  result->addIncoming(quick, from);
  result->addIncoming(exact, slow);
  return result;
}

} // namespace blocc::llvm_backend
