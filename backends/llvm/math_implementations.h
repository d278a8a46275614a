// The vectorized math functions behind emit_math (math_functions.h), on the
// lanes of an f32 or f64 value. Each file says how its functions reduce
// the argument and how accurate they are; the polynomials come from
// tools/math/fit_math_polynomials.py.
#pragma once

#include "backends/llvm/math_lanes.h"

#include <functional>

namespace blocc::llvm_backend::math {

// math_exp_log.cpp
llvm::Value *exp(FloatLanes &f, llvm::Value *x, bool base2);
llvm::Value *log(FloatLanes &f, llvm::Value *x, bool base2);
// math_trig.cpp
/// |x| = j pi/2 + r, |r| <= pi/4 (r = r_high + r_low in x's format, j an
/// integer of x's width whose two low bits are the quadrant).
struct TrigReduction {
  llvm::Value *r, *r_low, *j;
};
/// How the lanes set in `huge` (finite |x| beyond the Cody-Waite
/// reduction's range) are reduced, given ax = |x| and the Cody-Waite
/// reduction of the other lanes: returns the reduction of every lane.
using HugeTrigReduction =
    std::function<TrigReduction(FloatLanes &f, llvm::Value *huge,
                                llvm::Value *ax, const TrigReduction &others)>;
/// sin or cos of x; lanes beyond the Cody-Waite range are reduced by
/// `huge` where given (targets without a C library: the GPU), else
/// computed by the C library per lane.
llvm::Value *sin_cos(FloatLanes &f, llvm::Value *x, bool cosine,
                     const HugeTrigReduction *huge = nullptr);
// math_tanh_erf.cpp
/// 2 / (e^{2a} + 1), tanh's distance from 1, for lanes a in [0, 10] (f32)
/// or [0, 20] (f64); tanh needs it where a >= 1.
using TanhComplement =
    std::function<llvm::Value *(FloatLanes &f, llvm::Value *a)>;
/// e^{-t} for lanes t = x^2 in [0, 16] (f32) or [0, 35.1] (f64); erf needs
/// it where t >= 1, scaled by erfc's small share of the result.
using ExpOfNegative =
    std::function<llvm::Value *(FloatLanes &f, llvm::Value *t)>;
/// tanh and erf of x. A target with faster exp and reciprocal instructions
/// than the portable code passes its own `complement` or `exp_of_negative`
/// (the GPU); by default the vectorized exp and an exact division.
llvm::Value *tanh(FloatLanes &f, llvm::Value *x,
                  const TanhComplement &complement = {});
llvm::Value *erf(FloatLanes &f, llvm::Value *x,
                 const ExpOfNegative &exp_of_negative = {});

} // namespace blocc::llvm_backend::math
