// Negated absolute values as a minimum: -|x| becomes min(x, -x).
//
// The PTX assembler (CUDA 13.0 and 13.5 alike, and so the drivers' JIT)
// derives a wrong range for neg(abs(x)): it folds comparisons of -|x| with
// a constant to false, whatever x is. `-|x| >= -100`, `-|x| == -3` and
// `-|x| > -16` all read false, so max(-|x|, -16) became the constant -16
// in a random kernel on an H100, where x = 0 gives 0. The assembler reads
// min(x, -x) right, and it is the same value for every x (INT_MIN too).
//
// So after -O3 (which turns select(x < 0, x, -x) and its kin into
// sub(0, abs(x))), every such subtraction becomes a signed minimum; the
// minimum reaches PTX as a compare and select
// (integer_min_max_as_selects.h).
#pragma once

namespace llvm {
class Module;
} // namespace llvm

namespace blocc::nvptx {

/// Rewrites every sub(0, abs(x)) in `module` (scalars and vectors) as
/// smin(x, sub(0, x)).
void emit_negated_abs_as_min(llvm::Module &module);

} // namespace blocc::nvptx
