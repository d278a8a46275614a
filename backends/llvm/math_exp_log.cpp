// exp, exp2, log and log2 on f32 and f64 lanes, branch-free.
//
// exp: x = n ln2 + t (Cody and Waite's reduction: ln2 split in a part with
// few bits, whose products with n are exact, and the rest), e^t = 1 + t +
// t^2 P(t) for |t| <= ln2 / 2, times 2^n rounded once. exp2: n is x
// rounded, f = x - n exact, 2^f = e^(f ln2).
//
// f32, where softmax spends its time: n by the shifter 1.5 * 2^23 (no
// rounding instruction or conversion), t rounded once (its error is a fifth
// of an ulp of the result), e^t as 1 + t (1 + t P(t)) and 2^f as 1 + f
// Q(f) by fused Horner steps (on targets without FMA, as 1 + (t + t^2
// P(t)), f ln2 for exp2's t, which keeps them within 1 ulp), and the
// scaling in one VSCALEF on AVX-512, two multiplications by normal powers
// of two elsewhere: 13 vector instructions per exp on AVX-512, about what
// glibc's libmvec expf spends. f64 keeps t's rounding error as a separate
// term.
//
// log: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) = log1p(f) = 2
// atanh(s), s = f / (2 + f), in fdlibm's arrangement (see vector_log1p).
//
// Measured on f32 and f64 sweeps (tests/cpu/vector_math_test.cpp): within
// 1 ulp of the correctly rounded result, on targets with and without FMA.
#include "backends/llvm/math_implementations.h"

namespace blocc::llvm_backend::math {

namespace {

// ln2 = ln2_high + ln2_low, ln2_high with few enough bits that its products
// with the integers the reductions meet are exact.
constexpr double kLn2High32 = 0x1.62e4p-1, kLn2Low32 = 0x1.7f7d1cp-20;
constexpr double kLn2High64 = 0x1.62e42fefa38p-1,
                 kLn2Low64 = 0x1.ef35793c7673p-45;

/// (e^t - 1 - t) / t^2 on |t| <= ln2 / 2 (tools/math: exp_f32, exp_f64).
llvm::Value *exp_tail(FloatLanes &f, llvm::Value *t) {
  if (!f.is_f64())
    return f.polynomial(t, {0x1.fffffep-2, 0x1.55549cp-3, 0x1.5557aap-5,
                            0x1.123396p-7, 0x1.6ad092p-10});
  return f.polynomial(t, {0x1p-1, 0x1.5555555555558p-3, 0x1.555555555552fp-5,
                          0x1.111111110f973p-7, 0x1.6c16c16c27753p-10,
                          0x1.a01a01af39fedp-13, 0x1.a01a014dd33ep-16,
                          0x1.71ddf95eea969p-19, 0x1.27e59c044ecbdp-22,
                          0x1.af5da4f072d6fp-26, 0x1.1e495e98f864fp-29});
}

/// 2 atanh(s) = 2s + s z R(z), z = s^2 <= (3 - 2 sqrt 2)^2 (tools/math:
/// log_f32, log_f64); returns z R(z).
llvm::Value *log_tail(FloatLanes &f, llvm::Value *z) {
  if (!f.is_f64())
    return f.mul(
        z, f.polynomial(z, {0x1.55557ap-1, 0x1.995ed8p-2, 0x1.31e03cp-2}));
  return f.mul(z, f.polynomial(z, {0x1.5555555555592p-1, 0x1.999999997ff4ep-2,
                                   0x1.24924941dd2eap-2, 0x1.c71c52181c811p-3,
                                   0x1.74663c1ec353bp-3, 0x1.39a1fd8cd8c8bp-3,
                                   0x1.2f02ee4742aedp-3}));
}

/// (2^f - 1) / f on |f| <= 1/2 (tools/math: exp2_f32).
llvm::Value *exp2_quotient(FloatLanes &f, llvm::Value *x) {
  return f.polynomial(x, {0x1.62e43p-1, 0x1.ebfbdcp-3, 0x1.c6af42p-5,
                          0x1.3b2db2p-7, 0x1.5f1e42p-10, 0x1.419fcap-13});
}

/// f32 exp and exp2, in as few vector operations as the 1 ulp bound
/// allows: a clamp, n rounded by the shifter, the reduction, a degree-6
/// polynomial, and one exact scaling (VSCALEF on AVX-512, else two
/// multiplications); see the file's comment.
llvm::Value *exp_f32(FloatLanes &f, llvm::Value *x, bool base2) {
  // Beyond these the result is inf or 0 whatever the reduction says; they
  // keep |n| small enough for the scaling. A NaN x stays NaN throughout.
  llvm::Value *clamped =
      f.clamp_keeping_nan(x, base2 ? -152.0 : -105.0, base2 ? 130.0 : 90.0);
  FloatLanes::Integral n = f.round_by_shifting(
      clamped, base2 ? 1.0 : 0x1.71547652b82fep+0); // log2 e
  const bool fused = target_has_fma(f.b);
  llvm::Value *t;
  if (base2) {
    llvm::Value *fraction = f.sub(clamped, n.value); // exact
    // With FMA, 2^f = 1 + f Q(f) in six fused steps; without, e^(f ln2)
    // below (f ln2 rounds once, as t does for exp).
    if (fused)
      return f.scale(f.mad(exp2_quotient(f, fraction), fraction, f.c(1.0)), n);
    t = f.mul(fraction, f.c(0x1.62e42fefa39efp-1)); // ln2
  } else {
    // x - n ln2_high is exact (fused or not), the rest rounds once: its
    // error, under 2^-26 absolute on |t| <= ln2 / 2, is a fifth of an ulp
    // of the result, which leaves room under the 1 ulp bound without
    // carrying the rounding error of t separately.
    llvm::Value *reduced = f.mad(f.neg(n.value), f.c(kLn2High32), clamped);
    t = f.mad(f.neg(n.value), f.c(kLn2Low32), reduced);
  }
  // 1 + t + t^2 P(t): with FMA as 1 + t (1 + t P(t)), two fused steps;
  // without, as 1 + (t + t^2 P(t)), as many operations, whose products
  // round where they are small (0.95 ulp at worst then, where Horner's
  // rule would take 1.2).
  llvm::Value *P = exp_tail(f, t);
  llvm::Value *p = fused ? f.mad(f.mad(P, t, f.c(1.0)), t, f.c(1.0))
                         : f.add(f.c(1.0), f.mad(f.mul(t, t), P, t));
  return f.scale(p, n);
}

struct Log1p {
  llvm::Value *f;          // m - 1, exact
  llvm::Value *correction; // log1p(f) = f - correction
};

/// log1p(f) = 2 atanh(s) = f - (f^2/2 - s (f^2/2 + R)) for f = m - 1
/// (fdlibm's arrangement): the leading f is exact and the correction small,
/// so that the sum rounds about once.
Log1p vector_log1p(FloatLanes &f, llvm::Value *m) {
  llvm::Value *fm = f.sub(m, f.c(1.0));
  llvm::Value *s = f.div(fm, f.add(fm, f.c(2.0)));
  llvm::Value *R = log_tail(f, f.mul(s, s));
  llvm::Value *half_square = f.mul(f.c(0.5), f.mul(fm, fm));
  return {fm, f.sub(half_square, f.mul(s, f.add(half_square, R)))};
}

} // namespace

llvm::Value *exp(FloatLanes &f, llvm::Value *x, bool base2) {
  if (!f.is_f64())
    return exp_f32(f, x, base2);
  // Beyond these the result is inf or 0 whatever the reduction says; they
  // keep n where scale() is exact.
  double lo = base2 ? -1080.0 : -750.0;
  double hi = base2 ? 1030.0 : 714.0;
  llvm::Value *clamped = f.min(f.max(x, f.c(lo)), f.c(hi));
  llvm::Value *n, *t, *t_low;
  if (base2) {
    n = f.round_even(clamped);
    t = f.mul(f.sub(clamped, n), f.c(0x1.62e42fefa39efp-1)); // x - n exact
    t_low = f.c(0.0);
  } else {
    n = f.round_even(f.mul(clamped, f.c(0x1.71547652b82fep+0))); // log2 e
    // n ln2_high is exact, and then so is x - n ln2_high (fused or not).
    llvm::Value *reduced = f.mad(f.neg(n), f.c(kLn2High64), clamped);
    llvm::Value *w = f.mul(n, f.c(kLn2Low64));
    t = f.sub(reduced, w);
    t_low = f.sub(f.sub(reduced, t), w); // what rounding t lost
  }
  llvm::Value *tail = f.mad(f.mul(t, t), exp_tail(f, t), t_low);
  llvm::Value *p = f.add(f.c(1.0), f.add(t, tail));
  llvm::Value *r = f.scale(p, n);
  return f.select(f.is_nan(x), f.add(x, x), r);
}

llvm::Value *log(FloatLanes &f, llvm::Value *x, bool base2) {
  llvm::IRBuilderBase &b = f.b;
  const bool f64 = f.is_f64();
  const int mantissa = f.mantissa_bits();
  const int64_t bias = f64 ? 1023 : 127;
  // Subnormals: scale into the normal range first.
  llvm::Value *tiny = f.less(x, f64 ? 0x1p-1022 : 0x1p-126);
  llvm::Value *normal = f.select(tiny, f.mul(x, f.c(f64 ? 0x1p52 : 0x1p23)), x);
  llvm::Value *bits = f.to_bits(normal);
  llvm::Value *e = b.CreateSub(b.CreateLShr(bits, mantissa), f.i(bias));
  e = b.CreateSub(e, f.select(tiny, f.i(mantissa), f.i(0)));
  int64_t mantissa_mask = (int64_t{1} << mantissa) - 1;
  llvm::Value *m = f.from_bits(
      b.CreateOr(b.CreateAnd(bits, f.i(mantissa_mask)), f.i(bias << mantissa)));
  llvm::Value *big = b.CreateFCmpOGT(m, f.c(0x1.6a09e667f3bcdp+0)); // sqrt 2
  m = f.select(big, f.mul(m, f.c(0.5)), m);
  e = b.CreateAdd(e, b.CreateZExt(big, f.bits));
  llvm::Value *ef = f.from_i32(e);
  Log1p l = vector_log1p(f, m);
  llvm::Value *r;
  if (!base2) {
    // e ln2_high + (f - (correction - e ln2_low)); e ln2_high is exact.
    double ln2_high = f64 ? kLn2High64 : kLn2High32;
    double ln2_low = f64 ? kLn2Low64 : kLn2Low32;
    llvm::Value *tail =
        f.sub(l.f, f.sub(l.correction, f.mul(ef, f.c(ln2_low))));
    r = f.mad(ef, f.c(ln2_high), tail);
  } else {
    // (f - correction) log2(e) with log2(e) = L_high + L_low and f split
    // likewise (f_high keeps the upper half of its bits), so that
    // f_high L_high is exact; e + f_high L_high is summed with its
    // rounding error kept (|e| >= 1 > |f_high L_high| or e = 0).
    double log2e_high = f64 ? 0x1.7154768p+0 : 0x1.716p+0;
    double log2e_low = f64 ? -0x1.6a3e80f444178p-27 : -0x1.7135a8p-13;
    int64_t low_bits = f64 ? (int64_t{1} << 26) - 1 : (int64_t{1} << 12) - 1;
    llvm::Value *f_high =
        f.from_bits(b.CreateAnd(f.to_bits(l.f), f.i(~low_bits)));
    llvm::Value *f_low = f.sub(l.f, f_high);
    llvm::Value *product_high = f.mul(f_high, f.c(log2e_high));
    llvm::Value *small =
        f.mad(f_low, f.c(log2e_high),
              f.mad(l.f, f.c(log2e_low),
                    f.mul(l.correction, f.c(-0x1.71547652b82fep+0))));
    llvm::Value *high = f.add(ef, product_high);
    llvm::Value *low = f.add(f.sub(ef, high), product_high);
    r = f.add(high, f.add(low, small));
  }
  // Specials, in the order that makes each case win.
  r = f.select(b.CreateFCmpOEQ(x, f.inf()), f.inf(), r);
  r = f.select(b.CreateFCmpOEQ(x, f.c(0.0)), f.neg(f.inf()), r);
  llvm::Value *invalid = b.CreateFCmpULT(x, f.c(0.0)); // negative or NaN
  return f.select(invalid, f.nan(), r);
}

} // namespace blocc::llvm_backend::math
