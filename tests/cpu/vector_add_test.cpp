// Vector add on both backends, at sizes that are not multiples of the
// block, and f32 results checked exactly (one rounding of an exact sum).
#include "cpu/support.h"

namespace bl = blocc;
using namespace blocc::cpu_testing;

namespace {

auto add_kernel = bl::kernel("add", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                       bl::Ptr<float> out, bl::i32 n,
                                       bl::Const<int> BLOCK) {
  auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offsets < n;
  bl::store(out + offsets,
            bl::load(x + offsets, mask) + bl::load(y + offsets, mask), mask);
});

class CpuVectorAdd : public ::testing::TestWithParam<int> {};

TEST_P(CpuVectorAdd, MatchesInterpreterAndHost) {
  BLOCC_SEED_TRACE();
  int n = GetParam();
  auto x = random_values<float>(n, -1, 1), y = random_values<float>(n, -1, 1);
  auto cpu = poisoned<float>(n), interpreter = poisoned<float>(n);
  add_kernel[{bl::cdiv(n, 128)}].with(kCpu)(x, y, cpu, n, 128);
  add_kernel[{bl::cdiv(n, 128)}].with(kInterpreter)(x, y, interpreter, n, 128);
  EXPECT_TRUE(same(cpu, interpreter));
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i)
    want[i] = static_cast<float>(double(x[i]) + double(y[i]));
  EXPECT_TRUE(close(cpu, want, 0, 0));
}

INSTANTIATE_TEST_SUITE_P(OddSizes, CpuVectorAdd,
                         ::testing::Values(1, 2, 7, 127, 128, 129, 1000, 1031,
                                           4096));

} // namespace
