// Tutorial 09: the mean of a large vector as a two-stage reduction. The
// kernel is in mean.h (Python calls it as blocc.kernels.partial_sums); this
// program checks the mean against a float64 sum on every backend, up to
// 2^26 elements, and times both stages together.
#include "common/tutorial.h"
#include "mean.h"

#include <algorithm>

namespace bl = blocc;
namespace tutorial = blocc::tutorial;

using blocc::tutorials::partial_sums;

int main() {
  tutorial::Tutorial t("09-mean");
  t.run([&](auto &on) {
    const int block = 1024;
    // 1, primes, sizes that are not multiples of BLOCK, and a large one.
    for (int n : {1, 1021, 1000003, (1 << 26) + 17}) {
      auto x = tutorial::random_uniform(n, -1, 3);
      double sum = 0, sum_abs = 0;
      for (float v : x) {
        sum += v;
        sum_abs += std::fabs(v);
      }
      // Stage one's programs: a few per processor, none without a block.
      const int programs = std::min(bl::cdiv(n, block), 4 * on.processors());
      auto x_on = on.copy(x);
      auto partials = on.copy(tutorial::poisoned<float>(programs));
      auto mean = on.copy(tutorial::poisoned<float>(1));
      on.row(
          std::to_string(n), 4.0 * n,
          [&] {
            partial_sums[{programs}](x_on, partials, n, 1.0f, block);
            partial_sums[{1}](partials, mean, programs, 1.0f / n, block);
          },
          [&](tutorial::Check &check) {
            // Each element passes through at most `chain` float32
            // additions: one per block its lane adds after it in stage one,
            // then two reductions of BLOCK lanes and a lane's partials in
            // stage two. Rounding errors (2^-24 of a running sum each)
            // have random signs, so they grow like sqrt(chain) (Higham and
            // Mary, 2019); 8 times that, relative to mean(|x|), is a bound
            // a correct kernel practically never exceeds. The scale 1/n,
            // rounded to float, and the product add two roundings.
            double chain = bl::cdiv(n, programs * block) + 2 * block +
                           bl::cdiv(programs, block);
            check("mean", on.read(mean), {sum / n},
                  {2 * 0x1p-24, 8 * std::sqrt(chain) * 0x1p-24 * sum_abs / n});
          });
    }
  });
  return t.finish();
}
