// Arithmetic on the lanes of one float value (f32 or f64, a scalar or a
// fixed vector) for the math function implementations (math_*.cpp): the
// building blocks they share, so that each function reads as its algorithm.
//
// Every multiply-add that is not required to be exact is llvm.fmuladd:
// fused on targets with FMA, a multiply and an add elsewhere, so that no
// target falls back to a per-lane fmaf call. The algorithms are written so
// that their accuracy holds either way (steps that must be exact use
// constants whose products are exact; see each file).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <cstdint>
#include <functional>
#include <initializer_list>

namespace blocc::llvm_backend::math {

struct FloatLanes {
  llvm::IRBuilderBase &b;
  llvm::Type *type; // float, double or a fixed vector of them
  llvm::Type *bits; // the integer of the same width, same shape
  /// Whether the target rounds to integers in one instruction (x86 before
  /// SSE4.1 does not: LLVM would call the C library per lane).
  bool native_rounding;

  /// Lanes shaped like x (x's type must be f32/f64 or a vector of them).
  static FloatLanes of(llvm::IRBuilderBase &b, llvm::Value *x);
  /// The same shape with another element type (f32 <-> f64).
  FloatLanes with_element(llvm::Type *element) const;

  bool is_f64() const { return type->getScalarType()->isDoubleTy(); }
  int mantissa_bits() const { return is_f64() ? 52 : 23; }

  llvm::Value *c(double v) const;
  llvm::Value *i(int64_t v) const;
  llvm::Value *inf() const;
  llvm::Value *nan() const;

  llvm::Value *add(llvm::Value *x, llvm::Value *y) {
    return b.CreateFAdd(x, y);
  }
  llvm::Value *sub(llvm::Value *x, llvm::Value *y) {
    return b.CreateFSub(x, y);
  }
  llvm::Value *mul(llvm::Value *x, llvm::Value *y) {
    return b.CreateFMul(x, y);
  }
  llvm::Value *div(llvm::Value *x, llvm::Value *y) {
    return b.CreateFDiv(x, y);
  }
  llvm::Value *neg(llvm::Value *x) { return b.CreateFNeg(x); }
  /// x * y + z, fused where the target has FMA.
  llvm::Value *mad(llvm::Value *x, llvm::Value *y, llvm::Value *z);
  /// cs[0] + t (cs[1] + t (...)) by Horner's rule with mad.
  llvm::Value *polynomial(llvm::Value *t, std::initializer_list<double> cs);

  llvm::Value *abs(llvm::Value *x);
  llvm::Value *min(llvm::Value *x, llvm::Value *y); // a NaN gives the other
  llvm::Value *max(llvm::Value *x, llvm::Value *y);
  /// x rounded to an integer, ties to even, for |x| < 2^mantissa_bits
  /// (beyond, on targets without a rounding instruction, x + 2^p loses
  /// the rounding); the sign of a zero result may differ from x's.
  llvm::Value *round_even(llvm::Value *x);
  /// floor and ceil for every x (NaN, infinities and -0 as the C library).
  llvm::Value *floor(llvm::Value *x);
  llvm::Value *ceil(llvm::Value *x);
  /// Integral x (|x| < 2^31) as i32 lanes, and integer lanes whose values
  /// fit in i32 as floats: through 32 bits, since those conversions are
  /// single instructions on every x86 vector extension (64-bit ones need
  /// AVX-512).
  llvm::Value *to_i32(llvm::Value *x);
  llvm::Value *from_i32(llvm::Value *i);
  /// |magnitude| with the sign bit of sign.
  llvm::Value *copysign(llvm::Value *magnitude, llvm::Value *sign);
  /// x with its sign bit flipped where flip (i1 lanes) is set.
  llvm::Value *flip_sign(llvm::Value *x, llvm::Value *flip);

  llvm::Value *is_nan(llvm::Value *x) { return b.CreateFCmpUNO(x, x); }
  llvm::Value *less(llvm::Value *x, double v) {
    return b.CreateFCmpOLT(x, c(v));
  }
  llvm::Value *select(llvm::Value *cond, llvm::Value *x, llvm::Value *y) {
    return b.CreateSelect(cond, x, y);
  }

  llvm::Value *to_bits(llvm::Value *x) { return b.CreateBitCast(x, bits); }
  llvm::Value *from_bits(llvm::Value *x) { return b.CreateBitCast(x, type); }
  /// 2^e for i32 lanes e (or lanes as wide as the float's) within the
  /// normal exponent range; what e holds above the bits that reach the
  /// exponent field is shifted out.
  llvm::Value *power_of_two(llvm::Value *e);
  /// p * 2^n for integral n (a float value, not NaN) whose halves are
  /// normal exponents (|n| up to about twice the largest), rounded once, so
  /// that subnormal results round correctly and large ones overflow to
  /// infinity: one VSCALEF on AVX-512 vectors, else two steps, each by a
  /// normal power of two.
  llvm::Value *scale(llvm::Value *p, llvm::Value *n);

  /// An integer held two ways: `value` as a float, and `shifted`, the sum
  /// value + 1.5 * 2^mantissa_bits, whose bits are those of the shifter
  /// plus the integer (two's complement in the low bits).
  struct Integral {
    llvm::Value *value;
    llvm::Value *shifted;
  };
  /// x * factor rounded to an integer, ties to even, for |x * factor| <
  /// 2^(mantissa_bits - 1): the sum with the shifter 1.5 * 2^p lies where
  /// the spacing is 1 (with factor != 1 the product rounds first where
  /// the target has no FMA). Two operations, whatever the target; a NaN x
  /// gives NaN lanes and no poison.
  Integral round_by_shifting(llvm::Value *x, double factor);
  /// p * 2^n as scale() does, for n from round_by_shifting: the powers of
  /// two come from n's shifted bits (no conversion, so a NaN n makes
  /// garbage powers, not poison, and p NaN keeps the result NaN).
  llvm::Value *scale(llvm::Value *p, const Integral &n);
  /// x clamped to [lo, hi] by selects that x86 does in one max and one min
  /// instruction each: a NaN x stays NaN (minnum/maxnum would give a bound).
  llvm::Value *clamp_keeping_nan(llvm::Value *x, double lo, double hi);
};

/// Whether the function being built may use FMA instructions: false only
/// for x86 code whose target features lack FMA (older than Haswell), where
/// llvm.fma would call the C library's fma per lane.
bool target_has_fma(llvm::IRBuilderBase &b);

/// Calls the C library's `name` (the float variant `name` + "f" on f32) on
/// every lane of x.
llvm::Value *call_libm_per_lane(llvm::IRBuilderBase &b, const char *name,
                                llvm::Value *x);

/// fast, except where some lane of slow (i1 lanes) is set: then
/// slow_value(), built by the callback in a block named `block` that runs
/// only in that case (the callback builds where the builder stands, and
/// may branch). Leaves the builder after the join.
llvm::Value *unless_any_lane(llvm::IRBuilderBase &b, llvm::Value *slow,
                             llvm::Value *fast,
                             const std::function<llvm::Value *()> &slow_value,
                             const char *block);

/// fast, except in the lanes where slow (i1 lanes) is set, which get the C
/// library's `name`(x) instead. The library calls sit in a block of their
/// own that runs only when some lane needs them, so a hot loop whose lanes
/// never do pays one branch. Leaves the builder after the join.
llvm::Value *with_libm_for_lanes(llvm::IRBuilderBase &b, llvm::Value *slow,
                                 llvm::Value *fast, const char *name,
                                 llvm::Value *x);

} // namespace blocc::llvm_backend::math
