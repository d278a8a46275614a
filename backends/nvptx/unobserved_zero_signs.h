// Which f32 maximum/minimum, and which f32 dots accumulating into +0, may
// leave the sign of a zero result to the hardware.
//
// blocc's maximum orders -0 below +0 (backends/llvm), and PTX's max.f32
// may return either zero for a +0/-0 pair, so lower_math.cpp adds a zero
// whose sign it derives from the operands' bits: four integer instructions
// and an add per combine. In a row softmax those are most of the row
// maximum's work (31 of every 32 combines are in-thread). But the sign
// only matters where something tells the zeros apart. Adding, subtracting,
// multiplying, negating, moving (splat, broadcast, expand_dims, reshape),
// maximum, minimum, select, sqrt, floor, ceil, the odd functions and float
// casts change at most a zero's sign in their results, so the question
// follows them; exp, exp2, cos, log, log2 and abs give one result for
// both zeros, comparisons find them equal and integer casts make both 0,
// so there it ends. Anything else (a store, a division by the value, a
// reciprocal square root, an atomic, a print) observes it. Softmax's row
// maximum only reaches `exp(x - max)`: the sign cannot be seen, and the
// row maximum becomes one max.f32 per element.
//
// A dot into a +0 accumulator is +0 plus the products, which turns a sum
// of -0 into +0; warpgroup MMAs told not to read the accumulator (their
// first step, scale-d = 0) leave it -0, and need none of the 64-odd moves
// of zeros into the accumulator's registers. Attention's scores reach only
// maxima, exponentials and selections: their sign cannot be seen.
#pragma once

#include "ir/function.h"

#include <set>

namespace blocc::nvptx {

/// The results of f32 maximum/minimum, and of f32 dots accumulating into
/// +0, whose zero's sign nothing observes.
std::set<const ir::Value *>
results_with_unobserved_zero_signs(const ir::Function &kernel);

} // namespace blocc::nvptx
