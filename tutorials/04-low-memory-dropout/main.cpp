// Tutorial 04: low-memory dropout, the mask recomputed from a seed. The
// kernels are in seeded_dropout.h (Python calls them as
// blocc.kernels.seeded_dropout and seeded_dropout4x); this program checks
// them element by element against a host Philox on every backend, checks
// that a rerun with the same seed gives the same bits, and times them.
#include "common/tutorial.h"
#include "seeded_dropout.h"

#include <array>
#include <bit>

namespace bl = blocc;
namespace tutorial = blocc::tutorial;

using blocc::tutorials::seeded_dropout;
using blocc::tutorials::seeded_dropout4x;

// The four words of Philox 4x32 with ten rounds on the counter
// (counter, 0, 0, 0) and the key (seed sign-extended to 64 bits), from the
// Random123 paper (Salmon et al., SC'11): what bl::randint4x(seed, counter)
// computes (frontend/blocc/random.h).
std::array<uint32_t, 4> host_philox(int32_t seed, int32_t counter) {
  uint32_t c0 = uint32_t(counter), c1 = 0, c2 = 0, c3 = 0;
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
  return {c0, c1, c2, c3};
}

// A word folded to [0, 2^31) and scaled into [0, 1), as
// bl::uint_to_uniform_float does.
float host_uniform(uint32_t word) {
  int32_t folded = std::bit_cast<int32_t>(word);
  if (folded < 0)
    folded = -(folded + 1);
  return float(folded) * 4.6566127342e-10f;
}

// bl::rand(seed, i): the first word; and what seeded_dropout4x draws for
// element i: word i % 4 of the counter i / 4.
float host_rand(int32_t seed, int32_t i) {
  return host_uniform(host_philox(seed, i)[0]);
}
float host_rand4x(int32_t seed, int32_t i) {
  return host_uniform(host_philox(seed, i / 4)[size_t(i % 4)]);
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
      auto x_on = on.copy(x);
      const int block = 1024;
      auto check_kernel = [&](auto &kernel, const std::string &name,
                              float (*draw)(int32_t, int32_t)) {
        std::vector<double> want(n);
        for (int i = 0; i < n; ++i)
          want[i] = draw(seed, i) > p ? double(x[i]) / (1.0 - p) : 0.0;
        auto out = on.copy(tutorial::poisoned<float>(n));
        auto dropout = [&](auto &result) {
          kernel[{bl::cdiv(n, block)}](x_on, result, n, p, seed, block);
        };
        on.row(
            name, 2.0 * n * sizeof(float), [&] { dropout(out); },
            [&](tutorial::Check &check) {
              // Kept: 1 - p and the division round once each in float32.
              auto got = on.read(out);
              check("out", got, want, {2 * 0x1p-24, 0});
              // The mask is a function of (seed, offset) alone: a second
              // run with the same seed gives the same bits.
              auto again = on.copy(tutorial::poisoned<float>(n));
              dropout(again);
              check("rerun", on.read(again),
                    std::vector<double>(got.begin(), got.end()), {0, 0});
            });
      };
      check_kernel(seeded_dropout, std::to_string(n), host_rand);
      check_kernel(seeded_dropout4x, std::to_string(n) + " 4x", host_rand4x);
    }
  });
  return t.finish();
}
