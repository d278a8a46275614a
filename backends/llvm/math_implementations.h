// The vectorized math functions behind emit_math (math_functions.h), on the
// lanes of an f32 or f64 value. Each file says how its functions reduce
// the argument and how accurate they are; the polynomials come from
// tools/math/fit_math_polynomials.py.
#pragma once

#include "backends/llvm/math_lanes.h"

namespace blocc::llvm_backend::math {

// math_exp_log.cpp
llvm::Value *exp(FloatLanes &f, llvm::Value *x, bool base2);
llvm::Value *log(FloatLanes &f, llvm::Value *x, bool base2);
// math_trig.cpp
llvm::Value *sin_cos(FloatLanes &f, llvm::Value *x, bool cosine);
// math_tanh_erf.cpp
llvm::Value *tanh(FloatLanes &f, llvm::Value *x);
llvm::Value *erf(FloatLanes &f, llvm::Value *x);

} // namespace blocc::llvm_backend::math
