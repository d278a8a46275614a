// Math the GPU computes its own way (backends/nvptx/lower_math.cpp): f32
// exp and exp2 within 3 ulp of the correctly rounded result (and within 4
// of the CPU backend's), over random arguments and the edges (zeros,
// infinities, NaN, results that are subnormal, underflow to 0 or overflow);
// f16/bf16 <-> f32 conversions bit for bit as the CPU backend makes them,
// NaNs (with payloads) and subnormals included. Skipped (reported as skipped)
// where no GPU is present; the PTX is ptxas-assembled everywhere.
#include "nvptx/support.h"

#include <bit>

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
  EXPECT_THAT(ptx_for(e), ::testing::HasSubstr("ex2.approx.f32"));
  const ir::Function &c =
      specialization(conversions, f, u, u, h, b, f, f, 1000, 512);
  expect_ptx_assembles(c);
  std::string ptx = ptx_for(c);
  EXPECT_THAT(ptx, ::testing::HasSubstr("cvt.rn.f16.f32"));
  EXPECT_THAT(ptx, ::testing::HasSubstr("cvt.rn.bf16.f32"));
}

} // namespace
