// The float math functions of the block IR (exp .. ceil) on f32 or f64
// values, scalars or vectors, as LLVM IR.
//
// sqrt, floor and ceil are exact hardware operations; rsqrt is 1 / sqrt(x)
// rounded twice, as the interpreter computes it. The transcendental
// functions currently call the C library per lane (LLVM scalarizes its
// math intrinsics into libm calls), which makes them bit-identical to the
// interpreter; vectorized polynomial implementations are planned here.
#pragma once

#include "ir/opcode.h"

namespace llvm {
class IRBuilderBase;
class Value;
} // namespace llvm

namespace blocc::llvm_backend {

llvm::Value *emit_math(llvm::IRBuilderBase &b, ir::OpCode op, llvm::Value *x);

} // namespace blocc::llvm_backend
