// Tutorial 01: vector addition. The kernel is in vector_add.h (Python calls
// the same kernel as blocc.kernels.add); this program checks it against a
// float64 reference on every backend at several sizes, times it, and
// prints its IR.
#include "common/tutorial.h"
#include "vector_add.h"

namespace bl = blocc;
namespace tutorial = blocc::tutorial;

using blocc::tutorials::add;

int main() {
  tutorial::Tutorial t("01-vector-add");
  t.run([&](auto &on) {
    // 1, primes, and sizes that are not multiples of BLOCK.
    for (int n : {1, 97, 1000, 98431, 1 << 24}) {
      auto x = tutorial::random_uniform(n, -1, 1);
      auto y = tutorial::random_uniform(n, -1, 1);
      std::vector<double> want(n);
      for (int i = 0; i < n; ++i)
        want[i] = double(x[i]) + double(y[i]);
      auto x_on = on.copy(x), y_on = on.copy(y);
      auto out = on.copy(tutorial::poisoned<float>(n));
      const int block = 1024;
      on.row(
          std::to_string(n), 3.0 * n * sizeof(float),
          [&] { add[{bl::cdiv(n, block)}](x_on, y_on, out, n, block); },
          [&](tutorial::Check &check) {
            // One float32 addition, correctly rounded: half an ulp.
            check("out", on.read(out), want, {0x1p-24, 0});
          });
    }
  });
  std::printf("\nThe kernel's IR after the generic passes (n = 98431):\n%s",
              add.ir_for(static_cast<float *>(nullptr),
                         static_cast<float *>(nullptr),
                         static_cast<float *>(nullptr), 98431, 1024)
                  .c_str());
  return t.finish();
}
