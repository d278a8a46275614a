// Tutorial 04: low-memory dropout, the mask recomputed from a seed. The
// kernel is in seeded_dropout.h (Python calls it as
// blocc.kernels.seeded_dropout); this program checks it element by element
// against a host Philox on every backend, checks that a rerun with the
// same seed gives the same bits, and times it.
#include "common/tutorial.h"
#include "seeded_dropout.h"

#include <bit>

namespace bl = blocc;
namespace tutorial = blocc::tutorial;

using blocc::tutorials::seeded_dropout;

// What bl::rand(seed, offset) computes (frontend/blocc/random.h), from the
// Random123 paper (Salmon et al., SC'11): Philox 4x32 with ten rounds on
// the counter (offset, 0, 0, 0) and the key (seed sign-extended to 64
// bits), whose first word is folded to [0, 2^31) and scaled into [0, 1).
float host_rand(int32_t seed, int32_t offset) {
  uint32_t c0 = uint32_t(offset), c1 = 0, c2 = 0, c3 = 0;
  uint64_t key = uint64_t(int64_t(seed));
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t product0 = uint64_t(0xD2511F53u) * c0;
    uint64_t product2 = uint64_t(0xCD9E8D57u) * c2;
    uint32_t next0 = uint32_t(product2 >> 32) ^ c1 ^ k0;
    uint32_t next2 = uint32_t(product0 >> 32) ^ c3 ^ k1;
    c1 = uint32_t(product2);
    c3 = uint32_t(product0);
    c0 = next0;
    c2 = next2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  int32_t folded = std::bit_cast<int32_t>(c0);
  if (folded < 0)
    folded = -(folded + 1);
  return float(folded) * 4.6566127342e-10f;
}

int main() {
  tutorial::Tutorial t("04-low-memory-dropout");
  t.run([&](auto &on) {
    const float p = 0.3f;
    // 1, primes, and sizes that are not multiples of BLOCK.
    for (int n : {1, 17, 1031, 98431, 1 << 22}) {
      // Inputs away from zero, so that kept and dropped cannot be confused.
      auto x = tutorial::random_uniform(n, 0.25, 2);
      const int32_t seed = int32_t(tutorial::rng()());
      std::vector<double> want(n);
      for (int i = 0; i < n; ++i)
        want[i] = host_rand(seed, i) > p ? double(x[i]) / (1.0 - p) : 0.0;
      auto x_on = on.copy(x);
      auto out = on.copy(tutorial::poisoned<float>(n));
      const int block = 1024;
      auto dropout = [&](auto &result) {
        seeded_dropout[{bl::cdiv(n, block)}](x_on, result, n, p, seed, block);
      };
      on.row(
          std::to_string(n), 2.0 * n * sizeof(float), [&] { dropout(out); },
          [&](tutorial::Check &check) {
            // Kept: 1 - p and the division round once each in float32.
            auto got = on.read(out);
            check("out", got, want, {2 * 0x1p-24, 0});
            // The mask is a function of (seed, offset) alone: a second run
            // with the same seed gives the same bits.
            auto again = on.copy(tutorial::poisoned<float>(n));
            dropout(again);
            check("rerun", on.read(again),
                  std::vector<double>(got.begin(), got.end()), {0, 0});
          });
    }
  });
  return t.finish();
}
