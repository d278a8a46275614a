// The number of iterations of a block-IR `for` loop, computed once before
// the loop, and its induction variable per iteration (both LLVM backends run
// loops as a counted loop from 0, so that an induction variable near the end of
// its type's range never wraps).
#pragma once

namespace llvm {
class IRBuilderBase;
class Type;
class Value;
} // namespace llvm

namespace blocc::llvm_backend {

/// i64 ceil((ub - lb) / step) for `for iv = lb; iv < ub (or > ub when step
/// is negative); iv += step`, and 0 for an empty range. lb, ub and step are
/// integers of one type, signed when `is_signed` (an unsigned loop only
/// counts upwards). step must not be 0 (callers report that first).
llvm::Value *trip_count(llvm::IRBuilderBase &builder, llvm::Value *lb,
                        llvm::Value *ub, llvm::Value *step, bool is_signed);

/// The induction variable of iteration `trip` (counted from 0; i64, or
/// the narrower unsigned counter of counter_type): lb + trip * step
/// computed in 64 bits, in lb's type.
llvm::Value *induction_value(llvm::IRBuilderBase &builder, llvm::Value *lb,
                             llvm::Value *step, llvm::Value *trip,
                             bool is_signed);

/// The narrowest integer type, of 32 or 64 bits, that counts every
/// iteration of a loop whose induction variable has lb's type: i32 (as
/// unsigned) for induction variables of up to 32 bits, whose ranges hold
/// at most 2^32 - 1 steps; i64 otherwise.
llvm::Type *counter_type(llvm::IRBuilderBase &builder, llvm::Value *lb);

} // namespace blocc::llvm_backend
