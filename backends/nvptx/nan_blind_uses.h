// Which f16/bf16 -> f32 casts may skip the NaN fix-up of lower_math.cpp.
//
// The exact widening gives a NaN its sign and the quiet payload backends/llvm
// gives it, which costs a compare, a select and the 16-bit source kept
// beside the f32 result, per element. In f16 layer norm on 4, 8 and 16 warps
// that doubled the registers and made ptxas spill (up to 7.8 KB per thread).
// The fix-up is only visible where the f32 bits themselves reach something:
// PTX's f32 add, sub, mul, div and the exp of lower_math.cpp return their own
// canonical NaN whatever NaN came in, and a comparison only asks whether it
// is a NaN, which the hardware cvt keeps. So a cast whose every use is one of
// those (or a reduction combining at least two elements with nothing else)
// needs no fix-up: what the kernel computes is the same, bit for bit.
#pragma once

#include "ir/function.h"

#include <set>

namespace blocc::nvptx {

/// The results of f16/bf16 -> f32 casts whose NaN bits nothing observes.
std::set<const ir::Value *>
widens_with_unobserved_nan_bits(const ir::Function &kernel);

} // namespace blocc::nvptx
