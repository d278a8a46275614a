// Which f16/bf16 -> f32 casts, f32 exps and f32 maximum/minimum may skip
// the NaN fix-up of lower_math.cpp.
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
// Likewise an f32 exp/exp2 gives back a NaN argument's own (quieted) bits,
// and f32 maximum/minimum the second operand's bits when both are NaN,
// through a compare and a select per element; where nothing observes them,
// the hardware's NaN does as well (softmax: the exps go only to a sum and a
// division, the row maximum to a subtraction). Moves (splat, broadcast,
// expand_dims, reshape), maximum, minimum and reductions combining only by
// such ops or arithmetic show a value's bits only where their own results
// are seen, so the question follows their results.
#pragma once

#include "ir/function.h"

#include <set>

namespace blocc::nvptx {

/// The results of f16/bf16 -> f32 casts, f32 exp/exp2 and f32
/// maximum/minimum whose NaN bits nothing observes.
std::set<const ir::Value *>
results_with_unobserved_nan_bits(const ir::Function &kernel);

/// The results of f32 -> f16/bf16 casts of values computed by f32 add, sub,
/// mul, fma, exp or exp2 (or carried by a loop from such values and
/// constants). On the GPU these return the hardware's one NaN
/// (0x7fffffff, where the CPU backend returns the x86 default NaN or an
/// operand's), so a NaN reaching the cast never has bits of the program's
/// own; the cast gives the hardware's f16/bf16 NaN for it (cvt.rn), as f16
/// arithmetic would, instead of re-deriving backends/llvm's 0x7e00/0x7fc0
/// from the sign bit: that select per element, on halves unpacked from
/// cvt's pairs, was a third of f16 layer norm's instructions.
std::set<const ir::Value *>
narrows_of_hardware_nans(const ir::Function &kernel);

} // namespace blocc::nvptx
