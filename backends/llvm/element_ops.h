// Elementwise block-IR operations as LLVM IR, with the semantics the
// reference interpreter decides (backends/interpreter/README.md): integers
// wrap, shifts by the width or more give 0 or the sign fill, float
// minimum/maximum ignore a NaN operand and order -0 below +0, f16/bf16 are
// computed in f32 and rounded back once, casts round once and saturate.
//
// Every function takes and returns values in register form (llvm_types.h),
// scalars or vectors alike, so the CPU backend's vector loops, its scalar
// code and the combine regions of reductions share one implementation.
// Nothing here traps: integer division by zero must be reported by the
// caller before the quotient is used (the emitted division substitutes a
// harmless divisor), and INT_MIN / -1 wraps to INT_MIN.
#pragma once

#include "ir/opcode.h"
#include "ir/type.h"

#include <string>

namespace llvm {
class IRBuilderBase;
class Module;
class Value;
} // namespace llvm

namespace blocc::llvm_backend {

/// add .. umulhi on operands of element type `s`.
llvm::Value *emit_binary(llvm::IRBuilderBase &b, ir::OpCode op, ir::Scalar s,
                         llvm::Value *lhs, llvm::Value *rhs);

/// minimum/maximum (`is_max`) of f32/f64 vectors as emit_binary computes
/// them, for folds whose second operand `y` is the new data (a reduction's
/// chunk): where no lane of y is NaN or zero, the one compare and select
/// that x86 does in one MAXPS/MINPS (x > y ? x : y: a NaN x gives y, as
/// the interpreter's rule does, and only zeros compare equal with their
/// signs unordered); the full rule runs in a block of its own otherwise.
/// Leaves the builder after the join.
llvm::Value *emit_fold_min_max(llvm::IRBuilderBase &b, bool is_max,
                               llvm::Value *x, llvm::Value *y);

/// `x` (f32, scalar or vector) with values below 2^-126 made +0, NaN kept:
/// exp2 with subnormals = "flush" (ir/function.h).
llvm::Value *flush_subnormals(llvm::IRBuilderBase &b, llvm::Value *x);

/// neg, not, abs and the float math functions (exp .. ceil).
llvm::Value *emit_unary(llvm::IRBuilderBase &b, ir::OpCode op, ir::Scalar s,
                        llvm::Value *x);

/// a * b + c, rounded once for floats (narrow floats through f64 and a
/// sum rounded to odd), wrapped for integers.
llvm::Value *emit_fma(llvm::IRBuilderBase &b, ir::Scalar s, llvm::Value *a,
                      llvm::Value *m, llvm::Value *c);

/// cmp {predicate}: ordered for floats except ne; integers by signedness;
/// pointers as unsigned addresses. Returns i1 (or a vector of i1).
llvm::Value *emit_compare(llvm::IRBuilderBase &b, const std::string &predicate,
                          ir::Scalar s, llvm::Value *lhs, llvm::Value *rhs);

/// The cast op between numeric element types (not pointers); throws
/// blocc::Error for conversions the LLVM backends do not implement (fp8).
llvm::Value *emit_cast(llvm::IRBuilderBase &b, ir::Scalar from, ir::Scalar to,
                       llvm::Value *x);

/// bitcast between element types of one width (pointers included).
llvm::Value *emit_bitcast(llvm::IRBuilderBase &b, ir::Scalar from,
                          ir::Scalar to, llvm::Value *x);

/// For an integer division or remainder: true (per lane) where the divisor
/// is zero, which the caller reports as an error.
llvm::Value *emit_divisor_is_zero(llvm::IRBuilderBase &b, llvm::Value *divisor);

/// x converted from register form to compute form (f16/bf16 bits -> f32)
/// and back.
llvm::Value *to_compute(llvm::IRBuilderBase &b, ir::Scalar s, llvm::Value *x);
llvm::Value *from_compute(llvm::IRBuilderBase &b, ir::Scalar s, llvm::Value *x);

} // namespace blocc::llvm_backend
