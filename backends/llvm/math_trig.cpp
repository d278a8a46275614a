// sin and cos on f32 and f64 lanes.
//
// Both reduce |x| = j pi/2 + r with |r| <= pi/4 (Cody and Waite: pi/2 split
// in parts whose products with j are exact, so that the subtractions lose
// nothing), evaluate sin or cos of r by polynomial (tools/math: sin_*,
// cos_*), and pick by the quadrant j mod 4; sin takes x's sign back (which
// also makes sin(-0) = -0).
//
// f32: on targets with FMA, a vector whose lanes are all below 2^16
// reduces in f32 (reduce_small_f32: r as r_high + r_low, off by about
// j 2^-72; every f32 below 2^16 measured within 0.78 ulp, as the general
// path). Otherwise the reduction runs in f64 (x exact, parts of 24 bits,
// j < 2^29), so r is good to 2^-52 relative whatever the cancellation, and
// is handed to the f32 polynomials as r_high + r_low; that path sits in a
// block entered only when some lane needs it. f64: parts of 33 bits (j < 2^20)
// with r kept as a double-double through the subtractions (two-sum), since
// an f64 result needs r to more than 53 bits.
//
// Finite |x| beyond the reduction's range (2^29 for f32, 2^20 for f64)
// takes the C library per lane, in a block that runs only when some lane
// of the vector needs it, or the caller's reduction (the GPU's
// Payne-Hanek, backends/nvptx/gpu_math.cpp); infinities and NaN give NaN.
#include "backends/llvm/math_implementations.h"

namespace blocc::llvm_backend::math {

namespace {

/// sin(r_high + r_low) and cos(r_high + r_low) for |r| <= pi/4, in f's
/// format, with r_low at most an ulp of r_high.
struct SinCos {
  llvm::Value *sin, *cos;
};

SinCos sin_cos_reduced(FloatLanes &f, llvm::Value *r, llvm::Value *r_low) {
  llvm::Value *z = f.mul(r, r);
  // S: sin r = r + r^3 S(z); C: cos r = 1 - z/2 + z^2 C(z) (the fit's
  // constant term, exactly -1/2, is the z/2 below).
  llvm::Value *S, *C;
  if (!f.is_f64()) {
    S = f.polynomial(z, {-0x1.555546p-3, 0x1.110778p-7, -0x1.9953fep-13});
    C = f.polynomial(z, {0x1.55554ap-5, -0x1.6c0c28p-10, 0x1.99e80cp-16});
  } else {
    S = f.polynomial(z, {-0x1.5555555555548p-3, 0x1.111111110f73p-7,
                         -0x1.a01a019be9217p-13, 0x1.71de35552b52cp-19,
                         -0x1.ae5e4b83e46f4p-26, 0x1.5d8b559495e3p-33});
    C = f.polynomial(z, {0x1.555555555554bp-5, -0x1.6c16c16c15013p-10,
                         0x1.a01a019c8ed07p-16, -0x1.27e4f7f1410dap-22,
                         0x1.1ee9db8e2ed98p-29, -0x1.8fa65e910319fp-37});
  }
  // sin(r + r_low) = sin r + r_low cos r ~ r + r^3 S + r_low (1 - z/2).
  llvm::Value *low = f.mul(r_low, f.mad(z, f.c(-0.5), f.c(1.0)));
  llvm::Value *sin = f.add(r, f.mad(f.mul(r, z), S, low));
  // cos(r + r_low) ~ 1 - z/2 + z^2 C - r r_low, with the rounding error of
  // 1 - z/2 (exact by Fast2Sum: z/2 <= 0.31) added back.
  llvm::Value *half_z = f.mul(z, f.c(0.5));
  llvm::Value *w = f.sub(f.c(1.0), half_z);
  llvm::Value *lost = f.sub(f.sub(f.c(1.0), w), half_z);
  llvm::Value *cos =
      f.add(w, f.add(lost, f.mad(f.mul(z, z), C, f.neg(f.mul(r, r_low)))));
  return {sin, cos};
}

/// |x| (already < 2^29) = j pi/2 + r for f32 lanes, computed in f64.
TrigReduction reduce_f32(FloatLanes &f, llvm::Value *ax) {
  llvm::IRBuilderBase &b = f.b;
  FloatLanes d = f.with_element(b.getDoubleTy());
  llvm::Value *x = b.CreateFPExt(ax, d.type);
  llvm::Value *j = d.round_even(d.mul(x, d.c(0x1.45f306dc9c883p-1))); // 2/pi
  llvm::Value *minus_j = d.neg(j);
  // pi/2 in three 24-bit parts and a remainder: j times a part is exact
  // (j < 2^29), and so are the first two subtractions (all terms are
  // multiples of 2^-48 below 1 in magnitude).
  llvm::Value *r = d.mad(minus_j, d.c(0x1.921fb6p+0), x);
  r = d.mad(minus_j, d.c(-0x1.777a5cp-25), r);
  r = d.mad(minus_j, d.c(-0x1.ee59dap-50), r);
  r = d.mad(minus_j, d.c(0x1.98a2e03707345p-77), r);
  llvm::Value *high = b.CreateFPTrunc(r, f.type);
  llvm::Value *low =
      b.CreateFPTrunc(d.sub(r, b.CreateFPExt(high, d.type)), f.type);
  return {high, low, b.CreateFPToSI(j, f.bits)};
}

/// a + b = s + e exactly (Knuth's two-sum, for any magnitudes).
std::pair<llvm::Value *, llvm::Value *> two_sum(FloatLanes &f, llvm::Value *a,
                                                llvm::Value *b) {
  llvm::Value *s = f.add(a, b);
  llvm::Value *b_part = f.sub(s, a);
  llvm::Value *a_part = f.sub(s, b_part);
  return {s, f.add(f.sub(a, a_part), f.sub(b, b_part))};
}

/// |x| (already < 2^20) = j pi/2 + r for f64 lanes, r as a double-double.
TrigReduction reduce_f64(FloatLanes &f, llvm::Value *x) {
  llvm::IRBuilderBase &b = f.b;
  llvm::Value *j = f.round_even(f.mul(x, f.c(0x1.45f306dc9c883p-1)));
  // pi/2 in three 33-bit parts and a remainder (152 bits in all): j times
  // a part is exact (j < 2^20), and so is the first subtraction.
  llvm::Value *r1 = f.mad(f.neg(j), f.c(0x1.921fb544p+0), x);
  auto [s2, e2] = two_sum(f, r1, f.neg(f.mul(j, f.c(0x1.0b4611a6p-34))));
  auto [s3, e3] = two_sum(f, s2, f.neg(f.mul(j, f.c(0x1.3198a2ep-69))));
  llvm::Value *tail =
      f.mad(f.neg(j), f.c(0x1.b839a252049c1p-104), f.add(e2, e3));
  // Fast two-sum: |s3| >= |tail| unless both are tiny.
  llvm::Value *r = f.add(s3, tail);
  llvm::Value *r_low = f.sub(tail, f.sub(r, s3));
  return {r, r_low, b.CreateSExt(f.to_i32(j), f.bits)};
}

// f32 lanes below kSmallF32 on FMA targets reduce in f32 (see
// reduce_small_f32), where the general path converts to f64 and back.
constexpr double kSmallF32 = 0x1p16;

/// |x| (already < kSmallF32) = j pi/2 + r for f32 lanes, in f32 with FMA:
/// |x| - j C1 is exact (both are multiples of 2^-23, or of |x|'s ulp
/// where that is finer and j is 0 or 1, and the difference is below 1);
/// j C2's rounding error is exact by FMA and two-sum keeps the
/// subtraction's, so r_high + r_low is off by about j 2^-72.
TrigReduction reduce_small_f32(FloatLanes &f, llvm::Value *ax) {
  llvm::Value *j = f.round_even(f.mul(ax, f.c(0x1.45f306p-1))); // 2/pi
  llvm::Value *minus_j = f.neg(j);
  // pi/2 = C1 + C2 + C3 + 2^-77 or so, each part an f32.
  llvm::Value *r1 = f.mad(minus_j, f.c(0x1.921fb6p+0), ax);
  llvm::Value *p = f.mul(j, f.c(-0x1.777a5cp-25));
  llvm::Value *p_error = f.mad(j, f.c(-0x1.777a5cp-25), f.neg(p));
  auto [high, low] = two_sum(f, r1, f.neg(p));
  low = f.mad(minus_j, f.c(-0x1.ee59dap-50), f.sub(low, p_error));
  llvm::Value *r = f.add(high, low);
  return {r, f.sub(low, f.sub(r, high)), f.to_i32(j)};
}

/// sin or cos of x from the reduction of |x| (j's two low bits are the
/// quadrant).
llvm::Value *by_quadrant(FloatLanes &f, llvm::Value *x,
                         const TrigReduction &red, bool cosine) {
  llvm::IRBuilderBase &b = f.b;
  SinCos sc = sin_cos_reduced(f, red.r, red.r_low);
  // sin(|x|) by quadrant j: sin r, cos r, -sin r, -cos r; cos x = sin(|x| +
  // pi/2) shifts the quadrant by one.
  llvm::Value *quadrant = cosine ? b.CreateAdd(red.j, f.i(1)) : red.j;
  llvm::Value *odd = b.CreateICmpNE(b.CreateAnd(quadrant, f.i(1)), f.i(0));
  llvm::Value *negative = b.CreateICmpNE(b.CreateAnd(quadrant, f.i(2)), f.i(0));
  if (!cosine) // sin(-x) = -sin(x)
    negative = b.CreateXor(negative, b.CreateICmpSLT(f.to_bits(x), f.i(0)));
  return f.flip_sign(f.select(odd, sc.cos, sc.sin), negative);
}

/// sin or cos of every lane, by quarter turns (see the file's comment).
llvm::Value *sin_cos_by_quarter_turns(FloatLanes &f, llvm::Value *x,
                                      bool cosine,
                                      const HugeTrigReduction *huge) {
  llvm::IRBuilderBase &b = f.b;
  const bool f64 = f.is_f64();
  const double limit = f64 ? 0x1p20 : 0x1p29;
  llvm::Value *ax = f.abs(x);
  llvm::Value *in_range = f.less(ax, limit); // false for NaN
  llvm::Value *not_finite = b.CreateFCmpUEQ(ax, f.inf());
  llvm::Value *huge_lanes =
      b.CreateAnd(b.CreateNot(in_range), b.CreateNot(not_finite));
  // Other lanes reduce 0 (their results are replaced below): fptosi of a
  // huge j would be poison.
  llvm::Value *reducible = f.select(in_range, ax, f.c(0.0));
  TrigReduction red = f64 ? reduce_f64(f, reducible) : reduce_f32(f, reducible);
  if (huge)
    red = (*huge)(f, huge_lanes, ax, red);
  llvm::Value *r = by_quadrant(f, x, red, cosine);
  // Infinities and NaN: NaN (x - x keeps a NaN's payload quiet).
  r = f.select(not_finite, f.sub(x, x), r);
  if (huge)
    return r;
  return with_libm_for_lanes(b, huge_lanes, r, cosine ? "cos" : "sin", x);
}

} // namespace

llvm::Value *sin_cos(FloatLanes &f, llvm::Value *x, bool cosine,
                     const HugeTrigReduction *huge) {
  if (huge || f.is_f64() || !target_has_fma(f.b))
    return sin_cos_by_quarter_turns(f, x, cosine, huge);
  // Vectors whose lanes are all small take the f32 reduction alone; the
  // others (NaN and infinite lanes included) the general path, in a block
  // of its own.
  llvm::Value *ax = f.abs(x);
  llvm::Value *large = f.b.CreateNot(f.less(ax, kSmallF32));
  // Large lanes reduce 0 here (their results are the other block's).
  llvm::Value *small = f.select(large, f.c(0.0), ax);
  return unless_any_lane(
      f.b, large, by_quadrant(f, x, reduce_small_f32(f, small), cosine),
      [&] { return sin_cos_by_quarter_turns(f, x, cosine, nullptr); },
      "math.large");
}

} // namespace blocc::llvm_backend::math
