// The CPU backend's vectorized exp, exp2, log and log2 (backends/llvm/
// math_functions.cpp) against correctly rounded references (the float64 C
// library rounded once to f32): within 2 ulp over a sweep of the whole f32
// range, subnormals included, and exactly right at the special values
// (NaN, infinities, zeros, negatives, overflow and underflow). f16 and
// bf16, computed through f32, must match the interpreter to one ulp of
// their own format.
#include "cpu/support.h"

#include <functional>

namespace bl = blocc;
using namespace blocc::cpu_testing;

namespace {

auto math =
    bl::kernel("math", [](bl::Ptr<float> x, bl::Ptr<float> e, bl::Ptr<float> e2,
                          bl::Ptr<float> l, bl::Ptr<float> l2, bl::i32 n) {
      auto offs = bl::program_id(0) * 256 + bl::arange(0, 256);
      auto mask = offs < n;
      auto v = bl::load(x + offs, mask);
      bl::store(e + offs, bl::exp(v), mask);
      bl::store(e2 + offs, bl::exp2(v), mask);
      bl::store(l + offs, bl::log(v), mask);
      bl::store(l2 + offs, bl::log2(v), mask);
    });

/// Distance in units in the last place between two finite floats of one
/// sign (or zero); a large number when they differ in class.
int64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  if (std::isinf(a) || std::isinf(b))
    return a == b ? 0 : INT64_MAX;
  auto ordered = [](float f) {
    int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? -(int64_t{i} & 0x7fffffff) : int64_t{i};
  };
  return std::abs(ordered(a) - ordered(b));
}

struct Function {
  const char *name;
  double (*reference)(double);
  int output;
};

std::vector<float> sweep() {
  std::vector<float> x;
  // Every 4099th f32 bit pattern: all binades, both signs, subnormals.
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099)
    x.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  const float specials[] = {0.f,
                            -0.f,
                            1.f,
                            -1.f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(),
                            88.72283f,
                            88.7229f,
                            -87.33654f,
                            -103.9f,
                            -104.f,
                            127.99f,
                            128.f,
                            -149.f,
                            -150.f,
                            0.5f,
                            2.f,
                            1.0000001f,
                            0.99999994f,
                            1e-30f};
  x.insert(x.end(), std::begin(specials), std::end(specials));
  return x;
}

TEST(CpuVectorMath, F32WithinTwoUlpOfCorrectlyRounded) {
  std::vector<float> x = sweep();
  int n = static_cast<int>(x.size());
  std::vector<std::vector<float>> out(4, poisoned<float>(n));
  math[{bl::cdiv(n, 256)}].with(kCpu)(x, out[0], out[1], out[2], out[3], n);
  const Function functions[] = {
      {"exp", [](double v) { return std::exp(v); }, 0},
      {"exp2", [](double v) { return std::exp2(v); }, 1},
      {"log", [](double v) { return std::log(v); }, 2},
      {"log2", [](double v) { return std::log2(v); }, 3}};
  for (const Function &f : functions) {
    int64_t worst = 0;
    int at = 0;
    for (int i = 0; i < n; ++i) {
      float want = static_cast<float>(f.reference(x[i]));
      int64_t d = ulp_distance(out[f.output][i], want);
      if (d > worst) {
        worst = d;
        at = i;
      }
    }
    RecordProperty(std::string("worst_ulp_") + f.name, std::to_string(worst));
    EXPECT_LE(worst, 2) << f.name << "(" << x[at] << ") (bits 0x" << std::hex
                        << std::bit_cast<uint32_t>(x[at]) << std::dec
                        << "): got " << out[f.output][at] << ", want "
                        << static_cast<float>(f.reference(x[at])) << ", "
                        << worst << " ulp apart";
  }
}

TEST(CpuVectorMath, SpecialValuesExactly) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.f,
                          -0.f,
                          inf,
                          -inf,
                          -1.f,
                          1.f,
                          std::numeric_limits<float>::quiet_NaN(),
                          200.f,
                          -200.f,
                          2.f};
  int n = static_cast<int>(x.size());
  std::vector<float> e(n), e2(n), l(n), l2(n);
  math[{1}].with(kCpu)(x, e, e2, l, l2, n);
  EXPECT_EQ(e[0], 1.f);
  EXPECT_EQ(e[1], 1.f);
  EXPECT_EQ(e[2], inf);
  EXPECT_EQ(e[3], 0.f);
  EXPECT_TRUE(std::isnan(e[6]));
  EXPECT_EQ(e[7], inf);
  EXPECT_EQ(e[8], 0.f);
  EXPECT_EQ(e2[9], 4.f);
  EXPECT_EQ(e2[5], 2.f);
  EXPECT_EQ(l[0], -inf);
  EXPECT_EQ(l[1], -inf);
  EXPECT_EQ(l[2], inf);
  EXPECT_TRUE(std::isnan(l[3]));
  EXPECT_TRUE(std::isnan(l[4]));
  EXPECT_EQ(l[5], 0.f);
  EXPECT_TRUE(std::isnan(l[6]));
  EXPECT_EQ(l2[9], 1.f);
  EXPECT_EQ(l2[5], 0.f);
}

template <typename T> auto make_narrow_math(const char *name) {
  return bl::kernel(name, [](bl::Ptr<T> x, bl::Ptr<T> out, bl::i32 n) {
    auto offs = bl::program_id(0) * 128 + bl::arange(0, 128);
    auto mask = offs < n;
    auto v = bl::load(x + offs, mask, 1.0);
    bl::store(out + offs,
              bl::exp(v) + bl::exp2(-v) + bl::log(bl::abs(v) + 0.5) +
                  bl::log2(v * v + 1),
              mask);
  });
}

template <typename T> class CpuNarrowMath : public ::testing::Test {};
using NarrowTypes = ::testing::Types<bl::half, bl::bfloat16_t>;
TYPED_TEST_SUITE(CpuNarrowMath, NarrowTypes);

TYPED_TEST(CpuNarrowMath, MatchesInterpreterToOneUlpOfTheFormat) {
  using T = TypeParam;
  BLOCC_SEED_TRACE();
  static auto k = make_narrow_math<T>("narrow_math");
  int n = 999;
  auto x = random_values<T>(n, -5, 5);
  auto cpu = poisoned<T>(n), interpreter = poisoned<T>(n);
  k[{bl::cdiv(n, 128)}].with(kCpu)(x, cpu, n);
  k[{bl::cdiv(n, 128)}].with(kInterpreter)(x, interpreter, n);
  // The sum of four terms rounds at each step: one ulp of the format
  // (2^-10 for f16, 2^-7 for bf16) relative to the largest term, which the
  // result bounds within a factor of a few.
  double ulp = std::is_same_v<T, bl::half> ? 0x1p-10 : 0x1p-7;
  EXPECT_TRUE(close(cpu, interpreter, 2 * ulp, 2 * ulp));
  // And the values are right, against float64.
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i) {
    double v = as_double(x[i]);
    want[i] = std::exp(v) + std::exp2(-v) + std::log(std::abs(v) + 0.5) +
              std::log2(v * v + 1);
  }
  EXPECT_TRUE(close(cpu, want, 4 * ulp, 4 * ulp));
}

} // namespace
