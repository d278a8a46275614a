// Math the GPU cannot take from the C library, as plain LLVM IR on scalar
// f32/f64 values (no NVVM intrinsic, no libm call), so that it also runs
// on the host: tests/nvptx/gpu_math_host_test.cpp compiles these very
// functions for x86 and checks them over millions of arguments without a
// GPU.
//
// - sin, cos: backends/llvm's (math_trig.cpp: Cody-Waite reduction,
//   within 1 ulp, the CPU backend's code), with finite arguments beyond
//   its range (|x| >= 2^29 for f32, 2^20 for f64), where the CPU backend
//   calls the C library, reduced by Payne and Hanek's method instead:
//   x = M 2^E (M the integer significand) times the bits of 2/pi that
//   matter (a 128-bit window for f32, 192 for f64, from a table of 1216
//   bits, tools/math/two_over_pi_bits.py), in 64-bit integer arithmetic,
//   modulo 4; the fraction becomes r as a double-double. The window keeps
//   126 (f32) or 190 (f64) fraction bits, which leaves r good to better
//   than 2^-70 relative even for the arguments closest to a multiple of
//   pi/2 (no f64 comes closer than about 2^-61 of pi/2): results within
//   the same 1 ulp as the ordinary range. Runs in a branch of its own that
//   only threads with such an argument take.
// - fmod: exact (the result is always representable), as the interpreter's
//   C library computes it: |x| is reduced by |y| 2^k, k = e(x) - e(y) - p
//   (p = 23 or 52) while it is positive, one step per p bits of the
//   quotient (at most 12 steps for f32, 40 for f64): q = trunc(a / b') is
//   an integer below 2^(p+1), and a - q b' is exact in one fma (a
//   multiple of b''s quantum smaller than b'), corrected by b' where the
//   division rounded q up; the result takes x's sign. NaN for y = 0,
//   infinite x or a NaN operand; x for |x| < |y| (y infinite included).
//   LLVM's NVPTX backend would lower frem to x - trunc(x / y) y, which is
//   not exact.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace blocc::nvptx {

/// sin or cos of an f32 or f64 scalar, within 1 ulp for every finite x.
/// The 2/pi table lives in `table_address_space` (global memory on the
/// GPU). The builder must be at the end of its block (a branch follows).
llvm::Value *emit_sin_cos(llvm::IRBuilderBase &b, llvm::Value *x, bool cosine,
                          unsigned table_address_space);

/// fmod(x, y) of f32 or f64 scalars, exact. The builder must be at the end
/// of its block (a loop follows).
llvm::Value *emit_fmod(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *y);

} // namespace blocc::nvptx
