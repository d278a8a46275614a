// f32 division of many numerators by one divisor (softmax's numerators /
// sum, x / n), correctly rounded like fdiv but with one division per
// divisor instead of one per element.
//
// With y = RN(1/b) computed once, each quotient is
//     q = RN(a y),  r = a - q b (exact, one fma),  q' = RN(q + r y),
// and q' = RN(a / b) by Markstein's theorem (y within half an ulp of 1/b,
// q within one ulp of a/b) as long as nothing underflows or overflows on
// the way: y, q, r y and the quotient normal. That holds when |b| is in
// [2^-125, 2^125] and |a| in [2^-100 max(1, |b|), 2^125 min(1, |b|)]
// (then |a/b| is in [2^-100, 2^125], |y| in [2^-125, 2^125], r a multiple
// of at least 2^-148 and r y near ulp(q), at least 2^-124); zeros,
// infinities, NaNs, subnormals and values near the ends of the range fall
// outside and take the hardware division. The NVPTX backend
// (backends/nvptx/lower_divide.cpp) checks the same bounds; the CPU
// backend's check is tests/cpu/division_test.cpp, bit for bit against
// float division over random, edge and special pairs.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace blocc::llvm_backend {

/// One f32 divisor b (a scalar), prepared for many quotients.
struct OneDivisor {
  llvm::Value *divisor;    // b
  llvm::Value *reciprocal; // RN(1 / b)
  llvm::Value *fits;       // i1: |b| in [2^-125, 2^125]
  llvm::Value *low, *high; // the bounds on |a| (f32)

  OneDivisor(llvm::IRBuilderBase &b, llvm::Value *divisor);
  /// Whether `magnitude` (|a|, lanes or a scalar) is within [low, high]:
  /// i1 lanes shaped like it (without `fits`).
  llvm::Value *numerator_fits(llvm::IRBuilderBase &b, llvm::Value *magnitude);
  /// q' above for numerators `a` (lanes or a scalar): RN(a / b) wherever
  /// `fits` and numerator_fits(|a|) hold.
  llvm::Value *quotient(llvm::IRBuilderBase &b, llvm::Value *a);
};

/// a / divisor for a vector `a` of f32 lanes and one f32 `divisor` (a
/// scalar), rounded as fdiv rounds: the quotients above where every lane
/// fits, else (a branch that ordinary data never takes) the vector
/// division. Null where the target has no FMA (fdiv is the caller's then).
/// Leaves the builder after the join.
llvm::Value *divide_by_one_divisor(llvm::IRBuilderBase &b, llvm::Value *a,
                                   llvm::Value *divisor);

} // namespace blocc::llvm_backend
