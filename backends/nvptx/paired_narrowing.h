// Pairs of f32 -> f16 (or bf16) narrowings packed into one 32-bit word, as
// one cvt.rn.f16x2.f32 (cvt.rn.bf16x2.f32).
//
// A dot on tensor cores whose A is computed in registers (attention's
// probabilities) packs its f16 operand two elements a register: each pair
// was two cvt.rn.f16.f32 and a byte permute to pack them, three
// instructions where the paired conversion is one. The same packing
// happens where a block of 16-bit values is stored as 32-bit words.
//
// After -O3 the packing reads
//   or(shl(zext(bitcast(fptrunc hi)), 16), zext(bitcast(fptrunc lo)))
// and becomes bitcast(ff2f16x2.rn(hi, lo)) to i32: the same rounding to
// nearest even of each element, and the same NaN (a bare fptrunc is only
// left where the hardware's NaN is the result: lower_math.cpp), since
// both are the one conversion instruction on two or one element.
#pragma once

namespace llvm {
class Module;
} // namespace llvm

namespace blocc::nvptx {

/// Rewrites every packing of two narrowed f32 values into an i32 in
/// `module` as one paired conversion.
void emit_paired_narrowing(llvm::Module &module);

} // namespace blocc::nvptx
