// Shape mistakes in elementwise ops: operands that do not broadcast.
// (Shape ops with their own rules, expand_dims, reshape, dot, have their
// tests in shape_op_errors_test.cpp and dot_errors_test.cpp.)
#include "error/support.h"

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

std::string run(auto &k) {
  std::vector<float> x(64, 1.f);
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { k[{1}](x, out); });
  EXPECT_TRUE(untouched(out)) << "the kernel wrote its output";
  return msg;
}

TEST(ShapeErrors, AddOfIncompatibleShapes) {
  static int line;
  auto k = bl::kernel("add_16_32", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto a = bl::load(x + bl::arange(0, 16));
    auto b = bl::load(x + bl::arange(0, 32));
    auto sum = (line = __LINE__, a + b);
    bl::store(out + bl::arange(0, 16), sum);
  });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator+: shapes [16] and [32] cannot be "
                             "broadcast together (16 vs 32 in dimension 0)"));
  EXPECT_THAT(msg, HasSubstr("make them equal, or 1 where a value should be "
                             "repeated (bl::expand_dims / bl::broadcast_to)"));
}

TEST(ShapeErrors, MultiplyOfIncompatible2DShapes) {
  static int line;
  auto k = bl::kernel("mul_2d", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto a = bl::zeros({4, 8}, bl::float32);
    auto b = bl::zeros({8, 4}, bl::float32);
    auto product = (line = __LINE__, a * b);
    (void)product;
  });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator*: shapes [4, 8] and [8, 4] cannot be "
                             "broadcast together (4 vs 8 in dimension 0)"));
}

TEST(ShapeErrors, TrailingDimensionsAlignFromTheRight) {
  // [4, 8] with [4]: numpy aligns 8 against 4, not 4 against 4.
  static int line;
  auto k = bl::kernel("sub_rank", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto a = bl::zeros({4, 8}, bl::float32);
    auto b = bl::load(x + bl::arange(0, 4));
    auto diff = (line = __LINE__, a - b);
    (void)diff;
  });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator-: shapes [4, 8] and [4] cannot be "
                             "broadcast together (8 vs 4 in dimension 1)"));
}

TEST(ShapeErrors, ComparisonOfIncompatibleShapes) {
  static int line;
  auto k = bl::kernel("lt_shapes", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto mask = (line = __LINE__, offs < bl::arange(0, 8));
    bl::store(out + offs, 1.f, mask);
  });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator<: shapes [16] and [8] cannot be "
                             "broadcast together"));
}

TEST(ShapeErrors, WhereOfIncompatibleShapes) {
  static int line;
  auto k = bl::kernel("where_shapes", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto v = bl::load(x + bl::arange(0, 32));
    auto picked = (line = __LINE__, bl::where(offs < 4, v, 0.f));
    bl::store(out + offs, picked);
  });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::where: shapes [16] and [32] cannot be "
                             "broadcast together"));
}

TEST(ShapeErrors, CompoundAssignmentOfIncompatibleShapes) {
  static int line;
  auto k = bl::kernel("iadd_shapes", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto acc = bl::zeros({16}, bl::float32);
    auto v = bl::load(x + bl::arange(0, 32));
    (line = __LINE__, acc += v);
    bl::store(out + bl::arange(0, 16), acc);
  });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator+: shapes [16] and [32] cannot be "
                             "broadcast together"));
}

} // namespace
