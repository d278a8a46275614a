// Tutorial 07: GeLU (tanh approximation) in one fused pass, in float32 and
// in half storage. The kernels are in gelu.h (Python calls them as
// blocc.kernels.gelu and gelu_f16); this program checks them against a
// float64 GeLU on every backend at several sizes and times them.
#include "common/tutorial.h"
#include "gelu.h"

namespace bl = blocc;
namespace tutorial = blocc::tutorial;

using blocc::tutorials::gelu;
using blocc::tutorials::gelu_f16;

double float64_gelu(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

// Runs one kernel on inputs of type T at several sizes.
template <typename T, typename Kernel, typename Backend>
void check_gelu(Backend &on, Kernel &kernel, const char *dtype,
                tutorial::Tolerance tolerance) {
  // 1, primes, and sizes that are not multiples of BLOCK.
  for (int n : {1, 13, 1021, 98431, 1 << 24}) {
    // Both tails and the curved middle.
    auto x = tutorial::random_uniform<T>(n, -6, 6);
    std::vector<double> want(n);
    for (int i = 0; i < n; ++i)
      want[i] = float64_gelu(float(x[i])); // of the rounded input
    auto x_on = on.copy(x);
    auto out = on.copy(tutorial::poisoned<T>(n));
    const int block = 1024;
    on.row(
        std::string(dtype) + " " + std::to_string(n), 2.0 * n * sizeof(T),
        [&] { kernel[{bl::cdiv(n, block)}](x_on, out, n, block); },
        [&](tutorial::Check &check) {
          check("out", on.read(out), want, tolerance);
        });
  }
}

int main() {
  tutorial::Tutorial t("07-gelu");
  t.run([&](auto &on) {
    // About ten float32 roundings relative to the result, plus where
    // 1 + tanh cancels (x << 0): tanh's error, an ulp of 1 (6e-8), times
    // 0.5 |x| <= 3.
    const tutorial::Tolerance f32{2e-6, 3e-7};
    check_gelu<float>(on, gelu, "f32", f32);
    // The float32 result, then one rounding to half: 2^-11 relative, and
    // the spacing of half's subnormals (2^-24) near zero.
    check_gelu<bl::half>(on, gelu_f16, "f16",
                         {f32.rtol + 0x1p-11, f32.atol + 0x1p-24});
  });
  return t.finish();
}
