// Math on the GPU (backends/nvptx/lower_math.cpp, gpu_math.h): f32 exp and
// exp2 within 3 ulp of the correctly rounded result (and within 4 of the
// CPU backend's), over random arguments and the edges (zeros, infinities,
// NaN, results that are subnormal, underflow to 0 or overflow); f16/bf16
// <-> f32 conversions bit for bit as the CPU backend makes them, NaNs (with
// payloads) and subnormals included; sin, cos (huge arguments included),
// tanh, erf on f32, f64 and every f16/bf16 value, and f64 exp, exp2, log,
// log2, within 1 ulp of the correctly rounded result (f32 tanh and erf: 3;
// f16/bf16: within the f32 error of correctly rounded) against long
// double references, and within 2 ulp of the CPU backend (the same code,
// except sin/cos beyond the reduction's range, where the CPU calls the C
// library, and f32 tanh/erf beyond 1: 4 ulp); fmod exact,
// bit for bit the C library's. Skipped (reported as skipped) where no GPU
// is present; the PTX is ptxas-assembled everywhere, with no call left,
// and the sin/cos/tanh/erf/fmod checks run on the CPU backend's results
// (so that a wrong check fails without a GPU too).
#include "nvptx/support.h"

#include <bit>
#include <cstdio>
#include <map>

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

auto exps =
    bl::kernel("exps", [](bl::Ptr<float> x, bl::Ptr<float> e, bl::Ptr<float> e2,
                          bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto v = bl::load(x + offs, mask);
      bl::store(e + offs, bl::exp(v), mask);
      bl::store(e2 + offs, bl::exp2(v), mask);
    });

/// Distance in ulp between two floats of the same sign (or both zero).
int64_t ulps(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  auto key = [](float f) {
    int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? int64_t(INT32_MIN) - i : int64_t(i);
  };
  return std::abs(key(a) - key(b));
}

TEST(GpuMath, ExpAndExp2WithinThreeUlp) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  std::vector<float> x = random_values<float>(100003, -110, 95);
  std::vector<float> edges = {
      0.f,    -0.f,    INFINITY, -INFINITY, NAN,     -NAN,    88.72f,  88.73f,
      89.f,   -87.3f,  -100.f,   -103.9f,   -104.f,  -200.f,  127.99f, 128.f,
      -126.f, -140.5f, -149.f,   -149.5f,   -150.1f, 1e-30f,  -1e-30f, 0.5f,
      -0.5f,  1.f,     2.f,      1e-8f,     3.4e38f, -3.4e38f};
  x.insert(x.begin(), edges.begin(), edges.end());
  for (size_t i = 0; i < 20000; ++i) // small arguments, where exp ~ 1 + x
    x.push_back(x[i] * 1e-6f);
  // exp2's whole range, its subnormal results (below -126) densely.
  std::vector<float> wide = random_values<float>(30011, -152, 130);
  std::vector<float> low = random_values<float>(30011, -152, -120);
  x.insert(x.end(), wide.begin(), wide.end());
  x.insert(x.end(), low.begin(), low.end());
  const int n = static_cast<int>(x.size());
  DeviceBuffer<float> dx(x);
  auto de = poisoned_on_gpu<float>(n), de2 = poisoned_on_gpu<float>(n);
  exps[{bl::cdiv(n, 1024)}](dx, de, de2, n, 1024);
  std::vector<float> e = poisoned<float>(n), e2 = poisoned<float>(n);
  exps[{bl::cdiv(n, 1024)}].with(kCpu)(x, e, e2, n, 1024);
  std::vector<float> ge = de.to_host(), ge2 = de2.to_host();
  int64_t worst = 0, worst2 = 0;
  for (int i = 0; i < n; ++i) {
    float want = static_cast<float>(std::exp(double(x[i])));
    float want2 = static_cast<float>(std::exp2(double(x[i])));
    // Subnormal results: the ulp is absolute there.
    ASSERT_LE(ulps(ge[i], want), 3)
        << "exp(" << x[i] << ") = " << ge[i] << ", want " << want;
    ASSERT_LE(ulps(ge2[i], want2), 3)
        << "exp2(" << x[i] << ") = " << ge2[i] << ", want " << want2;
    ASSERT_LE(ulps(ge[i], e[i]), 4) << "exp(" << x[i] << ") vs the CPU";
    ASSERT_LE(ulps(ge2[i], e2[i]), 4) << "exp2(" << x[i] << ") vs the CPU";
    worst = std::max(worst, ulps(ge[i], want));
    worst2 = std::max(worst2, ulps(ge2[i], want2));
  }
  std::printf("worst exp %lld ulp, exp2 %lld ulp over %d arguments\n",
              static_cast<long long>(worst), static_cast<long long>(worst2), n);
}

auto flushed_exp2s =
    bl::kernel("flushed_exp2s", [](bl::Ptr<float> x, bl::Ptr<float> e2,
                                   bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto v = bl::load(x + offs, mask);
      bl::store(e2 + offs, bl::exp2(v, bl::Subnormals::Flush), mask);
    });

// exp2 flushing subnormal results: within 3 ulp where 2^x is normal, +0
// below, and the CPU backend's rule at the edges (infinities, NaN).
TEST(GpuMath, Exp2FlushingSubnormalsWithinThreeUlpAndZeroBelow) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  std::vector<float> x = random_values<float>(60013, -152, 130);
  std::vector<float> low = random_values<float>(30011, -130, -122);
  x.insert(x.end(), low.begin(), low.end());
  for (float edge : {0.f, -0.f, INFINITY, -INFINITY, NAN, -126.f, -125.5f,
                     -126.5f, -149.f, -150.f, 127.99f, 128.f})
    x.push_back(edge);
  const int n = static_cast<int>(x.size());
  DeviceBuffer<float> dx(x);
  auto de2 = poisoned_on_gpu<float>(n);
  flushed_exp2s[{bl::cdiv(n, 1024)}](dx, de2, n, 1024);
  std::vector<float> got = de2.to_host();
  int zeroed = 0;
  for (int i = 0; i < n; ++i) {
    const double want = std::exp2(double(x[i]));
    if (std::isnan(x[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << "exp2(NaN) = " << got[i];
    } else if (want < 0x1p-126 * (1 - 0x1p-20)) {
      // Just below 2^-126 ex2.approx may round up to the smallest normal.
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), 0u)
          << "exp2(" << x[i] << ") = " << got[i] << ", want +0";
      ++zeroed;
    } else if (want >= 0x1p-126 * (1 + 0x1p-20)) {
      ASSERT_LE(ulps(got[i], static_cast<float>(want)), 3)
          << "exp2(" << x[i] << ") = " << got[i] << ", want " << want;
    }
  }
  EXPECT_GT(zeroed, 10000);
}

auto conversions = bl::kernel(
    "conversions", [](bl::Ptr<float> x, bl::Ptr<uint16_t> h_bits,
                      bl::Ptr<uint16_t> b_bits, bl::Ptr<bl::half> h_out,
                      bl::Ptr<bl::bfloat16_t> b_out, bl::Ptr<float> h_wide,
                      bl::Ptr<float> b_wide, bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto v = bl::load(x + offs, mask);
      bl::store(h_out + offs, bl::cast(v, bl::float16), mask);
      bl::store(b_out + offs, bl::cast(v, bl::bfloat16), mask);
      auto h = bl::bitcast(bl::load(h_bits + offs, mask), bl::float16);
      auto b = bl::bitcast(bl::load(b_bits + offs, mask), bl::bfloat16);
      bl::store(h_wide + offs, bl::cast(h, bl::float32), mask);
      bl::store(b_wide + offs, bl::cast(b, bl::float32), mask);
    });

TEST(GpuMath, NarrowFloatConversionsMatchTheCpuBackendBitForBit) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  std::vector<float> x = random_values<float>(70001, -70000, 70000);
  for (size_t i = 0; i < 20000; ++i) // f16 subnormals and rounding ties
    x[i] *= 1e-9f;
  for (float special : {NAN, -NAN, INFINITY, -INFINITY, 0.f, -0.f, 65504.f,
                        65520.f, 6e-8f, 2.98e-8f, 3e38f})
    x.push_back(special);
  x.push_back(std::bit_cast<float>(0x7fa00001u)); // a NaN with a payload
  const int n = static_cast<int>(x.size());
  // Every 16-bit pattern (NaNs with payloads, subnormals), repeated.
  std::vector<uint16_t> bits(n);
  for (int i = 0; i < n; ++i)
    bits[i] = static_cast<uint16_t>(i * 7 + 3);
  DeviceBuffer<float> dx(x);
  DeviceBuffer<uint16_t> dbits(bits);
  auto dh = poisoned_on_gpu<bl::half>(n);
  auto db = poisoned_on_gpu<bl::bfloat16_t>(n);
  auto dhw = poisoned_on_gpu<float>(n), dbw = poisoned_on_gpu<float>(n);
  conversions[{bl::cdiv(n, 512)}](dx, dbits, dbits, dh, db, dhw, dbw, n, 512);
  auto h = poisoned<bl::half>(n);
  auto b = poisoned<bl::bfloat16_t>(n);
  auto hw = poisoned<float>(n), bw = poisoned<float>(n);
  conversions[{bl::cdiv(n, 512)}].with(kCpu)(x, bits, bits, h, b, hw, bw, n,
                                             512);
  EXPECT_TRUE(same_bits(dh.to_host(), h));
  EXPECT_TRUE(same_bits(db.to_host(), b));
  EXPECT_TRUE(same_bits(dhw.to_host(), hw));
  EXPECT_TRUE(same_bits(dbw.to_host(), bw));
}

TEST(GpuMathPtx, ExpUsesTheHardwareExp2AndConversionsTheCvt) {
  std::vector<float> f;
  std::vector<uint16_t> u;
  std::vector<bl::half> h;
  std::vector<bl::bfloat16_t> b;
  const ir::Function &e = specialization(exps, f, f, f, 1000, 1024);
  expect_ptx_assembles(e);
  EXPECT_THAT(ptx_for(e), ::testing::HasSubstr("ex2.approx.ftz.f32"));
  const ir::Function &c =
      specialization(conversions, f, u, u, h, b, f, f, 1000, 512);
  expect_ptx_assembles(c);
  std::string ptx = ptx_for(c);
  EXPECT_THAT(ptx, ::testing::HasSubstr("cvt.rn.f16.f32"));
  EXPECT_THAT(ptx, ::testing::HasSubstr("cvt.rn.bf16.f32"));
}

// The kept subnormals cost a compare against -126 and a scaling by 2^-24
// per element; flushing them leaves the one ex2.approx.ftz.
TEST(GpuMathPtx, Exp2FlushingSubnormalsIsTheInstructionAlone) {
  std::vector<float> f;
  const ir::Function &kept = specialization(exps, f, f, f, 1000, 1024);
  const ir::Function &flushed = specialization(flushed_exp2s, f, f, 1000, 1024);
  expect_ptx_assembles(flushed);
  const std::string ptx = ptx_for(flushed);
  EXPECT_THAT(ptx, ::testing::HasSubstr("ex2.approx.ftz.f32"));
  // -126 and 2^-24 as PTX writes f32 constants.
  EXPECT_THAT(ptx_for(kept), ::testing::HasSubstr("0fC2FC0000"));
  EXPECT_THAT(ptx, ::testing::Not(::testing::HasSubstr("0fC2FC0000")));
  EXPECT_THAT(ptx, ::testing::Not(::testing::HasSubstr("0f33800000")));
}

// ---- sin, cos, tanh, erf, fmod on every float type; f64 exp and log ----

template <typename T>
auto unary_math = bl::kernel("unary_math", [](bl::Ptr<T> x, bl::Ptr<T> y,
                                              bl::Ptr<T> out, bl::i32 n,
                                              bl::Const<int> BLOCK) {
  auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offs < n;
  auto v = bl::load(x + offs, mask);
  auto w = bl::load(y + offs, mask);
  bl::store(out + offs, bl::sin(v), mask);
  bl::store(out + n + offs, bl::cos(v), mask);
  bl::store(out + 2 * n + offs, bl::tanh(v), mask);
  bl::store(out + 3 * n + offs, bl::erf(v), mask);
  bl::store(out + 4 * n + offs, v % w, mask);
});

auto exp_log_f64 =
    bl::kernel("exp_log_f64", [](bl::Ptr<double> x, bl::Ptr<double> out,
                                 bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto v = bl::load(x + offs, mask);
      bl::store(out + offs, bl::exp(v), mask);
      bl::store(out + n + offs, bl::exp2(v), mask);
      bl::store(out + 2 * n + offs, bl::log(bl::abs(v)), mask);
      bl::store(out + 3 * n + offs, bl::log2(bl::abs(v)), mask);
    });

/// The value of a T as a long double, and its format: p fraction bits, the
/// smallest normal exponent.
template <typename T> long double value_of(T x) {
  if constexpr (std::is_same_v<T, bl::half> ||
                std::is_same_v<T, bl::bfloat16_t>)
    return static_cast<float>(x);
  else
    return x;
}
template <typename T> constexpr int fraction_bits() {
  if constexpr (std::is_same_v<T, bl::half>)
    return 10;
  else if constexpr (std::is_same_v<T, bl::bfloat16_t>)
    return 7;
  else
    return std::numeric_limits<T>::digits - 1;
}
template <typename T> constexpr int min_exponent() {
  if constexpr (std::is_same_v<T, bl::half>)
    return -14;
  else if constexpr (std::is_same_v<T, bl::bfloat16_t>)
    return -126;
  else
    return std::numeric_limits<T>::min_exponent - 1;
}
/// The 16-bit float with these bits.
template <typename T> T from_bits(uint32_t bits) {
  T x;
  x.bits = static_cast<uint16_t>(bits);
  return x;
}

/// |got - exact| in ulps of T's format at exact (0 for equal values and
/// for two NaNs; infinite when only one is NaN or the values are unequal
/// infinities).
template <typename T> double ulps_from(T got, long double exact) {
  long double g = value_of(got);
  if (std::isnan(g) || std::isnan(exact))
    return std::isnan(g) && std::isnan(exact) ? 0 : INFINITY;
  if (g == exact)
    return 0;
  if (std::isinf(g) || std::isinf(exact)) {
    // A result that overflows: measured against the largest finite value
    // plus one ulp, as the C library would round it.
    return INFINITY;
  }
  int e = std::max<int>(std::ilogb(exact), min_exponent<T>());
  return static_cast<double>(std::fabs(g - exact) /
                             std::ldexp(1.0L, e - fraction_bits<T>()));
}

/// Random finite values with |x| in [2^lo, 2^hi) (sign and bits random).
template <typename T> std::vector<T> wide(size_t n, int lo, int hi) {
  std::uniform_real_distribution<double> exponent(lo, hi), mantissa(1, 2);
  std::vector<T> v;
  for (size_t i = 0; i < n; ++i) {
    double x = std::ldexp(mantissa(rng()), int(exponent(rng())));
    x = std::min<double>(x, std::numeric_limits<float>::max());
    if constexpr (std::is_same_v<T, double>)
      x = std::ldexp(mantissa(rng()), int(exponent(rng())));
    v.push_back(static_cast<T>(rng()() & 1 ? -x : x));
  }
  return v;
}

/// The arguments: every bit pattern for 16-bit types; otherwise random
/// ones near 0, over every binade (sin/cos arguments up to the largest),
/// and the special values.
template <typename T> std::vector<T> arguments() {
  std::vector<T> x;
  if constexpr (sizeof(T) == 2) {
    for (uint32_t bits = 0; bits < 65536; ++bits)
      x.push_back(from_bits<T>(bits));
    return x;
  } else {
    const bool f64 = std::is_same_v<T, double>;
    x = random_values<T>(100000, -10, 10);
    std::vector<T> far = wide<T>(100000, f64 ? -1074 : -149, f64 ? 1024 : 128);
    x.insert(x.end(), far.begin(), far.end());
    for (T s : {T(0), T(-0.0), T(INFINITY), T(-INFINITY), T(NAN),
                std::numeric_limits<T>::max(), std::numeric_limits<T>::min(),
                std::numeric_limits<T>::denorm_min(), T(0x1p20), T(0x1p29),
                T(1e-30), T(0.5), T(3.0), T(-5.5), T(1.5707963267948966)})
      x.push_back(s);
    return x;
  }
}

template <typename T> struct Worst {
  double ulps = 0;
  long double at = 0;
  void see(double u, long double x) {
    if (u > ulps)
      ulps = u, at = x;
  }
};

/// fmod's divisors for arguments x: other patterns (16-bit), or values of
/// every size.
template <typename T> std::vector<T> divisors(size_t n) {
  std::vector<T> y;
  if constexpr (sizeof(T) == 2) {
    for (size_t i = 0; i < n; ++i)
      y.push_back(from_bits<T>(uint32_t(i) * 7919u + 3u));
  } else {
    y = wide<T>(n, std::is_same_v<T, double> ? -1074 : -149,
                std::is_same_v<T, double> ? 1024 : 128);
    for (size_t i = 0; i < n; i += 2) // and nearby sizes
      y[i] = random_values<T>(1, 0.1, 7)[0];
  }
  return y;
}

/// unary_math's five outputs (sin, cos, tanh, erf, fmod; n each) for x
/// and y, on the GPU or on the CPU backend, in poisoned memory.
template <typename T>
std::vector<T> unary_math_on(Backend backend, const std::vector<T> &x,
                             const std::vector<T> &y) {
  const int n = static_cast<int>(x.size());
  if (backend == Backend::Gpu) {
    DeviceBuffer<T> dx(x), dy(y);
    auto dout = poisoned_on_gpu<T>(5 * size_t(n));
    unary_math<T>[{bl::cdiv(n, 256)}](dx, dy, dout, n, 256);
    return dout.to_host();
  }
  std::vector<T> out = poisoned<T>(5 * size_t(n));
  unary_math<T>[{bl::cdiv(n, 256)}].with(kCpu)(x, y, out, n, 256);
  return out;
}

/// Checks `got`, unary_math's outputs for x and y, against long double
/// references and `cpu`, the CPU backend's outputs. A result is NaN (as
/// the poison is) exactly where the exact one is: sin and cos of
/// infinities, fmod by 0 and NaN arguments give NaN, so there the poison
/// cannot tell an unwritten element.
template <typename T>
void expect_unary_math_right(const char *type, const std::vector<T> &x,
                             const std::vector<T> &y, const std::vector<T> &got,
                             const std::vector<T> &cpu) {
  const int n = static_cast<int>(x.size());
  const bool narrow = sizeof(T) == 2;
  // Within 1 ulp of the correctly rounded result (1.5 from the exact
  // value), f32 tanh and erf within 3 (their large halves on the GPU's
  // approximate exp2 and reciprocal) and so within 4 of the CPU backend's;
  // 16-bit results: rounded from f32 results within a few f32 ulp.
  const bool f32 = std::is_same_v<T, float>;
  const double bound[4] = {narrow ? 0.501 : 1.5, narrow ? 0.501 : 1.5,
                           narrow ? 0.501
                           : f32  ? 3.5
                                  : 1.5,
                           narrow ? 0.501
                           : f32  ? 3.5
                                  : 1.5};
  const double from_cpu[4] = {narrow ? 1.0 : 2.0, narrow ? 1.0 : 2.0,
                              narrow ? 1.0
                              : f32  ? 4.0
                                     : 2.0,
                              narrow ? 1.0
                              : f32  ? 4.0
                                     : 2.0};
  const char *names[] = {"sin", "cos", "tanh", "erf"};
  Worst<T> worst[4];
  size_t same_as_cpu[4] = {};
  for (int i = 0; i < n; ++i) {
    long double v = value_of(x[i]);
    long double want[4] = {sinl(v), cosl(v), tanhl(v), erfl(v)};
    for (int f = 0; f < 4; ++f) {
      T g = got[size_t(f) * n + i], c = cpu[size_t(f) * n + i];
      ASSERT_FALSE(std::isnan(value_of(g)) && !std::isnan(want[f]))
          << type << " " << names[f] << "(" << double(v) << "), element " << i
          << " of " << n << ", was not written";
      double u = ulps_from(g, want[f]);
      worst[f].see(u, v);
      ASSERT_LE(u, bound[f])
          << type << " " << names[f] << "(" << double(v)
          << ") = " << double(value_of(g)) << ", want " << double(want[f]);
      ASSERT_LE(ulps_from(g, value_of(c)), from_cpu[f])
          << type << " " << names[f] << "(" << double(v) << ") vs the CPU";
      same_as_cpu[f] += std::memcmp(&g, &c, sizeof(T)) == 0;
    }
    // fmod: exact, the C library's bits (any NaN for a NaN).
    T g = got[4 * size_t(n) + i], c = cpu[4 * size_t(n) + i];
    long double remainder = std::fmod(v, value_of(y[i]));
    if (std::isnan(remainder)) {
      ASSERT_TRUE(std::isnan(value_of(g)) && std::isnan(value_of(c)));
    } else {
      ASSERT_FALSE(std::isnan(value_of(g)))
          << type << " fmod(" << double(v) << ", " << double(value_of(y[i]))
          << "), element " << i << " of " << n << ", was not written";
      ASSERT_TRUE(value_of(g) == remainder &&
                  std::signbit(value_of(g)) == std::signbit(remainder))
          << type << " fmod(" << double(v) << ", " << double(value_of(y[i]))
          << ") = " << double(value_of(g)) << ", want " << double(remainder);
      ASSERT_EQ(std::memcmp(&g, &c, sizeof(T)), 0) << "fmod vs the CPU";
    }
  }
  for (int f = 0; f < 4; ++f) {
    std::printf("%s %s: worst %.3f ulp (at %La) over %d arguments", type,
                names[f], worst[f].ulps, worst[f].at, n);
    if (&got != &cpu)
      std::printf("; %zu results bit for bit the CPU backend's",
                  same_as_cpu[f]);
    std::printf("\n");
  }
}

template <typename T> void unary_math_matches_references(const char *type) {
  BLOCC_SEED_TRACE();
  std::vector<T> x = arguments<T>(), y = divisors<T>(x.size());
  std::vector<T> gpu = unary_math_on(Backend::Gpu, x, y);
  std::vector<T> cpu = unary_math_on(Backend::Cpu, x, y);
  expect_unary_math_right(type, x, y, gpu, cpu);
}

TEST(GpuMath, SinCosTanhErfFmodF32) {
  BLOCC_REQUIRE_GPU();
  unary_math_matches_references<float>("f32");
}
TEST(GpuMath, SinCosTanhErfFmodF64) {
  BLOCC_REQUIRE_GPU();
  unary_math_matches_references<double>("f64");
}
TEST(GpuMath, SinCosTanhErfFmodEveryF16) {
  BLOCC_REQUIRE_GPU();
  unary_math_matches_references<bl::half>("f16");
}
TEST(GpuMath, SinCosTanhErfFmodEveryBf16) {
  BLOCC_REQUIRE_GPU();
  unary_math_matches_references<bl::bfloat16_t>("bf16");
}

// The checks themselves, without a GPU: the CPU backend's results pass
// them on every argument of the GPU tests, infinities and NaNs included
// (a check once took the NaN of sin(inf) for an unwritten element).
template <typename T> void checks_accept_the_cpu_backend(const char *type) {
  BLOCC_SEED_TRACE();
  std::vector<T> x = arguments<T>(), y = divisors<T>(x.size());
  std::vector<T> cpu = unary_math_on(Backend::Cpu, x, y);
  expect_unary_math_right(type, x, y, cpu, cpu);
}

TEST(GpuMathChecks, AcceptTheCpuBackendsSinCosTanhErfFmod) {
  checks_accept_the_cpu_backend<float>("f32");
  checks_accept_the_cpu_backend<double>("f64");
  checks_accept_the_cpu_backend<bl::half>("f16");
  checks_accept_the_cpu_backend<bl::bfloat16_t>("bf16");
}

TEST(GpuMath, ExpExp2LogLog2F64WithinOneUlp) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  std::vector<double> x = random_values<double>(100000, -760, 730);
  std::vector<double> small = random_values<double>(50000, -2, 2);
  std::vector<double> far = wide<double>(100000, -1074, 1024);
  x.insert(x.end(), small.begin(), small.end());
  x.insert(x.end(), far.begin(), far.end());
  for (double s : {0.0, -0.0, double(INFINITY), double(-INFINITY), double(NAN),
                   709.78, 709.79, -745.1, -745.2, 1023.99, 1024.0, -1074.0,
                   -1075.0, 1.0, 2.0, 0x1p-1074, 0x1p-1022})
    x.push_back(s);
  const int n = static_cast<int>(x.size());
  DeviceBuffer<double> dx(x);
  auto dout = poisoned_on_gpu<double>(4 * size_t(n));
  exp_log_f64[{bl::cdiv(n, 256)}](dx, dout, n, 256);
  std::vector<double> cpu = poisoned<double>(4 * size_t(n));
  exp_log_f64[{bl::cdiv(n, 256)}].with(kCpu)(x, cpu, n, 256);
  std::vector<double> gpu = dout.to_host();
  const char *names[] = {"exp", "exp2", "log", "log2"};
  Worst<double> worst[4];
  for (int i = 0; i < n; ++i) {
    long double v = x[i], a = std::fabs(v);
    long double want[4] = {expl(v), exp2l(v), logl(a), log2l(a)};
    for (int f = 0; f < 4; ++f) {
      double g = gpu[size_t(f) * n + i], c = cpu[size_t(f) * n + i];
      // Beyond the largest double the exact value rounds to infinity.
      long double exact = want[f];
      if (std::fabs(exact) > std::numeric_limits<double>::max())
        exact = std::copysign(INFINITY, exact);
      double u = ulps_from(g, exact);
      worst[f].see(u, v);
      ASSERT_LE(u, 1.5) << names[f] << "(" << x[i] << ") = " << g;
      ASSERT_LE(ulps_from(g, (long double)c), 2.0)
          << names[f] << "(" << x[i] << ") vs the CPU";
    }
  }
  for (int f = 0; f < 4; ++f)
    std::printf("f64 %s: worst %.3f ulp (at %La) over %d arguments\n", names[f],
                worst[f].ulps, worst[f].at, n);
}

TEST(GpuMathPtx, NoCallIsLeftAndPtxasAcceptsEveryType) {
  auto check = [](const ir::Function &f) {
    expect_ptx_assembles(f);
    std::string ptx = ptx_for(f);
    EXPECT_THAT(ptx, ::testing::Not(::testing::HasSubstr("call.uni")));
    EXPECT_THAT(ptx, ::testing::Not(::testing::HasSubstr(".extern")));
    return ptx;
  };
  std::vector<float> f;
  std::vector<double> d;
  std::vector<bl::half> h;
  std::vector<bl::bfloat16_t> b;
  std::string f32 =
      check(specialization(unary_math<float>, f, f, f, 1000, 256));
  // The huge-argument path reads the 2/pi table from global memory.
  EXPECT_THAT(f32, ::testing::HasSubstr("blocc_two_over_pi"));
  check(specialization(unary_math<double>, d, d, d, 1000, 256));
  check(specialization(unary_math<bl::half>, h, h, h, 1000, 256));
  check(specialization(unary_math<bl::bfloat16_t>, b, b, b, 1000, 256));
  check(specialization(exp_log_f64, d, d, 1000, 256));
}

} // namespace
