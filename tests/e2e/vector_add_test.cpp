// Vector add, the first kernel of every tutorial, at sizes that are not a
// multiple of the block.
#include "e2e/support.h"

namespace bl = blocc;
using namespace blocc::testing;

namespace {

auto add_kernel = bl::kernel("add", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                       bl::Ptr<float> out, bl::i32 n,
                                       bl::Const<int> BLOCK) {
  auto pid = bl::program_id(0);
  auto offsets = pid * BLOCK + bl::arange(0, BLOCK);
  auto mask = offsets < n;
  bl::store(out + offsets,
            bl::load(x + offsets, mask) + bl::load(y + offsets, mask), mask);
});

class VectorAdd : public ::testing::TestWithParam<int> {};

TEST_P(VectorAdd, MatchesHostSum) {
  int n = GetParam();
  auto x = random_floats(n), y = random_floats(n);
  auto out = poisoned(n);
  add_kernel[{bl::cdiv(n, 128)}](x, y, out, n, 128);
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i)
    want[i] = double(x[i]) + double(y[i]);
  // One f32 rounding of an exact sum.
  EXPECT_TRUE(all_close(out, want, 1e-7, 0));
}

INSTANTIATE_TEST_SUITE_P(OddSizes, VectorAdd,
                         ::testing::Values(1, 2, 7, 127, 128, 129, 1000, 1031,
                                           4096));

TEST(VectorAddSpecialization, ConstantsSelectTraces) {
  std::vector<float> x(300, 1.f), y(300, 2.f), out(300);
  size_t before = add_kernel.num_specializations();
  add_kernel[{bl::cdiv(300, 64)}](x, y, out, 300, 64);
  add_kernel[{bl::cdiv(300, 64)}](x, y, out, 300, 64);
  add_kernel[{bl::cdiv(300, 256)}](x, y, out, 300, 256);
  EXPECT_EQ(add_kernel.num_specializations(), before + 2);
  for (float v : out)
    EXPECT_EQ(v, 3.f);
}

} // namespace
