// The CPU backend's vectorized math functions (backends/llvm/math_*.cpp)
// against long double references: exp, exp2, log, log2, sin, cos, tanh, erf
// and sigmoid (the frontend's composition of exp) on f32, f64, f16 and bf16
// blocks, through kernels launched on the CPU backend (odd sizes, masked
// tails). Each function's worst error over the sweep, in units in the last
// place of the result's format measured from the exact value, must stay
// within its documented bound (backends/llvm/README.md) plus the half ulp
// that correct rounding itself may cost. Special values (NaN, infinities,
// signed zeros, subnormals, huge sin/cos arguments) are checked exactly.
#include "cpu/support.h"

#include <array>
#include <cstdio>
#include <functional>

namespace bl = blocc;
using namespace blocc::cpu_testing;

namespace {

enum Function { Exp, Exp2, Log, Log2, Sin, Cos, Tanh, Erf, Sigmoid, kCount };
constexpr const char *kNames[kCount] = {"exp", "exp2", "log", "log2",   "sin",
                                        "cos", "tanh", "erf", "sigmoid"};

long double reference(Function f, long double x) {
  switch (f) {
  case Exp:
    return expl(x);
  case Exp2:
    return exp2l(x);
  case Log:
    return logl(x);
  case Log2:
    return log2l(x);
  case Sin:
    return sinl(x);
  case Cos:
    return cosl(x);
  case Tanh:
    return tanhl(x);
  case Erf:
    return erfl(x);
  case Sigmoid:
    return 1 / (1 + expl(-x));
  case kCount:
    break;
  }
  return 0;
}

/// Each function of x, stored at out[f * n + i].
template <typename T> auto make_all_functions(const char *name) {
  return bl::kernel(name, [](bl::Ptr<T> x, bl::Ptr<T> out, bl::i32 n) {
    auto offs = bl::program_id(0) * 256 + bl::arange(0, 256);
    auto mask = offs < n;
    auto v = bl::load(x + offs, mask);
    bl::Tensor results[kCount] = {bl::exp(v),  bl::exp2(v), bl::log(v),
                                  bl::log2(v), bl::sin(v),  bl::cos(v),
                                  bl::tanh(v), bl::erf(v),  bl::sigmoid(v)};
    for (int f = 0; f < kCount; ++f)
      bl::store(out + f * n + offs, results[f], mask);
  });
}

// ------------------------------------------------------- formats and ulps

template <typename T> struct Format;
template <> struct Format<float> {
  static constexpr int precision = 24, min_exponent = -126;
  using Bits = uint32_t;
};
template <> struct Format<double> {
  static constexpr int precision = 53, min_exponent = -1022;
  using Bits = uint64_t;
};
template <> struct Format<bl::half> {
  static constexpr int precision = 11, min_exponent = -14;
  using Bits = uint16_t;
};
template <> struct Format<bl::bfloat16_t> {
  static constexpr int precision = 8, min_exponent = -126;
  using Bits = uint16_t;
};

template <typename T> long double widen(T x) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    return x;
  else
    return static_cast<float>(x);
}

/// The exact value v rounded to T (through float for the 16-bit formats,
/// which is only used to classify infinities and NaN).
template <typename T> T narrow(long double v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    return static_cast<T>(v);
  else
    return T(static_cast<float>(v));
}

template <typename T> T from_bits(typename Format<T>::Bits bits) {
  T x;
  std::memcpy(static_cast<void *>(&x), &bits, sizeof(T));
  return x;
}

/// Position on the number line: adjacent values of T differ by 1, -0 = +0,
/// and infinity follows the largest finite value.
template <typename T> int64_t ordinal(T x) {
  typename Format<T>::Bits bits;
  std::memcpy(&bits, &x, sizeof(T));
  const int width = 8 * sizeof(T);
  const uint64_t sign = uint64_t{1} << (width - 1);
  int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude : magnitude;
}

/// The unit in the last place of T at the magnitude of v.
template <typename T> long double ulp(long double v) {
  int e = v == 0 ? Format<T>::min_exponent
                 : std::max(static_cast<int>(std::ilogb(v)),
                            Format<T>::min_exponent);
  return std::ldexp(1.0L, e - (Format<T>::precision - 1));
}

/// How far got is from the exact value want, in ulps of T: fractional for
/// finite results; the distance on the number line where an infinity is
/// involved; 0 for NaN against NaN and "infinitely far" for NaN against a
/// number.
template <typename T> double error_in_ulps(T got, long double want) {
  long double g = widen(got);
  if (std::isnan(want) || std::isnan(g))
    return std::isnan(want) && std::isnan(g)
               ? 0
               : std::numeric_limits<double>::infinity();
  T rounded = narrow<T>(want);
  if (std::isinf(g) || std::isinf(widen(rounded)))
    return static_cast<double>(std::abs(ordinal(got) - ordinal(rounded)));
  return static_cast<double>(std::fabs(g - want) / ulp<T>(want));
}

struct Worst {
  double ulps = 0;
  long double x = 0, got = 0, want = 0;
};

/// Runs every function on xs on the CPU backend and returns each one's
/// worst error.
template <typename T>
std::array<Worst, kCount> worst_errors(const std::vector<T> &xs) {
  static auto all = make_all_functions<T>("all_math_functions");
  int n = static_cast<int>(xs.size());
  auto out = poisoned<T>(size_t{kCount} * n);
  all[{bl::cdiv(n, 256)}].with(kCpu)(xs, out, n);
  std::array<Worst, kCount> worst;
  for (int f = 0; f < kCount; ++f)
    for (int i = 0; i < n; ++i) {
      long double x = widen(xs[i]);
      long double want = reference(static_cast<Function>(f), x);
      T got = out[size_t(f) * n + i];
      double e = error_in_ulps(got, want);
      if (e > worst[f].ulps || std::isnan(e))
        worst[f] = {std::isnan(e) ? INFINITY : e, x, widen(got), want};
    }
  return worst;
}

/// Checks each function's worst error against bound[f] ulps of correctly
/// rounded (so bound + 1/2 from the exact value) and prints the table.
void expect_within(const char *format, const std::array<Worst, kCount> &worst,
                   const std::array<double, kCount> &bound) {
  for (int f = 0; f < kCount; ++f) {
    const Worst &w = worst[f];
    std::printf("  %-4s %-8s worst %.3f ulp at x = %.9Lg (got %.9Lg, exact "
                "%.12Lg)\n",
                format, kNames[f], w.ulps, w.x, w.got, w.want);
    ::testing::Test::RecordProperty(std::string("worst_ulp_") + format + "_" +
                                        kNames[f],
                                    std::to_string(w.ulps));
    EXPECT_LE(w.ulps, bound[f] + 0.5)
        << format << " " << kNames[f] << "(" << static_cast<double>(w.x)
        << "): got " << static_cast<double>(w.got) << ", exact "
        << static_cast<double>(w.want);
  }
}

// ------------------------------------------------------------- inputs

/// Values of T at and around a: the `count` neighbours on each side.
template <typename T> void add_neighbours(std::vector<T> &xs, T a, int count) {
  using Bits = typename Format<T>::Bits;
  Bits bits;
  std::memcpy(&bits, &a, sizeof(T));
  for (int k = -count; k <= count; ++k)
    xs.push_back(from_bits<T>(static_cast<Bits>(bits + k)));
}

template <typename T> std::vector<T> specials() {
  const T inf = std::numeric_limits<T>::infinity();
  return {T(0),
          -T(0),
          T(1),
          T(-1),
          inf,
          -inf,
          std::numeric_limits<T>::quiet_NaN(),
          std::numeric_limits<T>::denorm_min(),
          -std::numeric_limits<T>::denorm_min(),
          std::numeric_limits<T>::min(),
          std::numeric_limits<T>::max(),
          -std::numeric_limits<T>::max()};
}

/// Random values uniform in [lo, hi] and log-uniform in magnitude.
template <typename T>
void add_random(std::vector<T> &xs, int count, double lo, double hi) {
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::uniform_real_distribution<double> exponent(-40, std::log2(hi));
  for (int i = 0; i < count; ++i) {
    xs.push_back(static_cast<T>(uniform(rng())));
    double m = std::exp2(exponent(rng()));
    xs.push_back(static_cast<T>(rng()() % 2 ? m : -m));
  }
}

/// Where the implementations change method or range: polynomial cut
/// points, clamps, overflow and underflow thresholds, reduction limits.
template <typename T> std::vector<T> boundaries() {
  const T at[] = {0.625,   1.0,       4.0,    5.92,   10.0,    20.0,   88.72283,
                  89.0,    -87.33654, -103.9, -104.0, 127.99,  128.0,  -149.0,
                  -150.0,  709.78,    710.0,  -708.4, -745.13, 1024.0, -1074.0,
                  -1075.0, 0x1p20,    0x1p29, 0.5,    2.0,     1e-30};
  std::vector<T> xs;
  for (T a : at) {
    add_neighbours(xs, a, 64);
    add_neighbours(xs, T(-a), 64);
  }
  return xs;
}

/// x near multiples of pi/2, where sin or cos cancels: the nearest values of
/// T to k pi/2 and their neighbours, for small k and random k across the
/// reduction's range and beyond it.
template <typename T> void add_near_multiples_of_half_pi(std::vector<T> &xs) {
  const long double half_pi = 1.5707963267948966192313216916397514L;
  auto near = [&](long double k) {
    add_neighbours(xs, static_cast<T>(k * half_pi), 3);
  };
  for (int k = 1; k <= 20000; ++k)
    near(k);
  std::uniform_real_distribution<double> exponent(14, 40);
  for (int i = 0; i < 20000; ++i)
    near(std::floor(std::exp2(exponent(rng()))));
}

std::vector<float> f32_inputs() {
  std::vector<float> xs;
  // Every 4099th f32 bit pattern: all binades, both signs, subnormals.
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099)
    xs.push_back(from_bits<float>(static_cast<uint32_t>(bits)));
  // Dense near 0 and over the polynomial ranges: every 1021st value in
  // [2^-30, 8] of each sign.
  for (uint32_t bits = 0x30800000; bits < 0x41000000; bits += 1021) {
    xs.push_back(from_bits<float>(bits));
    xs.push_back(-from_bits<float>(bits));
  }
  add_random(xs, 50000, -20, 20);
  add_random(xs, 20000, -1e6, 1e6);
  add_near_multiples_of_half_pi(xs);
  for (float v : boundaries<float>())
    xs.push_back(v);
  for (float v : specials<float>())
    xs.push_back(v);
  return xs;
}

std::vector<double> f64_inputs() {
  std::vector<double> xs;
  // Random bit patterns: all binades, both signs, subnormals.
  for (int i = 0; i < 200000; ++i)
    xs.push_back(from_bits<double>(rng()()));
  add_random(xs, 100000, -40, 40);
  add_random(xs, 20000, -2e6, 2e6);
  add_near_multiples_of_half_pi(xs);
  for (double v : boundaries<double>())
    xs.push_back(v);
  for (double v : specials<double>())
    xs.push_back(v);
  return xs;
}

/// Every value of a 16-bit format.
template <typename T> std::vector<T> every_value() {
  std::vector<T> xs;
  for (uint32_t bits = 0; bits <= 0xffff; ++bits)
    xs.push_back(from_bits<T>(static_cast<uint16_t>(bits)));
  return xs;
}

// -------------------------------------------------------------- the bounds

// Documented in backends/llvm/README.md: ulps from the correctly rounded
// result. Sigmoid is where(x < 0, e, 1) / (1 + e) with e = exp(-|x|): two
// roundings on top of exp's (2.4 ulp from the exact value at worst over
// every f32).
constexpr std::array<double, kCount> kF32Bounds = {1, 1, 1, 1, 1, 1, 1, 1, 3};
constexpr std::array<double, kCount> kF64Bounds = {1, 1, 1, 1, 1, 1, 1, 1, 3};
// f16 and bf16 compute in f32 and round once more: within the half ulp of
// that rounding plus the f32 error, a small fraction of the narrow ulp.
// Sigmoid rounds to the narrow format after each of its three operations.
constexpr std::array<double, kCount> kNarrowBounds = {
    1.0 / 64, 1.0 / 64, 1.0 / 64, 1.0 / 64, 1.0 / 64,
    1.0 / 64, 1.0 / 64, 1.0 / 64, 2};

TEST(CpuVectorMath, F32SweepWithinDocumentedUlps) {
  BLOCC_SEED_TRACE();
  expect_within("f32", worst_errors(f32_inputs()), kF32Bounds);
}

TEST(CpuVectorMath, F64SweepWithinDocumentedUlps) {
  BLOCC_SEED_TRACE();
  expect_within("f64", worst_errors(f64_inputs()), kF64Bounds);
}

TEST(CpuVectorMath, EveryF16ValueCorrectlyRoundedUpToTheF32Error) {
  expect_within("f16", worst_errors(every_value<bl::half>()), kNarrowBounds);
}

TEST(CpuVectorMath, EveryBf16ValueCorrectlyRoundedUpToTheF32Error) {
  expect_within("bf16", worst_errors(every_value<bl::bfloat16_t>()),
                kNarrowBounds);
}

} // namespace

TEST(CpuVectorMath, SmallAndOddSizes) {
  BLOCC_SEED_TRACE();
  for (int n : {1, 2, 7, 255, 257, 1031}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    auto f32 = random_values<float>(n, -30, 30);
    expect_within("f32", worst_errors(f32), kF32Bounds);
    auto f64 = random_values<double>(n, -30, 30);
    expect_within("f64", worst_errors(f64), kF64Bounds);
  }
}

// --------------------------------------------------------- special values

template <typename T> class CpuMathSpecials : public ::testing::Test {};
using SpecialTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuMathSpecials, SpecialTypes);

TYPED_TEST(CpuMathSpecials, NanInfinitiesZerosSubnormalsAndHugeArguments) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T tiny = std::numeric_limits<T>::denorm_min();
  // The first argument beyond sin/cos's reduction, and huge ones.
  const T limit = std::is_same_v<T, float> ? T(0x1p29) : T(0x1p20);
  const std::vector<T> x = {T(0),
                            -T(0),
                            inf,
                            -inf,
                            nan,
                            tiny,
                            -tiny,
                            limit,
                            -limit,
                            T(1e30),
                            std::numeric_limits<T>::max(),
                            T(-1),
                            T(100)};
  enum { kZero, kMinusZero, kInf, kMinusInf, kNan, kTiny, kMinusTiny };
  const int n = static_cast<int>(x.size());
  static auto all = make_all_functions<T>("math_specials");
  auto out = poisoned<T>(size_t{kCount} * n);
  all[{1}].with(kCpu)(x, out, n);
  auto at = [&](Function f, int i) { return out[size_t(f) * n + i]; };
  auto is = [](T got, T want) {
    return std::memcmp(&got, &want, sizeof(T)) == 0; // the sign of 0 too
  };
  for (int i : {kZero, kMinusZero}) {
    SCOPED_TRACE(x[i]);
    EXPECT_TRUE(is(at(Sin, i), x[i])); // odd functions keep -0
    EXPECT_TRUE(is(at(Tanh, i), x[i]));
    EXPECT_TRUE(is(at(Erf, i), x[i]));
    EXPECT_EQ(at(Cos, i), T(1));
    EXPECT_EQ(at(Exp, i), T(1));
    EXPECT_EQ(at(Exp2, i), T(1));
    EXPECT_EQ(at(Log, i), -inf);
    EXPECT_EQ(at(Log2, i), -inf);
    EXPECT_EQ(at(Sigmoid, i), T(0.5));
  }
  EXPECT_TRUE(std::isnan(at(Sin, kInf)) && std::isnan(at(Sin, kMinusInf)));
  EXPECT_TRUE(std::isnan(at(Cos, kInf)) && std::isnan(at(Cos, kMinusInf)));
  EXPECT_EQ(at(Tanh, kInf), T(1));
  EXPECT_EQ(at(Tanh, kMinusInf), T(-1));
  EXPECT_EQ(at(Erf, kInf), T(1));
  EXPECT_EQ(at(Erf, kMinusInf), T(-1));
  EXPECT_EQ(at(Exp, kInf), inf);
  EXPECT_EQ(at(Exp, kMinusInf), T(0));
  EXPECT_EQ(at(Exp2, kMinusInf), T(0));
  EXPECT_EQ(at(Log, kInf), inf);
  EXPECT_TRUE(std::isnan(at(Log, kMinusInf)));
  EXPECT_EQ(at(Sigmoid, kInf), T(1));
  EXPECT_EQ(at(Sigmoid, kMinusInf), T(0));
  for (int f = 0; f < kCount; ++f)
    EXPECT_TRUE(std::isnan(at(static_cast<Function>(f), kNan))) << kNames[f];
  // sin and tanh of a subnormal are the subnormal itself.
  for (int i : {kTiny, kMinusTiny}) {
    EXPECT_TRUE(is(at(Sin, i), x[i])) << at(Sin, i);
    EXPECT_TRUE(is(at(Tanh, i), x[i])) << at(Tanh, i);
  }
  EXPECT_TRUE(std::isnan(at(Log, n - 2))); // log(-1)
  // Everything else, huge sin/cos arguments included, against the exact
  // values.
  for (int f = 0; f < kCount; ++f)
    for (int i = 0; i < n; ++i) {
      double bound = (std::is_same_v<T, float> ? kF32Bounds : kF64Bounds)[f];
      EXPECT_LE(error_in_ulps(at(static_cast<Function>(f), i),
                              reference(static_cast<Function>(f), x[i])),
                bound + 0.5)
          << kNames[f] << "(" << x[i] << ")";
    }
}

// ------------------------------------------------ every vector shape

/// exp and exp2 of BLOCK lanes: blocks narrower than a native vector make
/// 64- to 256-bit vectors, whose exact scaling by 2^n takes another path
/// than full ones (VSCALEF of 128/256 bits on AVX-512, none for 64).
template <typename T> auto make_exp_block(const char *name) {
  return bl::kernel(name, [](bl::Ptr<T> x, bl::Ptr<T> e, bl::Ptr<T> e2,
                             bl::Const<int> BLOCK) {
    auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
    auto v = bl::load(x + offs);
    bl::store(e + offs, bl::exp(v));
    bl::store(e2 + offs, bl::exp2(v));
  });
}

TYPED_TEST(CpuMathSpecials, ExpOnEveryVectorWidth) {
  using T = TypeParam;
  BLOCC_SEED_TRACE();
  static auto k = make_exp_block<T>("exp_block");
  const T inf = std::numeric_limits<T>::infinity();
  const bool f32 = std::is_same_v<T, float>;
  // Around both ends of the range (overflow, subnormal results, 0) and in
  // the middle, with the specials.
  std::vector<T> x = random_values<T>(256, -30, 30);
  for (T end : {f32 ? T(88.7) : T(709.7), f32 ? T(-87.3) : T(-708.3),
                f32 ? T(-103.9) : T(-745.1), f32 ? T(127.9) : T(1023.9),
                f32 ? T(-149.5) : T(-1074.5)})
    for (int i = -8; i < 8; ++i)
      x.push_back(end + T(i) / 16);
  for (T v : {inf, -inf, std::numeric_limits<T>::quiet_NaN(), T(0), -T(0)})
    x.push_back(v);
  x.resize(512, T(1));
  for (int block : {1, 2, 4, 8, 16, 32}) {
    SCOPED_TRACE("BLOCK = " + std::to_string(block));
    auto e = poisoned<T>(x.size()), e2 = poisoned<T>(x.size());
    k[{static_cast<int>(x.size()) / block}].with(kCpu)(x, e, e2, block);
    for (size_t i = 0; i < x.size(); ++i) {
      double bound = (f32 ? kF32Bounds : kF64Bounds)[Exp] + 0.5;
      EXPECT_LE(error_in_ulps(e[i], reference(Exp, x[i])), bound)
          << "exp(" << x[i] << ") = " << e[i];
      EXPECT_LE(error_in_ulps(e2[i], reference(Exp2, x[i])), bound)
          << "exp2(" << x[i] << ") = " << e2[i];
    }
  }
}

/// An f32 exp in a loop whose vectors are 32 lanes wide (its stores are
/// 16-bit), twice a 512-bit vector: the scaling is done by pieces.
auto exp_into_i16 =
    bl::kernel("exp_into_i16", [](bl::Ptr<float> x, bl::Ptr<int16_t> out) {
      auto offs = bl::program_id(0) * 64 + bl::arange(0, 64);
      bl::store(out + offs, bl::cast(bl::exp2(bl::load(x + offs)), bl::int16));
    });

TEST(CpuVectorMath, ExpInThirtyTwoLaneVectors) {
  // Whole powers of two, which exp2 gives exactly, and values between.
  std::vector<float> x;
  for (int i = 0; i < 128; ++i)
    x.push_back(i % 2 ? static_cast<float>(i % 15)
                      : static_cast<float>(i % 29) / 2);
  auto out = poisoned<int16_t>(x.size());
  exp_into_i16[{2}].with(kCpu)(x, out);
  for (size_t i = 0; i < x.size(); ++i) {
    long double want = exp2l(x[i]);
    if (x[i] == std::floor(x[i]))
      EXPECT_EQ(out[i], static_cast<int16_t>(want)) << "exp2(" << x[i] << ")";
    else // exp2 within an ulp may round across an integer only where the
         // exact value lies that close to one; these do not
      EXPECT_EQ(out[i], static_cast<int16_t>(std::trunc(want)))
          << "exp2(" << x[i] << ")";
  }
}

// ------------------------------------------- inside reductions and loops

/// sin summed along rows of a 2-D block (some lanes beyond the reduction's
/// range, so the library block runs inside the fused reduction loop), cos
/// and erf of a scalar, and tanh carried through a loop.
auto math_in_contexts = bl::kernel(
    "math_in_contexts",
    [](bl::Ptr<float> x, bl::Ptr<float> row_sums, bl::Ptr<float> scalars,
       bl::Ptr<float> looped, bl::i32 n, bl::i32 trips) {
      auto rows = bl::arange(0, 4), cols = bl::arange(0, 64);
      auto offs = bl::expand_dims(rows, 1) * 64 + bl::expand_dims(cols, 0);
      auto v = bl::load(x + offs, offs < n, 0.0f);
      bl::store(row_sums + rows, bl::sum(bl::sin(v), 1));
      auto s = bl::load(x + 3);
      bl::store(scalars, bl::cos(s));
      bl::store(scalars + 1, bl::erf(s));
      auto acc = bl::load(x + cols, cols < n, 0.0f);
      for (auto i : bl::range(0, trips)) {
        (void)i;
        acc = bl::tanh(acc * 1.5f + 0.25f);
      }
      bl::store(looped + cols, acc, cols < n);
    });

TEST(CpuVectorMath, InsideReductionsLoopsAndScalars) {
  BLOCC_SEED_TRACE();
  const int n = 203, trips = 3; // the last row is cut by the mask
  auto x = random_values<float>(n, -50, 50);
  x[5] = 3e9f;
  x[70] = -1e30f;
  x[200] = 0x1p29f;
  auto sums = poisoned<float>(4), scalars = poisoned<float>(2),
       looped = poisoned<float>(64);
  math_in_contexts[{1}].with(kCpu)(x, sums, scalars, looped, n, trips);
  for (int r = 0; r < 4; ++r) {
    long double want = 0, magnitude = 0;
    for (int c = 0; c < 64 && r * 64 + c < n; ++c) {
      want += sinl(x[r * 64 + c]);
      magnitude += std::fabs(sinl(x[r * 64 + c]));
    }
    // An ulp per term and per addition, relative to the terms' size.
    EXPECT_NEAR(sums[r], static_cast<double>(want),
                static_cast<double>(magnitude) * 0x1p-22)
        << "row " << r;
  }
  EXPECT_LE(error_in_ulps(scalars[0], cosl(x[3])), kF32Bounds[Cos] + 0.5);
  EXPECT_LE(error_in_ulps(scalars[1], erfl(x[3])), kF32Bounds[Erf] + 0.5);
  for (int c = 0; c < 64; ++c) {
    // tanh is a contraction here (slope 1.5 sech^2 <= 1.5, but the values
    // settle near its fixed point): a few ulps of slack for the chain.
    float want = x[c];
    for (int t = 0; t < trips; ++t)
      want = static_cast<float>(tanhl(want * 1.5f + 0.25f));
    EXPECT_NEAR(looped[c], want, 16 * 0x1p-24) << "lane " << c;
  }
}

// ------------------------------------------------------------ floor, ceil

template <typename T> auto make_floor_ceil(const char *name) {
  return bl::kernel(name,
                    [](bl::Ptr<T> x, bl::Ptr<T> lo, bl::Ptr<T> hi, bl::i32 n) {
                      auto offs = bl::program_id(0) * 64 + bl::arange(0, 64);
                      auto mask = offs < n;
                      auto v = bl::load(x + offs, mask);
                      bl::store(lo + offs, bl::floor(v), mask);
                      bl::store(hi + offs, bl::ceil(v), mask);
                    });
}

/// Exact operations, also where the target has no rounding instruction
/// (x86-64 before SSE4.1, emulated by adding and subtracting 2^p): bit for
/// bit the C library's, signed zeros, halves, and values near 2^p included.
TYPED_TEST(CpuMathSpecials, FloorAndCeilBitForBit) {
  using T = TypeParam;
  BLOCC_SEED_TRACE();
  static auto k = make_floor_ceil<T>("floor_ceil");
  const T p = std::is_same_v<T, float> ? T(0x1p23) : T(0x1p52);
  std::vector<T> x = random_values<T>(301, -1e3, 1e3);
  for (T v :
       {T(0), T(0.5), T(1.5), T(2.5), T(0.49999997), T(1) - T(1e-7), p - T(0.5),
        p, p + T(1), p / 2 + T(0.5), T(1e30),
        std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::max(),
        std::numeric_limits<T>::infinity()}) {
    x.push_back(v);
    x.push_back(-v);
  }
  x.push_back(std::numeric_limits<T>::quiet_NaN());
  int n = static_cast<int>(x.size());
  auto lo = poisoned<T>(n), hi = poisoned<T>(n);
  k[{bl::cdiv(n, 64)}].with(kCpu)(x, lo, hi, n);
  for (int i = 0; i < n; ++i) {
    T want_lo = std::floor(x[i]), want_hi = std::ceil(x[i]);
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(lo[i]) && std::isnan(hi[i]));
      continue;
    }
    EXPECT_EQ(std::memcmp(&lo[i], &want_lo, sizeof(T)), 0)
        << "floor(" << x[i] << ") = " << lo[i];
    EXPECT_EQ(std::memcmp(&hi[i], &want_hi, sizeof(T)), 0)
        << "ceil(" << x[i] << ") = " << hi[i];
  }
}

// ------------------------------------------------------------------- fma

template <typename T> auto make_fma(const char *name) {
  return bl::kernel(name, [](bl::Ptr<T> a, bl::Ptr<T> b, bl::Ptr<T> c,
                             bl::Ptr<T> out, bl::i32 n) {
    auto offs = bl::program_id(0) * 64 + bl::arange(0, 64);
    auto mask = offs < n;
    bl::store(out + offs,
              bl::fma(bl::load(a + offs, mask), bl::load(b + offs, mask),
                      bl::load(c + offs, mask)),
              mask);
  });
}

/// Rounded once, bit for bit std::fma, also on targets without FMA
/// instructions (x86-64 before Haswell: f32 goes through f64 rounded to
/// odd there): cancellations, products rounding to ties, subnormal and
/// overflowing results.
TYPED_TEST(CpuMathSpecials, FmaRoundsOnce) {
  using T = TypeParam;
  BLOCC_SEED_TRACE();
  static auto k = make_fma<T>("fma_rounds_once");
  const int n = 515;
  auto a = random_values<T>(n, -4, 4), b = random_values<T>(n, -4, 4),
       c = random_values<T>(n, -4, 4);
  const T eps = std::numeric_limits<T>::epsilon();
  const T tiny = std::numeric_limits<T>::min();
  for (int i = 0; i < 100; ++i) // c cancels the product's leading bits
    c[i] = -static_cast<T>(a[i] * b[i]);
  for (int i = 100; i < 150; ++i) { // (1 + k eps)(1 - k eps) + c: ties
    a[i] = 1 + (i - 100) * eps;
    b[i] = 1 - (i - 100) * eps;
    c[i] = i % 2 ? T(-1) : eps / 2;
  }
  for (int i = 150; i < 200; ++i) { // subnormal and underflowing results
    a[i] *= tiny;
    c[i] *= tiny / 4;
  }
  for (int i = 200; i < 220; ++i) { // products beyond the largest value
    a[i] = std::numeric_limits<T>::max() / 2;
    c[i] = -std::numeric_limits<T>::max() * (i % 2);
  }
  auto out = poisoned<T>(n);
  k[{bl::cdiv(n, 64)}].with(kCpu)(a, b, c, out, n);
  for (int i = 0; i < n; ++i) {
    T want = std::fma(a[i], b[i], c[i]);
    EXPECT_EQ(std::memcmp(&out[i], &want, sizeof(T)), 0)
        << "fma(" << a[i] << ", " << b[i] << ", " << c[i] << ") = " << out[i]
        << ", want " << want;
  }
}
