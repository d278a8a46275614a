// Exact conversions to and from f16 and bf16 (held as i16 bits, see
// llvm_types.h), emitted as LLVM IR for scalars and vectors alike. They
// round exactly as the reference interpreter does: once, to nearest even,
// from the exact source value, with NaN turned into the format's quiet NaN
// of the same sign (0x7e00 for f16, 0x7fc0 for bf16).
//
// Hardware and LLVM's own lowering are not relied on where they differ:
// x86's bf16 instructions flush subnormals, and LLVM narrows f64 or i64
// through f32, which rounds twice. Narrowing from f64 therefore goes
// through f32 rounded to odd (exact for any later rounding to at most 22
// bits), and 64-bit integers are first jammed to 53 bits the same way.
#pragma once

#include "ir/type.h"

namespace llvm {
class IRBuilderBase;
class Value;
} // namespace llvm

namespace blocc::llvm_backend {

/// f16/bf16 bits (i16) -> their exact f32 value. NaNs keep their payload
/// (narrowing canonicalizes them again).
llvm::Value *widen_narrow_float(llvm::IRBuilderBase &b, llvm::Value *bits,
                                ir::Scalar s);

/// f32 -> f16/bf16 bits, rounded to nearest even.
llvm::Value *narrow_from_f32(llvm::IRBuilderBase &b, llvm::Value *value,
                             ir::Scalar s);

/// f64 -> f32 rounded to odd: an inexact result gets the neighbour whose
/// last mantissa bit is 1.
llvm::Value *f64_to_f32_round_to_odd(llvm::IRBuilderBase &b,
                                     llvm::Value *value);

/// f64 -> f16/bf16/fp8 bits (through f32 rounded to odd), or f32 (one
/// IEEE rounding).
llvm::Value *narrow_from_f64(llvm::IRBuilderBase &b, llvm::Value *value,
                             ir::Scalar s);

/// fp8 (f8e4m3, f8e5m2) bits (i8) -> their exact f32 value (NaN: the quiet
/// NaN of the same sign).
llvm::Value *fp8_to_f32(llvm::IRBuilderBase &b, llvm::Value *bits,
                        ir::Scalar s);

/// f32 -> fp8 bits, rounded to nearest even in OCP saturation mode: finite
/// values beyond the format and infinities become its largest finite value
/// of the same sign; NaN becomes the format's NaN (E4M3 0x7f, E5M2 0x7e)
/// with the sign kept.
llvm::Value *fp8_from_f32(llvm::IRBuilderBase &b, llvm::Value *value,
                          ir::Scalar s);

/// An integer of element type `from` -> float type `to` (f16, bf16, f32,
/// f64, fp8; narrow results as bits), rounded once from the exact integer.
llvm::Value *integer_to_float(llvm::IRBuilderBase &b, llvm::Value *value,
                              ir::Scalar from, ir::Scalar to);

/// `value` (f32 or f64) with every NaN replaced by the quiet NaN of the
/// same sign that the interpreter produces (0x7fc00000 / 0x7ff8...).
llvm::Value *canonicalize_nan(llvm::IRBuilderBase &b, llvm::Value *value);

} // namespace blocc::llvm_backend
