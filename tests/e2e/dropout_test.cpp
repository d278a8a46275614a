// Dropout with counter-based random numbers (Triton's tutorial 03, "low
// memory dropout"): the mask is never stored; it is recomputed from (seed,
// element offset) by Philox wherever it is needed. An element is kept when
// its uniform number is above p and then scaled by 1 / (1 - p), so that the
// expected value of the output equals the input.
//
// The mask is checked element by element against a host Philox 4x32-10
// written here from the Random123 paper (not from blocc's frontend), mapped
// to [0, 1) the way triton.language.random does; then the statistics a user
// relies on: the same seed gives the same mask, another seed another mask,
// and the kept fraction is 1 - p within sampling error.
#include "e2e/support.h"

#include <bit>

namespace bl = blocc;
using namespace blocc::testing;

namespace {

auto dropout =
    bl::kernel("dropout", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n,
                             bl::f32 p, bl::i32 seed, bl::Const<int> BLOCK) {
      auto pid = bl::program_id(0);
      auto offsets = pid * BLOCK + bl::arange(0, BLOCK);
      auto mask = offsets < n;
      auto v = bl::load(x + offsets, mask);
      auto keep = bl::rand(seed, offsets) > p;
      bl::store(out + offsets, bl::where(keep, v / (1 - p), 0.0f), mask);
    });

// ------------------------------------------------- host Philox 4x32-10
// Salmon et al., SC'11: ten rounds of two 32x32->64 multiplications on a
// 128-bit counter, keyed by a 64-bit key bumped by the Weyl constants.
uint32_t host_philox_first_word(uint64_t key, uint32_t counter) {
  uint32_t c[4] = {counter, 0, 0, 0};
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(0xD2511F53u) * c[0];
    uint64_t p1 = uint64_t(0xCD9E8D57u) * c[2];
    uint32_t next[4] = {uint32_t(p1 >> 32) ^ c[1] ^ k0, uint32_t(p1),
                        uint32_t(p0 >> 32) ^ c[3] ^ k1, uint32_t(p0)};
    std::copy(next, next + 4, c);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c[0];
}

/// tl.rand of one offset: a signed seed is sign-extended to the 64-bit key;
/// the uint32 word is folded to [0, 2^31) as a signed value (x < 0 ? -x - 1
/// : x, i.e. ~x) and scaled in float32 by 4.6566127342e-10.
float host_uniform(int32_t seed, int32_t offset) {
  uint32_t word =
      host_philox_first_word(uint64_t(int64_t(seed)), uint32_t(offset));
  int32_t s = std::bit_cast<int32_t>(word);
  if (s < 0)
    s = ~s;
  return float(s) * 4.6566127342e-10f;
}

std::vector<float> run(const std::vector<float> &x, float p, int32_t seed,
                       int block = 256) {
  int n = int(x.size());
  auto out = poisoned(n);
  dropout[{bl::cdiv(n, block)}](x, out, n, p, seed, block);
  return out;
}

int32_t random_seed() {
  return random_ints<int32_t>(1, INT32_MIN, INT32_MAX)[0];
}

// Inputs bounded away from zero, so that "kept" and "dropped" cannot be
// confused in the output.
std::vector<float> dropout_inputs(int n) {
  auto x = random_floats(n, 0.25f, 2.0f);
  auto sign = random_ints<int>(n, 0, 1);
  for (int i = 0; i < n; ++i)
    if (sign[i])
      x[i] = -x[i];
  return x;
}

struct DropoutCase {
  int n;
  float p;
};

class Dropout : public ::testing::TestWithParam<DropoutCase> {};

TEST_P(Dropout, MaskMatchesHostPhiloxAndKeptValuesAreScaled) {
  auto [n, p] = GetParam();
  auto x = dropout_inputs(n);
  int32_t seed = random_seed();
  SCOPED_TRACE("seed = " + std::to_string(seed));
  auto out = run(x, p, seed);
  for (int i = 0; i < n; ++i) {
    bool keep = host_uniform(seed, i) > p;
    if (!keep) {
      ASSERT_EQ(out[i], 0.0f) << "element " << i << " should be dropped";
      continue;
    }
    // 1 - p and the division each round once in f32: 2^-24 relative each.
    double want = double(x[i]) / (1.0 - double(p));
    ASSERT_NEAR(out[i], want, 2.5e-7 * std::abs(want))
        << "element " << i << " kept";
  }
}

TEST_P(Dropout, SameSeedSameMaskOtherSeedOtherMask) {
  auto [n, p] = GetParam();
  auto x = dropout_inputs(n);
  int32_t seed = random_seed(), other = seed ^ 0x5bd1e995;
  auto a = run(x, p, seed), b = run(x, p, seed), c = run(x, p, other);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i]))
        << "the same seed gave another output at element " << i;
  if (n < 1000 || p == 0.0f)
    return; // too few draws for the next check to be meaningful
  int differ = 0;
  for (int i = 0; i < n; ++i)
    differ += (a[i] == 0) != (c[i] == 0);
  // Independent masks differ at about 2p(1-p) of the positions; requiring
  // half of that is many standard deviations below the mean.
  EXPECT_GT(differ, n * p * (1 - p)) << "seeds " << seed << " and " << other;
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, Dropout,
    ::testing::Values(DropoutCase{1, 0.5f}, DropoutCase{17, 0.3f},
                      DropoutCase{255, 0.1f}, DropoutCase{257, 0.0f},
                      DropoutCase{1031, 0.9f}, DropoutCase{30011, 0.2f}));

TEST(DropoutStatistics, KeptFractionIsNearOneMinusP) {
  for (auto [n, p] : {DropoutCase{100003, 0.5f}, DropoutCase{30011, 0.2f},
                      DropoutCase{50021, 0.9f}}) {
    auto x = dropout_inputs(n);
    int32_t seed = random_seed();
    auto out = run(x, p, seed);
    int kept = 0;
    for (float o : out)
      kept += o != 0.0f;
    // Binomial(n, 1 - p): six standard deviations, so a correct kernel
    // fails about once in 10^9 runs.
    double sigma = std::sqrt(n * p * (1.0 - p));
    EXPECT_NEAR(kept, n * (1.0 - p), 6 * sigma)
        << "n = " << n << ", p = " << p << ", seed = " << seed;
  }
}

TEST(DropoutOffsets, MaskDependsOnTheOffsetNotOnTheBlocking) {
  // The same (seed, offset) gives the same number in whichever program
  // computes it, so the block size cannot change the output.
  const int n = 1001;
  auto x = dropout_inputs(n);
  int32_t seed = random_seed();
  auto a = run(x, 0.4f, seed, 64), b = run(x, 0.4f, seed, 1024);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i]))
        << "element " << i;
}

} // namespace
