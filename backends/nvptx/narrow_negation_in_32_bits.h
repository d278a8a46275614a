// 16-bit negation and absolute value computed in 32-bit registers.
//
// The PTX assembler of CUDA 13.0, and the JIT of the drivers that ship
// with it, take the 32-bit result of neg.s16 and abs.s16 (computed on the
// sign-extended operand) as already sign-extended, and drop the
// cvt.s32.s16 after it. For x = -32768 the 32-bit value is +32768, so a
// widened -x or |x|, or a 16-bit compare of it, is wrong: on an H100 the
// i32 cast of an i16 |x| read 32768 where -32768 is right. The assembler
// of CUDA 13.5 is right; the same operation written on 32 bits and
// truncated is right in both.
//
// So after -O3, every i16 sub(0, x) and abs(x) (vectors element by
// element) becomes inline asm that extends, negates or takes the absolute
// value in 32 bits, and truncates. 8-bit values need nothing: every use
// extends them again from 8 bits.
#pragma once

namespace llvm {
class Module;
} // namespace llvm

namespace blocc::nvptx {

/// Rewrites every i16 negation and absolute value in `module` as 32-bit
/// inline asm.
void emit_narrow_negation_in_32_bits(llvm::Module &module);

} // namespace blocc::nvptx
