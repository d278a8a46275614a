// Kernels compiled ahead of time by blocc-compile (CMakeLists.txt), run
// through the generated launch functions with blocc_runtime alone: results
// against float64 references on fresh random inputs (BLOCC_TEST_SEED
// repeats a run), outputs poisoned before each launch and the memory past
// them checked untouched, odd sizes (1, primes, not multiples of the
// block); and the errors a launch gives for arguments the specialization
// does not fit and for a program's run-time error.
#include "add_f32.h"
#include "add_f32_n16.h"
#include "axpy_f64.h"
#include "divide_i32.h"
#include "softmax_128.h"
#include "test_seed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace {

using ::testing::HasSubstr;

// The launch functions' types: pointers the kernel only reads are const,
// scalars have the kernel's own types, constants are the header's.
static_assert(std::is_same_v<decltype(&add_f32::cpu),
                             void (*)(const blocc::Grid &, const float *,
                                      const float *, float *, int32_t)>);
static_assert(
    std::is_same_v<decltype(&aot_test::axpy_f64::cpu),
                   void (*)(const blocc::Grid &, double, const double *,
                            const double *, double *, int64_t)>);
static_assert(add_f32::BLOCK == 1024 && add_f32_n16::BLOCK == 256 &&
              softmax_128::BLOCK == 128);

constexpr float kPoison = std::numeric_limits<float>::quiet_NaN();
constexpr size_t kGuard =
    64; // elements past the output the kernel must not touch

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::vector<float> random_floats(size_t n, float low, float high) {
  std::uniform_real_distribution<float> d(low, high);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(blocc::test_seed::rng());
  return v;
}

/// Host memory 64-byte aligned (the ':16' specializations need 16).
template <typename T> struct Aligned {
  explicit Aligned(size_t n, T fill) : data(n + 16, fill) {
    size_t misalign = reinterpret_cast<uintptr_t>(data.data()) % 64;
    offset = misalign ? (64 - misalign) / sizeof(T) : 0;
  }
  T *get() { return data.data() + offset; }
  std::vector<T> data;
  size_t offset = 0;
};

class AotCpu : public ::testing::TestWithParam<int> {};

TEST_P(AotCpu, VectorAddMatchesFloat64) {
  BLOCC_SEED_TRACE();
  const int n = GetParam();
  std::vector<float> x = random_floats(n, -100, 100),
                     y = random_floats(n, -100, 100);
  Aligned<float> xs(n, 0), ys(n, 0), out(n + kGuard, kPoison);
  std::copy(x.begin(), x.end(), xs.get());
  std::copy(y.begin(), y.end(), ys.get());
  add_f32::cpu({cdiv(n, add_f32::BLOCK)}, xs.get(), ys.get(), out.get(), n);
  for (int i = 0; i < n; ++i) {
    // One rounding of the exact sum: what float addition gives.
    float want = static_cast<float>(double{x[i]} + double{y[i]});
    ASSERT_EQ(out.get()[i], want) << "element " << i << " of " << n;
  }
  for (size_t i = n; i < n + kGuard; ++i)
    ASSERT_TRUE(std::isnan(out.get()[i])) << "wrote past n at " << i;
}

TEST_P(AotCpu, AxpyOnDoublesWith64BitCount) {
  BLOCC_SEED_TRACE();
  const int64_t n = GetParam();
  std::uniform_real_distribution<double> d(-1, 1);
  const double alpha = d(blocc::test_seed::rng()) * 10;
  Aligned<double> x(n, 0), y(n, 0), out(n + kGuard, std::nan(""));
  for (int64_t i = 0; i < n; ++i) {
    x.get()[i] = d(blocc::test_seed::rng());
    y.get()[i] = d(blocc::test_seed::rng());
  }
  aot_test::axpy_f64::cpu({cdiv(n, aot_test::axpy_f64::BLOCK)}, alpha, x.get(),
                          y.get(), out.get(), n);
  for (int64_t i = 0; i < n; ++i) {
    double want = alpha * x.get()[i] + y.get()[i];
    // Fused or not, one or two roundings of a value below 11.
    ASSERT_NEAR(out.get()[i], want, 4e-15) << "element " << i;
  }
  for (int64_t i = n; i < n + static_cast<int64_t>(kGuard); ++i)
    ASSERT_TRUE(std::isnan(out.get()[i])) << "wrote past n at " << i;
}

INSTANTIATE_TEST_SUITE_P(OddSizes, AotCpu,
                         ::testing::Values(1, 2, 17, 1023, 1024, 1025, 4099,
                                           65537));

TEST(AotCpuSoftmax, RowsMatchFloat64WithOddStridesAndMaskedTails) {
  BLOCC_SEED_TRACE();
  for (int rows : {1, 13})
    for (int cols : {1, 97, 128}) {
      SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
      const int in_stride = cols + 3, out_stride = cols + 5;
      std::vector<float> in = random_floats(size_t(rows) * in_stride, -20, 20);
      Aligned<float> x(in.size(), 0), out(size_t(rows) * out_stride, kPoison);
      std::copy(in.begin(), in.end(), x.get());
      softmax_128::cpu({4}, out.get(), x.get(), in_stride, out_stride, rows,
                       cols);
      for (int r = 0; r < rows; ++r) {
        double max = -INFINITY, sum = 0;
        for (int c = 0; c < cols; ++c)
          max = std::max<double>(max, in[r * in_stride + c]);
        for (int c = 0; c < cols; ++c)
          sum += std::exp(double{in[r * in_stride + c]} - max);
        for (int c = 0; c < out_stride; ++c) {
          float got = out.get()[r * out_stride + c];
          if (c >= cols) {
            ASSERT_TRUE(std::isnan(got))
                << "row " << r << " wrote column " << c;
            continue;
          }
          double want = std::exp(double{in[r * in_stride + c]} - max) / sum;
          ASSERT_NEAR(got, want, 1e-6 + 2e-6 * want)
              << "row " << r << " column " << c;
        }
      }
    }
}

TEST(AotCpuErrors, DivisionByZeroNamesTheProgramLaneAndOp) {
  const int n = 200;
  Aligned<int32_t> x(n, 7), y(n, 2), out(n, -1);
  divide_i32::cpu({cdiv(n, divide_i32::BLOCK)}, x.get(), y.get(), out.get(), n);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out.get()[i], 3);
  y.get()[130] = 0; // program 2, lane 2
  try {
    divide_i32::cpu({cdiv(n, divide_i32::BLOCK)}, x.get(), y.get(), out.get(),
                    n);
    FAIL() << "a zero divisor did not stop the launch";
  } catch (const blocc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel 'divide_i32', program (2, 0, 0), "
                                    "div at kernels.cpp:"));
    EXPECT_THAT(e.what(), HasSubstr(": lane 2: integer division by zero"));
  }
}

TEST(AotCpuErrors, MisalignedPointerForASixteenByteSpecialization) {
  Aligned<float> x(64, 1), y(64, 2), out(64, 0);
  try {
    add_f32::cpu({1}, x.get(), y.get() + 1, out.get(), 32);
    FAIL() << "a misaligned pointer was accepted";
  } catch (const blocc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel 'add_f32', argument 2 "
                                    "(y=*f32:16): the address 0x"));
    EXPECT_THAT(e.what(), HasSubstr("is not 16-byte aligned"));
  }
  // add_f32_n16 assumes nothing of its pointers, but n % 16 == 0.
  add_f32_n16::cpu({1}, x.get() + 1, y.get() + 3, out.get() + 1, 48);
  for (int i = 0; i < 48; ++i)
    ASSERT_EQ(out.get()[1 + i], 3.0f);
  try {
    add_f32_n16::cpu({1}, x.get(), y.get(), out.get(), 50);
    FAIL() << "n = 50 was accepted by an n=i32:16 specialization";
  } catch (const blocc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel 'add_f32_n16', argument 4 "
                                    "(n=i32:16): 50 is not a multiple of 16"));
  }
}

TEST(AotCpuErrors, NegativeGridAndEmptyGrid) {
  Aligned<float> x(16, 1), out(16, kPoison);
  EXPECT_THROW(add_f32::cpu({-1}, x.get(), x.get(), out.get(), 16),
               blocc::Error);
  add_f32::cpu({0}, x.get(), x.get(), out.get(), 16); // runs nothing
  EXPECT_TRUE(std::isnan(out.get()[0]));
}

} // namespace
