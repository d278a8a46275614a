// Mistakes with Philox random numbers (bl::rand, bl::randint, bl::randn),
// checked through a launch. (tests/unit/random_test.cpp covers every
// message variant.)
#include "error/support.h"

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

TEST(RandomErrors, SeedIsABlock) {
  static int line;
  auto k = bl::kernel("seed_block", [](bl::Ptr<float> out, bl::i32 seed) {
    auto offs = bl::arange(0, 16);
    auto r = (line = __LINE__, bl::rand(seed + offs, offs));
    bl::store(out + offs, r);
  });
  std::string msg = run_out(k, 16, 42);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::rand: the seed must be a scalar, got "
                             "tensor<16xi32>"));
  EXPECT_THAT(msg, HasSubstr("vary the offsets per element"));
}

TEST(RandomErrors, SeedIsAFloat) {
  static int line;
  auto k = bl::kernel("seed_float", [](bl::Ptr<float> out, bl::f32 seed) {
    auto offs = bl::arange(0, 16);
    auto r = (line = __LINE__, bl::randn(seed, offs));
    bl::store(out + offs, r);
  });
  std::string msg = run_out(k, 16, 42);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::randn: the seed must be an integer, got "
                             "f32"));
}

TEST(RandomErrors, OffsetsAreFloats) {
  static int line;
  auto k = bl::kernel("offsets_float", [](bl::Ptr<float> out, bl::i32 seed) {
    auto offs = bl::arange(0, 16);
    auto where = bl::cast(offs, bl::float32);
    auto r = (line = __LINE__, bl::randint(seed, where));
    bl::store(out + offs, r);
  });
  std::string msg = run_out(k, 16, 42);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::randint: the offsets must be integers, got "
                             "tensor<16xf32>"));
}

TEST(RandomErrors, ZeroRounds) {
  static int line;
  auto k = bl::kernel("zero_rounds", [](bl::Ptr<float> out, bl::i32 seed) {
    auto offs = bl::arange(0, 16);
    auto r = (line = __LINE__, bl::rand(seed, offs, 0));
    bl::store(out + offs, r);
  });
  std::string msg = run_out(k, 16, 42);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("n_rounds must be at least 1, got 0"));
}

} // namespace
