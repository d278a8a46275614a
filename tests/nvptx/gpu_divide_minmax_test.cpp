// The GPU's fast forms of two f32 ops against the CPU backend:
// - division of a block by one divisor per program (lower_divide.cpp: a
//   reciprocal and two fmas, an f64 path out of range) must give div.rn's
//   bits for every pair: divisors and numerators from every binade,
//   subnormals, zeros of both signs, infinities and NaNs;
// - maximum/minimum (lower_math.cpp: max.f32 plus a signed-zero fix, no
//   predicates), elementwise and as row reductions, with signed zeros and
//   NaNs: elementwise bit for bit (NaN payloads included, where the
//   results are stored), reductions bit for bit except which NaN an
//   all-NaN row gives (the combining order differs); and where nothing
//   can tell the zeros apart (unobserved_zero_signs.h), a bare max.f32
//   whose results, through what does see them, are still the CPU
//   backend's. (exp: gpu_math_test.cpp.)
// The kernels' PTX is checked without a GPU; results are skipped (reported
// as skipped) where no GPU is present.
#include "nvptx/support.h"

#include "divide_rows_kernel.h"

#include <bit>
#include <cmath>
#include <limits>

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

constexpr int kBlock = 1024;

using blocc::testing::divide_rows;

auto min_max_rows =
    bl::kernel("min_max_rows", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                  bl::Ptr<float> out, bl::Ptr<float> row_out,
                                  bl::i32 n, bl::Const<int> BLOCK) {
      auto row = bl::program_id(0);
      auto cols = bl::arange(0, BLOCK);
      auto mask = cols < n;
      auto a = bl::load(x + row * n + cols, mask, -INFINITY);
      auto b = bl::load(y + row * n + cols, mask, INFINITY);
      bl::store(out + 2 * row * n + cols, bl::maximum(a, b), mask);
      bl::store(out + (2 * row + 1) * n + cols, bl::minimum(a, b), mask);
      bl::store(row_out + 2 * row, bl::max(a, 0));
      bl::store(row_out + 2 * row + 1, bl::min(b, 0));
    });

// The row maximum and minimum reach only a subtraction and a comparison
// (and, for the maximum, softmax's exp), which cannot tell -0 from +0: both
// skip the signed-zero fix. The elementwise maximum goes through a
// subtraction to a store, which can.
auto zero_sign_blind_rows =
    bl::kernel("zero_sign_blind_rows", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                          bl::Ptr<float> out, bl::i32 n,
                                          bl::Const<int> BLOCK) {
      auto row = bl::program_id(0);
      auto cols = bl::arange(0, BLOCK);
      auto mask = cols < n;
      auto a = bl::load(x + row * n + cols, mask, -INFINITY);
      auto b = bl::load(y + row * n + cols, mask, INFINITY);
      auto at_max = bl::where(a - bl::max(a, 0) == 0.0f, 1.0f, 0.0f);
      auto at_min = bl::where(b - bl::min(b, 0) == 0.0f, 1.0f, 0.0f);
      auto e = bl::exp(a - bl::max(a, 0));
      bl::store(out + 4 * row * n + cols, at_max, mask);
      bl::store(out + (4 * row + 1) * n + cols, at_min, mask);
      bl::store(out + (4 * row + 2) * n + cols, e, mask);
      bl::store(out + (4 * row + 3) * n + cols, bl::maximum(a, b) - 0.0f, mask);
    });

float from_bits(uint32_t u) { return std::bit_cast<float>(u); }

/// A float from anywhere in the format: every exponent, zeros, subnormals,
/// infinities and NaNs come up.
float any_float() { return from_bits(static_cast<uint32_t>(rng()())); }

/// Divisors that stress the fast path's range checks and the slow path.
std::vector<float> hard_divisors() {
  return {1.0f,          3.0f,      -7.5f,     0.1f,
          0x1.fffffep0f, 0x1p-125f, 0x1p-126f, 0x1p-127f,
          0x1p-149f,     0x1p125f,  0x1p126f,  0x1.fffffep127f,
          0.0f,          -0.0f,     INFINITY,  -INFINITY,
          std::nanf(""), 16384.0f,  1e-30f,    -1e30f};
}

/// Same bits, or both NaN (the CPU backend's NaNs are x86's).
::testing::AssertionResult same_or_both_nan(const std::vector<float> &gpu,
                                            const std::vector<float> &cpu,
                                            const std::vector<float> &in) {
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (std::isnan(gpu[i]) && std::isnan(cpu[i]))
      continue;
    if (std::bit_cast<uint32_t>(gpu[i]) != std::bit_cast<uint32_t>(cpu[i]))
      return ::testing::AssertionFailure()
             << "element " << i << " (input " << in[i % in.size()] << "): gpu "
             << gpu[i] << " (0x" << std::hex << std::bit_cast<uint32_t>(gpu[i])
             << "), cpu " << cpu[i] << " (0x" << std::bit_cast<uint32_t>(cpu[i])
             << ")";
  }
  return ::testing::AssertionSuccess();
}

TEST(GpuDivide, ByOneDivisorPerProgramIsDivRnBitForBit) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  std::vector<float> divisors = hard_divisors();
  for (int i = 0; i < 12; ++i)
    divisors.push_back(any_float());
  const int rows = static_cast<int>(divisors.size());
  for (int n : {kBlock, 1001}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    // Each row: numerators from anywhere, then ones near the divisor's
    // scale and around the fast path's limits, zeros of both signs.
    std::vector<float> x(size_t(rows) * n);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < n; ++c) {
        float &v = x[size_t(r) * n + c];
        switch (c % 4) {
        case 0:
          v = any_float();
          break;
        case 1:
          v = divisors[r] *
              static_cast<float>(random_values<float>(1, -4, 4)[0]);
          break;
        case 2:
          v = std::ldexp(random_values<float>(1, 1, 2)[0],
                         static_cast<int>(random_values<int>(1, -150, 128)[0]));
          break;
        default:
          v = c % 8 == 3 ? 0.0f : -0.0f;
        }
      }
    DeviceBuffer<float> dx(x), dd(divisors);
    auto dout = poisoned_on_gpu<float>(x.size());
    divide_rows[{rows}](dx, dd, dout, n, kBlock);
    auto out = poisoned<float>(x.size());
    divide_rows[{rows}].with(kCpu)(x, divisors, out, n, kBlock);
    EXPECT_TRUE(same_or_both_nan(dout.to_host(), out, x));
  }
}

TEST(GpuMinMax, SignedZerosAndNansMatchTheCpuBackend) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int n = 999, rows = 6;
  const float nan = std::nanf(""), payload = from_bits(0x7fa00001u);
  std::vector<float> x(size_t(rows) * n), y(x.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < n; ++c) {
      float &a = x[size_t(r) * n + c], &b = y[size_t(r) * n + c];
      // Row 0: random; 1: zeros of both signs; 2: -0 only, with NaNs;
      // 3: NaNs everywhere (payloads differ); 4: +0 beside -0 and
      // negatives; 5: mixed specials.
      switch (r) {
      case 0:
        a = random_values<float>(1, -5, 5)[0];
        b = random_values<float>(1, -5, 5)[0];
        break;
      case 1:
        a = c % 2 ? 0.0f : -0.0f;
        b = c % 3 ? -0.0f : 0.0f;
        break;
      case 2:
        a = c % 5 ? -0.0f : nan;
        b = c % 7 ? -0.0f : -payload;
        break;
      case 3:
        a = c % 2 ? nan : -nan;
        b = c % 3 ? payload : -payload;
        break;
      case 4:
        a = c == n / 2 ? 0.0f : -1.0f - c;
        b = c == n / 3 ? -0.0f : 1.0f + c;
        break;
      default: {
        const float specials[] = {0.0f,      -0.0f,    INFINITY,  -INFINITY,
                                  nan,       -payload, 0x1p-149f, -0x1p-149f,
                                  0x1p-126f, 3.0f};
        a = specials[c % 10];
        b = specials[(c * 7 + 3) % 10];
      }
      }
    }
  DeviceBuffer<float> dx(x), dy(y);
  auto dout = poisoned_on_gpu<float>(2 * x.size());
  auto drow = poisoned_on_gpu<float>(2 * rows);
  min_max_rows[{rows}](dx, dy, dout, drow, n, kBlock);
  auto out = poisoned<float>(2 * x.size());
  auto row_out = poisoned<float>(2 * rows);
  min_max_rows[{rows}].with(kCpu)(x, y, out, row_out, n, kBlock);
  EXPECT_TRUE(same_bits(dout.to_host(), out));
  std::vector<float> gpu_rows = drow.to_host();
  // An all-NaN row's maximum is some NaN of the row, which depends on the
  // combining order; every other result has one right answer.
  for (size_t i = 0; i < gpu_rows.size(); ++i) {
    if (std::isnan(row_out[i])) {
      EXPECT_TRUE(std::isnan(gpu_rows[i])) << "row result " << i;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(gpu_rows[i]),
                std::bit_cast<uint32_t>(row_out[i]))
          << "row result " << i;
    }
  }
}

TEST(GpuMinMax, UnobservedZeroSignsStillMatchTheCpuBackend) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int n = 997, rows = 5;
  std::vector<float> x(size_t(rows) * n), y(x.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < n; ++c) {
      float &a = x[size_t(r) * n + c], &b = y[size_t(r) * n + c];
      // Rows 0, 1: zeros of both signs among negatives (maximum 0) and
      // positives (minimum 0); 2: -0 only; 3: +0 only; 4: random.
      const float zero = r == 2         ? -0.0f
                         : r == 3       ? 0.0f
                         : (c % 3 == 0) ? 0.0f
                                        : -0.0f;
      a = r == 4       ? random_values<float>(1, -5, 5)[0]
          : c % 4 == 1 ? zero
                       : -1.0f - float(c);
      b = r == 4       ? random_values<float>(1, -5, 5)[0]
          : c % 5 == 2 ? -zero
                       : 1.0f + float(c);
    }
  DeviceBuffer<float> dx(x), dy(y);
  auto dout = poisoned_on_gpu<float>(4 * x.size());
  zero_sign_blind_rows[{rows}](dx, dy, dout, n, kBlock);
  auto out = poisoned<float>(4 * x.size());
  zero_sign_blind_rows[{rows}].with(kCpu)(x, y, out, n, kBlock);
  std::vector<float> gpu = dout.to_host();
  for (int r = 0; r < rows; ++r) {
    const size_t base = size_t(4 * r) * n;
    // The flags and the stored maximum bit for bit; exp within its ulps.
    for (size_t i = 0; i < size_t(n); ++i) {
      for (int part : {0, 1, 3})
        ASSERT_EQ(std::bit_cast<uint32_t>(gpu[base + part * n + i]),
                  std::bit_cast<uint32_t>(out[base + part * n + i]))
            << "row " << r << " part " << part << " col " << i;
      ASSERT_NEAR(gpu[base + 2 * n + i], out[base + 2 * n + i],
                  5e-7f * std::fabs(out[base + 2 * n + i]))
          << "row " << r << " exp col " << i;
    }
  }
}

TEST(GpuMinMaxPtx, ZeroSignsNothingSeesTakeNoFix) {
  std::vector<float> f;
  const ir::Function &k =
      specialization(zero_sign_blind_rows, f, f, f, 1000, kBlock);
  expect_ptx_assembles(k);
  std::string ptx = ptx_for(k);
  EXPECT_THAT(ptx, ::testing::HasSubstr("max.f32"));
  EXPECT_THAT(ptx, ::testing::HasSubstr("min.f32"));
  // Only the stored elementwise maximum keeps the fix: one unsigned
  // minimum of the bits (a compare and select, integer_min_max_as_selects.h)
  // per element the thread holds, none in the row reductions.
  const ir::Function &stored =
      specialization(min_max_rows, f, f, f, f, 1000, kBlock);
  auto count = [](const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos;
         at = text.find(what, at + 1))
      ++n;
    return n;
  };
  // 1024 elements over 128 threads: 8 per thread.
  EXPECT_EQ(count(ptx, "setp.lt.u32"), 8u);
  EXPECT_GT(count(ptx_for(stored), "setp.lt.u32"), 8u);
}

TEST(GpuDividePtx, OneReciprocalPerThreadAndNoDivRn) {
  std::vector<float> f;
  const ir::Function &k = specialization(divide_rows, f, f, f, 1000, kBlock);
  expect_ptx_assembles(k);
  std::string ptx = ptx_for(k);
  EXPECT_THAT(ptx, ::testing::HasSubstr("rcp.rn.f32"));
  EXPECT_THAT(ptx, ::testing::Not(::testing::HasSubstr("div.rn.f32")));
  EXPECT_THAT(ptx, ::testing::HasSubstr("rcp.approx.ftz.f64"));
}

TEST(GpuMinMaxPtx, MaximumIsMaxF32AndKeepsNanBitsWhereStored) {
  std::vector<float> f;
  const ir::Function &k =
      specialization(min_max_rows, f, f, f, f, 1000, kBlock);
  expect_ptx_assembles(k);
  std::string ptx = ptx_for(k);
  EXPECT_THAT(ptx, ::testing::HasSubstr("max.f32"));
  EXPECT_THAT(ptx, ::testing::HasSubstr("setp.lt.u32"));
  // Stored results keep their NaN: the select on x's NaN stays.
  EXPECT_THAT(ptx, ::testing::HasSubstr("setp.nan.f32"));
}

} // namespace
