// GeLU, tanh form (seeds/003): y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715
// x^3))), an elementwise kernel over a flat vector, in f32 and in f16 storage
// with f32 arithmetic (how Triton kernels treat half inputs).
#include "e2e/support.h"

namespace bl = blocc;
using namespace blocc::testing;

namespace {

// sqrt(2 / pi) rounded to float, as a Triton kernel would write it.
constexpr float kSqrt2OverPi = 0.7978845608028654f;

template <typename T> auto make_gelu(const char *name) {
  return bl::kernel(
      name, [](bl::Ptr<T> x, bl::Ptr<T> out, bl::i32 n, bl::Const<int> BLOCK) {
        auto pid = bl::program_id(0);
        auto offsets = pid * BLOCK + bl::arange(0, BLOCK);
        auto mask = offsets < n;
        auto v = bl::load(x + offsets, mask).to(bl::float32);
        auto inner = kSqrt2OverPi * (v + 0.044715f * v * v * v);
        auto y = 0.5f * v * (1.0f + bl::tanh(inner));
        bl::store(out + offsets, y, mask); // converted to T by the store
      });
}

auto gelu_f32 = make_gelu<float>("gelu_tanh_f32");
auto gelu_f16 = make_gelu<bl::half>("gelu_tanh_f16");

double gelu_reference(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

// Inputs: uniform in [-6, 6] (both tails and the curved middle) plus values
// where GeLU is delicate: zeros, tiny, and large magnitudes of both signs.
std::vector<float> gelu_inputs(int n) {
  auto x = random_floats(n, -6, 6);
  const float special[] = {0.f,  -0.f,  1e-30f, -1e-30f, 1e-4f, -1e-4f,
                           10.f, -10.f, 40.f,   -40.f,   3.f,   -3.f};
  for (int i = 0; i < n && i < int(std::size(special)); ++i)
    x[(i * 7919) % n] = special[i];
  return x;
}

class GeluF32 : public ::testing::TestWithParam<int> {};

TEST_P(GeluF32, MatchesFloat64TanhForm) {
  const int n = GetParam(), block = 256;
  auto x = gelu_inputs(n);
  auto out = poisoned(n);
  gelu_f32[{bl::cdiv(n, block)}](x, out, n, block);
  for (int i = 0; i < n; ++i) {
    double want = gelu_reference(x[i]);
    // About ten f32 roundings (the cube, the sums, tanh) relative to the
    // operands' size, plus the cancellation in 1 + tanh(t) for x << 0:
    // there tanh's own error (an ulp of 1, ~6e-8) is multiplied by 0.5|x|.
    double tol = 2e-6 * std::abs(want) + 1e-7 * (1 + std::abs(double(x[i])));
    ASSERT_NEAR(out[i], want, tol)
        << "x[" << i << "] = " << x[i] << ", n = " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(OddSizes, GeluF32,
                         ::testing::Values(1, 2, 13, 255, 256, 257, 1000,
                                           4099));

class GeluF16 : public ::testing::TestWithParam<int> {};

TEST_P(GeluF16, HalfStorageFloatArithmetic) {
  const int n = GetParam(), block = 128;
  auto xf = gelu_inputs(n);
  std::vector<bl::half> x(n), out(n);
  for (int i = 0; i < n; ++i)
    x[i] = bl::half(xf[i]);
  for (auto &o : out)
    o = bl::half(std::numeric_limits<float>::quiet_NaN());
  gelu_f16[{bl::cdiv(n, block)}](x, out, n, block);
  for (int i = 0; i < n; ++i) {
    double xi = float(x[i]); // the reference sees the rounded input
    double want = gelu_reference(xi);
    // The f32 computation's own error (as in GeluF32, which matters where
    // 1 + tanh cancels for x << 0), then the final rounding to f16: half an
    // ulp (2^-11 relative), and below the normal range (|y| < 2^-14) the
    // subnormal spacing 2^-24 as an absolute floor.
    double f32_tol = 2e-6 * std::abs(want) + 1e-7 * (1 + std::abs(xi));
    double tol =
        f32_tol + std::ldexp(1.0, -11) * std::abs(want) + std::ldexp(1.0, -24);
    ASSERT_NEAR(float(out[i]), want, tol) << "x[" << i << "] = " << xi;
  }
}

INSTANTIATE_TEST_SUITE_P(OddSizes, GeluF16,
                         ::testing::Values(1, 3, 127, 129, 1021));

} // namespace
