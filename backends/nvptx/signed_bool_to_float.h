// Signed conversions of booleans to floating point as selects.
//
// LLVM 19's NVPTX target lowers `sitofp i1 %b` as a selp of 1 or 0 and a
// signed conversion of that integer, so true becomes +1.0 where it is
// -1.0 (a signed one-bit integer is 0 or -1). Its DAG combiner folds the
// conversion of a compare into the right selp of -1.0, which hides the bug
// until the boolean comes from elsewhere: -O3 turns a cast of a mask to
// i8, negated and cast to f32, into `sitofp i1 (freeze %mask)`, and a
// random kernel wrote 1 for -1 on an H100.
//
// So after -O3 every sitofp of i1 (scalars and vectors, to any float
// type) becomes select(b, -1.0, 0.0), which the target lowers as one selp.
#pragma once

namespace llvm {
class Module;
} // namespace llvm

namespace blocc::nvptx {

/// Rewrites every `sitofp i1` (or vector of i1) in `module` as a select of
/// -1.0 and 0.0.
void emit_signed_bool_to_float_as_select(llvm::Module &module);

} // namespace blocc::nvptx
