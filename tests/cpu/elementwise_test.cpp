// Elementwise chains on the CPU backend against the interpreter, per
// element type: integer results must agree bit for bit (wrap-around,
// shifts past the width, INT_MIN / -1, min/max by signedness), and so must
// float results, since both backends round every f32/f64 operation once,
// round f16/bf16 results from f32 once, and call the same C library for
// the other transcendentals. Sizes are odd (1, primes, non-multiples of the
// block), masked-off lanes load `other`, outputs start poisoned. (exp, exp2,
// log and log2 on f32 are the CPU backend's own vectorized approximations, not
// libm's: vector_math_test.cpp checks them.)
#include "cpu/support.h"

namespace bl = blocc;
using namespace blocc::cpu_testing;

namespace {

constexpr int kBlock = 64;
const int kSizes[] = {1, 13, 64, 127, 1000};

// ------------------------------------------------------------- integers
template <typename T> auto make_integer_chain(const char *name) {
  return bl::kernel(name, [](bl::Ptr<T> x, bl::Ptr<T> y, bl::Ptr<T> out,
                             bl::i32 n, bl::Const<int> BLOCK) {
    auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
    auto mask = offs < n;
    auto a = bl::load(x + offs, mask, 7);
    auto b = bl::load(y + offs, mask, 3); // never 0: divides below
    auto mixed = (a * b - a) ^ (a << (b & 15)) ^ (a >> (b & 7));
    auto quotient = a / b + a % b;
    auto extremes = bl::maximum(a, b) - bl::minimum(a, b) + bl::abs(a);
    auto chosen = bl::where(a < b, ~a, -b);
    bl::store(out + offs, mixed + quotient + extremes + chosen, mask);
  });
}

template <typename T> class CpuIntegerChain : public ::testing::Test {};
using IntegerTypes = ::testing::Types<int8_t, int16_t, int32_t, int64_t,
                                      uint8_t, uint32_t, uint64_t>;
TYPED_TEST_SUITE(CpuIntegerChain, IntegerTypes);

TYPED_TEST(CpuIntegerChain, MatchesInterpreterBitForBit) {
  using T = TypeParam;
  BLOCC_SEED_TRACE();
  static auto chain = make_integer_chain<T>("integer_chain");
  for (int n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    double lo =
        std::is_signed_v<T> ? double(std::numeric_limits<T>::min()) : 0.0;
    double hi = double(std::numeric_limits<T>::max());
    if (sizeof(T) == 8) { // exact in double
      lo = std::is_signed_v<T> ? -9.0e18 : 0.0;
      hi = 9.0e18;
    }
    auto x = random_values<T>(n, lo, hi), y = random_values<T>(n, lo, hi);
    for (auto &v : y)
      if (v == 0)
        v = 1;
    if (n > 2 && std::is_signed_v<T>) { // INT_MIN / -1 wraps
      x[1] = std::numeric_limits<T>::min();
      y[1] = static_cast<T>(-1);
    }
    auto cpu = poisoned<T>(n), interpreter = poisoned<T>(n);
    chain[{bl::cdiv(n, kBlock)}].with(kCpu)(x, y, cpu, n, kBlock);
    chain[{bl::cdiv(n, kBlock)}].with(kInterpreter)(x, y, interpreter, n,
                                                    kBlock);
    EXPECT_TRUE(same(cpu, interpreter));
  }
}

/// Shift amounts at and past the width, umulhi, on 32-bit lanes.
auto shifts = bl::kernel("shifts", [](bl::Ptr<int32_t> x, bl::Ptr<uint32_t> u,
                                      bl::Ptr<int32_t> amount,
                                      bl::Ptr<int32_t> out_signed,
                                      bl::Ptr<uint32_t> out_unsigned) {
  auto offs = bl::arange(0, 64);
  auto a = bl::load(x + offs), b = bl::load(amount + offs);
  auto v = bl::load(u + offs);
  auto ub = bl::cast(b, bl::uint32);
  bl::store(out_signed + offs, (a >> b) + (a << b));
  bl::store(out_unsigned + offs, (v >> ub) ^ (v << ub) ^ bl::umulhi(v, v));
});

TEST(CpuShifts, AmountsPastTheWidthMatchTheInterpreter) {
  BLOCC_SEED_TRACE();
  auto x = random_values<int32_t>(64, -2.0e9, 2.0e9);
  auto u = random_values<uint32_t>(64, 0, 4.0e9);
  auto amount = random_values<int32_t>(64, -3, 40); // negative: huge unsigned
  std::vector<int32_t> s_cpu(64), s_interp(64);
  std::vector<uint32_t> u_cpu(64), u_interp(64);
  shifts[{1}].with(kCpu)(x, u, amount, s_cpu, u_cpu);
  shifts[{1}].with(kInterpreter)(x, u, amount, s_interp, u_interp);
  EXPECT_TRUE(same(s_cpu, s_interp));
  EXPECT_TRUE(same(u_cpu, u_interp));
}

// --------------------------------------------------------------- floats
template <typename T> auto make_float_chain(const char *name) {
  return bl::kernel(name, [](bl::Ptr<T> x, bl::Ptr<T> y, bl::Ptr<T> out,
                             bl::i32 n, bl::Const<int> BLOCK) {
    auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
    auto mask = offs < n;
    auto a = bl::load(x + offs, mask, 0.5);
    auto b = bl::load(y + offs, mask);
    auto arithmetic = (a * b - a) / (b + 3) + bl::fma(a, b, a);
    // (exp .. erf are the CPU backend's own implementations, within an
    // ulp: tests/cpu/vector_math_test.cpp; these two round like the
    // interpreter.)
    auto math = bl::sqrt(bl::abs(a)) + bl::rsqrt(b * b + 1);
    auto rounding = bl::floor(a * 4) - bl::ceil(b * 4);
    auto extremes = bl::maximum(a, b) - bl::minimum(a, -b);
    auto chosen = bl::where(a < b, -a, bl::abs(b));
    bl::store(out + offs, arithmetic + math + rounding + extremes + chosen,
              mask);
  });
}

template <typename T> class CpuFloatChain : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double, bl::half, bl::bfloat16_t>;
TYPED_TEST_SUITE(CpuFloatChain, FloatTypes);

TYPED_TEST(CpuFloatChain, MatchesInterpreterBitForBit) {
  using T = TypeParam;
  BLOCC_SEED_TRACE();
  static auto chain = make_float_chain<T>("float_chain");
  for (int n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    auto x = random_values<T>(n, -4, 4), y = random_values<T>(n, -4, 4);
    auto cpu = poisoned<T>(n), interpreter = poisoned<T>(n);
    chain[{bl::cdiv(n, kBlock)}].with(kCpu)(x, y, cpu, n, kBlock);
    chain[{bl::cdiv(n, kBlock)}].with(kInterpreter)(x, y, interpreter, n,
                                                    kBlock);
    EXPECT_TRUE(same(cpu, interpreter));
  }
}

/// minimum/maximum ignore NaN and order -0 below +0; comparisons with NaN
/// are false except !=.
auto specials = bl::kernel("specials", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                          bl::Ptr<float> lo, bl::Ptr<float> hi,
                                          bl::Ptr<int32_t> flags) {
  auto offs = bl::arange(0, 16);
  auto a = bl::load(x + offs), b = bl::load(y + offs);
  bl::store(lo + offs, bl::minimum(a, b));
  bl::store(hi + offs, bl::maximum(a, b));
  auto f = bl::cast(a < b, bl::int32) + 2 * bl::cast(a != b, bl::int32) +
           4 * bl::cast(a >= b, bl::int32) + 8 * bl::cast(a == b, bl::int32);
  bl::store(flags + offs, f);
});

TEST(CpuFloatSpecials, NanZerosAndInfinitiesMatchTheInterpreter) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {nan, 1, nan, -0.f, 0.f, -0.f, inf, -inf,
                          2,   3, -1,  nan,  5,   -inf, 0.f, 1e-45f};
  std::vector<float> y = {1, nan, nan, 0.f, -0.f, -0.f, 1,      inf,
                          2, -3,  -1,  inf, nan,  -inf, 1e-45f, 0.f};
  std::vector<float> lo_c(16), hi_c(16), lo_i(16), hi_i(16);
  std::vector<int32_t> f_c(16), f_i(16);
  specials[{1}].with(kCpu)(x, y, lo_c, hi_c, f_c);
  specials[{1}].with(kInterpreter)(x, y, lo_i, hi_i, f_i);
  EXPECT_TRUE(same(lo_c, lo_i));
  EXPECT_TRUE(same(hi_c, hi_i));
  EXPECT_TRUE(same(f_c, f_i));
  // -0 is below +0 whichever side it comes from.
  EXPECT_TRUE(std::signbit(lo_c[3]) && std::signbit(lo_c[4]));
  EXPECT_FALSE(std::signbit(hi_c[3]) || std::signbit(hi_c[4]));
  EXPECT_EQ(lo_c[0], 1.f); // NaN ignored
}

// ------------------------------------------------- exp2, flushing subnormals
auto exp2_both = bl::kernel(
    "exp2_both", [](bl::Ptr<float> x, bl::Ptr<float> kept,
                    bl::Ptr<float> flushed, bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto v = bl::load(x + offs, mask);
      bl::store(kept + offs, bl::exp2(v), mask);
      bl::store(flushed + offs, bl::exp2(v, bl::Subnormals::Flush), mask);
    });

// bl::exp2 with bl::Subnormals::Flush is bl::exp2 where 2^x is a normal
// number (or infinite, or NaN) and +0 where it is below 2^-126, on the
// interpreter and the CPU backend alike.
TEST(CpuExp2, FlushingSubnormalsZeroesExactlyTheResultsBelowTwoToMinus126) {
  BLOCC_SEED_TRACE();
  std::vector<float> x = random_values<float>(3001, -160, 20);
  for (float edge : {-126.f, -125.99f, -126.01f, -149.f, -150.f, 0.f, -0.f,
                     std::numeric_limits<float>::infinity(),
                     -std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::quiet_NaN()})
    x.push_back(edge);
  const int n = static_cast<int>(x.size());
  for (const bl::LaunchOptions &where : {kInterpreter, kCpu}) {
    SCOPED_TRACE(where.backend == bl::Backend::Cpu ? "cpu" : "interpreter");
    auto kept = poisoned<float>(n), flushed = poisoned<float>(n);
    exp2_both[{bl::cdiv(n, kBlock)}].with(where)(x, kept, flushed, n, kBlock);
    int zeroed = 0;
    for (int i = 0; i < n; ++i) {
      if (kept[i] < 0x1p-126f) {
        ASSERT_EQ(std::bit_cast<uint32_t>(flushed[i]), 0u)
            << "exp2(" << x[i] << ") = " << kept[i] << " flushed to "
            << flushed[i];
        zeroed += kept[i] > 0;
      } else {
        ASSERT_EQ(std::bit_cast<uint32_t>(flushed[i]),
                  std::bit_cast<uint32_t>(kept[i]))
            << "exp2(" << x[i] << ")";
      }
    }
    EXPECT_GT(zeroed, 100); // subnormal results were met and flushed
  }
}

// ---------------------------------------------------------------- casts
/// Every float value converted to every other type: rounding once, float to
/// integer saturating (NaN -> 0), integer to narrow floats from the exact
/// integer (i64 beyond 2^53 included), fp8 in OCP saturation mode.
auto casts =
    bl::kernel("casts", [](bl::Ptr<double> x, bl::Ptr<int64_t> w,
                           bl::Ptr<float> f32, bl::Ptr<bl::half> f16,
                           bl::Ptr<bl::bfloat16_t> bf16, bl::Ptr<int32_t> i32,
                           bl::Ptr<uint8_t> u8, bl::Ptr<uint8_t> e4m3,
                           bl::Ptr<uint8_t> e5m2, bl::Ptr<bl::half> w16,
                           bl::Ptr<bl::bfloat16_t> wbf16, bl::Ptr<float> back) {
      auto offs = bl::arange(0, 64);
      auto v = bl::load(x + offs);
      auto big = bl::load(w + offs);
      bl::store(f32 + offs, bl::cast(v, bl::float32));
      bl::store(f16 + offs, bl::cast(v, bl::float16));
      bl::store(bf16 + offs, bl::cast(v, bl::bfloat16));
      bl::store(i32 + offs, bl::cast(v, bl::int32));
      bl::store(u8 + offs, bl::cast(bl::cast(v, bl::float32), bl::uint8));
      auto f8a = bl::cast(v, bl::float8e4m3), f8b = bl::cast(v, bl::float8e5m2);
      bl::store(e4m3 + offs, bl::bitcast(f8a, bl::uint8));
      bl::store(e5m2 + offs, bl::bitcast(f8b, bl::uint8));
      bl::store(w16 + offs, bl::cast(big, bl::float16));
      bl::store(wbf16 + offs, bl::cast(big, bl::bfloat16));
      bl::store(back + offs,
                bl::cast(f8a, bl::float32) + bl::cast(f8b, bl::float32) +
                    bl::cast(bl::cast(v, bl::bfloat16), bl::float32));
    });

TEST(CpuCasts, EveryConversionMatchesTheInterpreterBitForBit) {
  BLOCC_SEED_TRACE();
  auto x = random_values<double>(64, -1e5, 1e5);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double specials[] = {
      nan,   -nan,  1e300, -1e300, 3e9, -3e9, 65520,     65519.99, 448, 464,
      57344, 61440, 1e-8,  -0.0,   0.5, 2.5,  1.0000001, 255.5,    256, -1};
  for (size_t i = 0; i < std::size(specials); ++i)
    x[i] = specials[i];
  for (size_t i = std::size(specials); i < 40; ++i) // tiny values
    x[i] = x[i] * 1e-9;
  auto w = random_values<int64_t>(64, -9.2e18, 9.2e18);
  w[0] = std::numeric_limits<int64_t>::min();
  w[1] = std::numeric_limits<int64_t>::max();
  w[2] = (int64_t{1} << 24) + (int64_t{1} << 16) + 1; // double rounding trap
  w[3] = (int64_t{1} << 60) + (int64_t{1} << 52) + 1;
  auto run = [&](const bl::LaunchOptions &on) {
    std::vector<float> f32(64), back(64);
    std::vector<bl::half> f16(64), w16(64);
    std::vector<bl::bfloat16_t> bf16(64), wbf16(64);
    std::vector<int32_t> i32(64);
    std::vector<uint8_t> u8(64), e4m3(64), e5m2(64);
    casts[{1}].with(on)(x, w, f32, f16, bf16, i32, u8, e4m3, e5m2, w16, wbf16,
                        back);
    return std::make_tuple(f32, f16, bf16, i32, u8, e4m3, e5m2, w16, wbf16,
                           back);
  };
  auto cpu = run(kCpu), interpreter = run(kInterpreter);
  EXPECT_TRUE(same(std::get<0>(cpu), std::get<0>(interpreter))) << "f32";
  EXPECT_TRUE(same(std::get<1>(cpu), std::get<1>(interpreter))) << "f16";
  EXPECT_TRUE(same(std::get<2>(cpu), std::get<2>(interpreter))) << "bf16";
  EXPECT_TRUE(same(std::get<3>(cpu), std::get<3>(interpreter))) << "i32";
  EXPECT_TRUE(same(std::get<4>(cpu), std::get<4>(interpreter))) << "u8";
  EXPECT_TRUE(same(std::get<5>(cpu), std::get<5>(interpreter))) << "e4m3";
  EXPECT_TRUE(same(std::get<6>(cpu), std::get<6>(interpreter))) << "e5m2";
  EXPECT_TRUE(same(std::get<7>(cpu), std::get<7>(interpreter))) << "i64->f16";
  EXPECT_TRUE(same(std::get<8>(cpu), std::get<8>(interpreter))) << "i64->bf16";
  EXPECT_TRUE(same(std::get<9>(cpu), std::get<9>(interpreter))) << "back";
  // Independent of the interpreter: NaN and saturation.
  EXPECT_EQ(std::get<3>(cpu)[0], 0);           // NaN -> 0
  EXPECT_EQ(std::get<3>(cpu)[2], INT32_MAX);   // 1e300 saturates
  EXPECT_EQ(std::get<3>(cpu)[3], INT32_MIN);   // -1e300 saturates
  EXPECT_EQ(std::get<5>(cpu)[2], 0x7e);        // e4m3: 448
  EXPECT_EQ(std::get<5>(cpu)[0] & 0x7f, 0x7f); // e4m3 NaN
  EXPECT_EQ(std::get<6>(cpu)[3], 0x80 | 0x7b); // e5m2: -57344
}

} // namespace
