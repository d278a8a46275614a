// tanh and erf on f32 and f64 lanes, branch-free: both halves of each are
// computed and the lane's magnitude picks one.
//
// tanh: |x| < 1: x + x^3 T(x^2) (relative accuracy down to the subnormals,
// where x^3 vanishes and x is exact); above, 1 - 2 / (e^{2|x|} + 1) with
// the vectorized exp (math_exp_log.cpp) on |x| clamped where tanh rounds
// to 1 (10 for f32, 20 for f64), so nothing overflows. Below 1 the
// subtraction would cancel enough to make exp's error show; above, 2 /
// (e^{2|x|} + 1) is under a quarter of the result. The sign is x's.
//
// erf: |x| < 1: x + x Q(x^2); above, 1 - e^{-x^2} G(|x|), G = erfc e^{x^2}
// fitted on [1, 4] (f32) or [1, 5.92] (f64) with the weight e^{-x^2};
// beyond those ends erf rounds to 1. x^2 rounds before the exp: its
// relative error moves e^{-x^2} G by at most (x^2 2^-p) erfc(x), a
// fraction of an ulp of erf near 1.
//
// Polynomials: tools/math (tanh_*, erf_*, erfc_*). Measured worst errors
// are in tests/cpu/vector_math_test.cpp and backends/llvm/README.md.
#include "backends/llvm/math_implementations.h"

namespace blocc::llvm_backend::math {

namespace {

llvm::Value *portable_tanh_complement(FloatLanes &f, llvm::Value *a) {
  llvm::Value *e = exp(f, f.add(a, a), false);
  return f.div(f.c(2.0), f.add(e, f.c(1.0)));
}

} // namespace

llvm::Value *tanh(FloatLanes &f, llvm::Value *x,
                  const TanhComplement &complement) {
  const bool f64 = f.is_f64();
  llvm::Value *ax = f.abs(x);
  llvm::Value *z = f.mul(x, x);
  llvm::Value *T =
      f64 ? f.polynomial(z, {-0x1.555555555554fp-2, 0x1.1111111110b21p-3,
                             -0x1.ba1ba1b9dd856p-5, 0x1.664f487873e69p-6,
                             -0x1.226e3458ca2c3p-7, 0x1.d6d3aed481c11p-9,
                             -0x1.7da1da3f17ca7p-10, 0x1.354b49a7d81dfp-11,
                             -0x1.f4de95b5d6938p-13, 0x1.939b655d9e14fp-14,
                             -0x1.3f4b8e18b9e66p-15, 0x1.df1db02d09dd2p-17,
                             -0x1.3f40489e8d42cp-18, 0x1.552ccb178a88p-20,
                             -0x1.f435e848b2369p-23, 0x1.6ddec1ed189f6p-26})
          : f.polynomial(z, {-0x1.555552p-2, 0x1.11103cp-3, -0x1.b9f6dep-5,
                             0x1.64c0a4p-6, -0x1.18de98p-7, 0x1.8f9f5p-9,
                             -0x1.aee90cp-11, 0x1.e86cecp-14});
  llvm::Value *small = f.mad(f.mul(x, z), T, x);
  llvm::Value *clamped = f.min(ax, f.c(f64 ? 20.0 : 10.0)); // NaN -> clamp
  llvm::Value *large =
      f.sub(f.c(1.0), complement ? complement(f, clamped)
                                 : portable_tanh_complement(f, clamped));
  // Both halves have x's sign (tanh is odd): copysign also keeps -0.
  llvm::Value *r = f.copysign(f.select(f.less(ax, 1.0), small, large), x);
  return f.select(f.is_nan(x), f.add(x, x), r);
}

llvm::Value *erf(FloatLanes &f, llvm::Value *x,
                 const ExpOfNegative &exp_of_negative) {
  const bool f64 = f.is_f64();
  llvm::Value *ax = f.abs(x);
  llvm::Value *z = f.mul(x, x);
  llvm::Value *Q =
      f64 ? f.polynomial(z, {0x1.06eba8214db69p-3, -0x1.812746b037a25p-2,
                             0x1.ce2f21a0458d7p-4, -0x1.b82ce31354c5p-6,
                             0x1.565bcd2c60b21p-8, -0x1.c02db9328d03fp-11,
                             0x1.f9a3b93f0d282p-14, -0x1.f4dcef9229ac9p-17,
                             0x1.ba68fadaed969p-20, -0x1.638fd5627b8a9p-23,
                             0x1.131b2f3f09c06p-26, -0x1.c495affdb4ffbp-30,
                             0x1.3b6c5415a1ecp-33})
          : f.polynomial(z, {0x1.06eba8p-3, -0x1.81273ep-2, 0x1.ce2ce6p-4,
                             -0x1.b7f71ap-6, 0x1.53f224p-8, -0x1.a3515ep-11,
                             0x1.4771fep-14});
  llvm::Value *small = f.mad(x, Q, x);
  // G is fitted in u = |x| - (middle of its interval).
  const double end = f64 ? 5.92 : 4.0, middle = (1.0 + end) / 2;
  llvm::Value *clamped = f.min(ax, f.c(end)); // NaN -> end
  llvm::Value *u = f.sub(clamped, f.c(middle));
  llvm::Value *G =
      f64 ? f.polynomial(u, {0x1.4176408bf4f66p-3,   -0x1.599dba58fee52p-5,
                             0x1.6810479ab1f27p-7,   -0x1.6c629fd4d072ep-9,
                             0x1.66f67ae909862p-11,  -0x1.58d8d860707dap-13,
                             0x1.439393fe5b862p-15,  -0x1.28efce6f73b21p-17,
                             0x1.0ac23386a87d5p-19,  -0x1.d7c8515ddeb02p-22,
                             0x1.931a69d0ceff4p-24,  -0x1.4ba198125ee1fp-26,
                             0x1.7df158b2069fep-28,  -0x1.c62add2e29689p-33,
                             -0x1.4df33c8104b3ap-36, -0x1.d7e973f406a21p-32,
                             -0x1.94cdf4c361b13p-33, -0x1.18a11b04b414cp-36,
                             0x1.f483338f5a5ebp-36,  0x1.179687bb08f56p-36,
                             0x1.2b52e39e2f59ap-38,  0x1.539f2eecc3064p-41,
                             0x1.58e9136c39cbbp-45})
          : f.polynomial(u, {0x1.afbb3cp-3, -0x1.3088fcp-4, 0x1.9870f6p-6,
                             -0x1.062d7p-7, 0x1.4a51aep-9, -0x1.53bb12p-11,
                             0x1.da1858p-13, -0x1.1a1efap-13, -0x1.e0608cp-15,
                             -0x1.d4c43cp-16});
  llvm::Value *t = f.mul(clamped, clamped);
  llvm::Value *e =
      exp_of_negative ? exp_of_negative(f, t) : exp(f, f.neg(t), false);
  llvm::Value *large = f.mad(f.neg(e), G, f.c(1.0));
  // At the end erfc is still an ulp's worth for f64; beyond it erf is 1.
  large = f.select(f.less(ax, end), large, f.c(1.0));
  llvm::Value *r = f.copysign(f.select(f.less(ax, 1.0), small, large), x);
  return f.select(f.is_nan(x), f.add(x, x), r);
}

} // namespace blocc::llvm_backend::math
