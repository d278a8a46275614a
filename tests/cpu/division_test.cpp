// Division of a block by one value per program (softmax's x / sum): the
// CPU backend multiplies by one reciprocal and corrects each quotient with
// two fmas (backends/llvm/one_divisor.h), falling back to the vector
// division for a chunk with a numerator, or for a divisor, outside the
// range where that is exact. Every quotient must equal the host's IEEE
// division bit for bit: random and edge pairs (subnormals, huge, tiny,
// infinities, NaNs, signed zeros, the ends of the fast range), every
// significand of a numerator, and a sweep of divisors. Also the reductions'
// min/max folds (one MAXPS per chunk unless a chunk holds a NaN or a zero)
// against the interpreter with those values placed at random.
#include "cpu/support.h"

#include "divide_rows_kernel.h"

#include <cstdlib>

namespace bl = blocc;
using namespace blocc::cpu_testing;

namespace {

using blocc::testing::divide_rows;

float from_bits(uint32_t u) { return std::bit_cast<float>(u); }

/// Divides row r of `x` (n numerators) by divisors[r] on the CPU backend
/// and expects the host's quotients bit for bit (NaN for NaN).
::testing::AssertionResult divides_exactly(const std::vector<float> &x,
                                           const std::vector<float> &divisors,
                                           int n) {
  int rows = static_cast<int>(divisors.size());
  int block = 1;
  while (block < n)
    block *= 2;
  auto out = poisoned<float>(x.size());
  divide_rows[{rows}].with(kCpu)(x, divisors, out, n, block);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < n; ++c) {
      size_t i = size_t(r) * n + c;
      volatile float a = x[i], b = divisors[r];
      float want = a / b;
      if (std::bit_cast<uint32_t>(out[i]) == std::bit_cast<uint32_t>(want) ||
          (std::isnan(out[i]) && std::isnan(want)))
        continue;
      return ::testing::AssertionFailure()
             << std::hexfloat << x[i] << " / " << divisors[r] << ": cpu "
             << out[i] << ", want " << want;
    }
  return ::testing::AssertionSuccess();
}

std::vector<float> edge_values() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          INFINITY,
                          -INFINITY,
                          NAN,
                          from_bits(0xffc00001u),
                          from_bits(0x7f800001u), // signaling NaN
                          from_bits(1),           // the least subnormal
                          from_bits(0x007fffffu), // the greatest subnormal
                          0x1p-126f,
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(),
                          1.0f,
                          -1.0f,
                          3.0f,
                          0.1f};
  // Around the bounds of the fast path (2^-125, 2^125 for the divisor,
  // 2^-100 max(1, |b|), 2^125 min(1, |b|) for the numerator).
  for (int e : {-127, -126, -125, -124, -101, -100, -99, -76, -75, -24,
                24,   75,   76,   99,   100,  101,  124, 125, 126, 127})
    for (float m : {1.0f, 0x1.fffffep0f, 0x1.000002p0f, 1.5f}) {
      float p = std::ldexp(m, e);
      v.push_back(p);
      v.push_back(-p);
      v.push_back(std::nextafter(p, 0.0f));
    }
  return v;
}

float random_bits_float(std::mt19937_64 &g) {
  return from_bits(static_cast<uint32_t>(g()));
}

TEST(CpuOneDivisor, EdgeAndRandomPairsMatchIeeeDivisionBitForBit) {
  BLOCC_SEED_TRACE();
  auto &g = rng();
  std::vector<float> edges = edge_values();
  std::vector<float> divisors = edges;
  for (int i = 0; i < 200; ++i)
    divisors.push_back(random_bits_float(g));
  std::uniform_real_distribution<float> ordinary(-8.0f, 8.0f);
  for (int i = 0; i < 100; ++i)
    divisors.push_back(ordinary(g));
  // Rows of 1013 numerators (a prime: a partial last chunk): the edges
  // each in a chunk of ordinary values (so that one special value sends
  // only its chunk down the slow path), then random bits, then ordinary
  // values, quotients near the ends of the range, and exact quotients.
  const int n = 1013;
  std::vector<float> x;
  for (float b : divisors) {
    std::vector<float> row;
    for (float e : edges) {
      row.push_back(e);
      for (int k = 0; k < 3; ++k)
        row.push_back(ordinary(g));
    }
    while (row.size() < 700)
      row.push_back(random_bits_float(g));
    while (row.size() < 900)
      row.push_back(ordinary(g));
    while (row.size() < 960) {
      float scale =
          std::ldexp(1.0f, std::uniform_int_distribution<int>(-101, -99)(g));
      row.push_back(b * scale * ordinary(g));
    }
    while (row.size() < size_t(n))
      row.push_back(b * float(std::uniform_int_distribution<int>(-99, 99)(g)));
    x.insert(x.end(), row.begin(), row.end());
  }
  EXPECT_TRUE(divides_exactly(x, divisors, n));
}

TEST(CpuOneDivisor, EverySignificandMatchesIeeeDivision) {
  BLOCC_SEED_TRACE();
  auto &g = rng();
  // Every numerator significand in [1, 2) against three divisors: 2^23
  // numerators in rows of 2^13.
  const int n = 1 << 13;
  std::vector<float> x(size_t(1) << 23);
  for (uint32_t m = 0; m < x.size(); ++m)
    x[m] = from_bits(0x3f800000u | m);
  std::uniform_int_distribution<uint32_t> significand(0, (1u << 23) - 1);
  for (int k = 0; k < 3; ++k) {
    float b = from_bits(0x3f800000u | significand(g));
    std::vector<float> divisors(x.size() / n, b);
    SCOPED_TRACE(b);
    EXPECT_TRUE(divides_exactly(x, divisors, n));
  }
  // Every eighth divisor significand in [1, 2), each against 16 random
  // numerators of [1, 2).
  std::vector<float> divisors, numerators;
  for (uint32_t m = 0; m < (1u << 23); m += 8) {
    divisors.push_back(from_bits(0x3f800000u | m | (g() & 7)));
    for (int k = 0; k < 16; ++k)
      numerators.push_back(from_bits(0x3f800000u | significand(g)));
  }
  EXPECT_TRUE(divides_exactly(numerators, divisors, 16));
}

TEST(CpuOneDivisor, QuotientsTakeTheFastPathOnTheHost) {
  if (std::getenv("BLOCC_CPU_TARGET"))
    GTEST_SKIP() << "another target than the host's (maybe without FMA)";
  std::string ir =
      divide_rows.llvm_ir_for(std::vector<float>(64), std::vector<float>(1),
                              std::vector<float>(64), 64, 64);
  EXPECT_THAT(ir, ::testing::HasSubstr("div.slow"));
  EXPECT_THAT(ir, ::testing::HasSubstr("@llvm.fma"));
}

template <typename T>
auto row_extremes = bl::kernel("row_extremes", [](bl::Ptr<T> x, bl::Ptr<T> hi,
                                                  bl::Ptr<T> lo, bl::i32 n,
                                                  bl::Const<int> BLOCK) {
  auto row = bl::program_id(0);
  auto cols = bl::arange(0, BLOCK);
  auto mask = cols < n;
  auto a = bl::load(x + row * n + cols, mask, T(0.5));
  bl::store(hi + row, bl::max(a, 0));
  bl::store(lo + row, bl::min(a, 0));
});

template <typename T> class CpuMinMaxFold : public ::testing::Test {};
using FoldTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuMinMaxFold, FoldTypes);

TYPED_TEST(CpuMinMaxFold, NanAndZerosMatchTheInterpreter) {
  using T = TypeParam;
  BLOCC_SEED_TRACE();
  auto &g = rng();
  const T specials[] = {T(0),
                        -T(0),
                        std::numeric_limits<T>::quiet_NaN(),
                        -std::numeric_limits<T>::quiet_NaN(),
                        std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity()};
  for (int n : {1, 17, 300, 1021}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const int rows = 64;
    auto x = random_values<T>(size_t(rows) * n, -1.0, 1.0);
    std::uniform_int_distribution<int> which(0, std::size(specials) - 1);
    std::uniform_int_distribution<int> where(0, n - 1);
    for (int r = 0; r < rows; ++r) {
      T *row = x.data() + size_t(r) * n;
      switch (r % 8) {
      case 0: // ordinary values only
        break;
      case 1: // all NaN
        std::fill(row, row + n, specials[2]);
        break;
      case 2: // zeros of both signs only
        for (int c = 0; c < n; ++c)
          row[c] = (g() & 1) ? T(0) : -T(0);
        break;
      case 3: // negative values and zeros: the maximum is a zero
        for (int c = 0; c < n; ++c)
          row[c] = -std::abs(row[c]);
        row[where(g)] = -T(0);
        row[where(g)] = T(0);
        break;
      default: // a few specials at random places
        for (int k = 0; k < 1 + r % 4; ++k)
          row[where(g)] = specials[which(g)];
      }
    }
    auto hi_cpu = poisoned<T>(rows), lo_cpu = poisoned<T>(rows);
    auto hi_ref = poisoned<T>(rows), lo_ref = poisoned<T>(rows);
    int block = 1;
    while (block < n)
      block *= 2;
    row_extremes<T>[{rows}].with(kCpu)(x, hi_cpu, lo_cpu, n, block);
    row_extremes<T>[{rows}].with(kInterpreter)(x, hi_ref, lo_ref, n, block);
    EXPECT_TRUE(same(hi_cpu, hi_ref));
    EXPECT_TRUE(same(lo_cpu, lo_ref));
  }
}

} // namespace
