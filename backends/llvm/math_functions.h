// The float math functions of the block IR (exp .. ceil) on f32 or f64
// values, scalars or vectors, as LLVM IR.
//
// sqrt, floor and ceil are exact operations; rsqrt is 1 / sqrt(x)
// rounded twice, as the interpreter computes it. exp, exp2, log, log2, sin,
// cos, tanh and erf are vectorized implementations written here
// (math_exp_log.cpp, math_trig.cpp, math_tanh_erf.cpp, on the helpers of
// math_lanes.h), for f32 and f64 (f16/bf16 use f32), within 1 ulp of the
// correctly rounded result (README.md lists the measured errors), so they
// may differ from the interpreter's C library in the last bit. The only C
// library calls left are sin and cos of finite arguments beyond their
// reduction's range (|x| >= 2^29 for f32, 2^20 for f64), made per lane in
// a block that runs only when some lane needs it. floor and ceil are
// emulated on x86 targets without SSE4.1, where LLVM would call floorf.
#pragma once

#include "ir/opcode.h"

namespace llvm {
class IRBuilderBase;
class Value;
} // namespace llvm

namespace blocc::llvm_backend {

llvm::Value *emit_math(llvm::IRBuilderBase &b, ir::OpCode op, llvm::Value *x);

} // namespace blocc::llvm_backend
