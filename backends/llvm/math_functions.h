// The float math functions of the block IR (exp .. ceil) on f32 or f64
// values, scalars or vectors, as LLVM IR.
//
// sqrt, floor and ceil are exact hardware operations; rsqrt is 1 / sqrt(x)
// rounded twice, as the interpreter computes it. exp, exp2, log and log2 on
// f32 are vectorized polynomial implementations written here (within 2 ulp
// of the correctly rounded result; f16/bf16 use them through f32). The
// other transcendentals (sin, cos, tanh, erf) and every f64 function call
// the C library per lane, which makes them bit-identical to the
// interpreter; vectorizing them is the next step.
#pragma once

#include "ir/opcode.h"

namespace llvm {
class IRBuilderBase;
class Value;
} // namespace llvm

namespace blocc::llvm_backend {

llvm::Value *emit_math(llvm::IRBuilderBase &b, ir::OpCode op, llvm::Value *x);

} // namespace blocc::llvm_backend
