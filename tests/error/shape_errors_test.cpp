// Shape mistakes: operands of elementwise ops that do not broadcast, and
// misuses of the shape ops (expand_dims, broadcast_to, reshape, permute,
// trans, join, split, cat). Dot's shape rules are in dot_errors_test.cpp.
#include "error/support.h"

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

TEST(ShapeErrors, AddOfIncompatibleShapes) {
  static int line;
  auto k = bl::kernel("add_16_32", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto a = bl::load(x + bl::arange(0, 16));
    auto b = bl::load(x + bl::arange(0, 32));
    auto sum = (line = __LINE__, a + b);
    bl::store(out + bl::arange(0, 16), sum);
  });
  std::string msg = run_x_out(k, 64);
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
  std::string msg = run_x_out(k, 64);
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
  std::string msg = run_x_out(k, 64);
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
  std::string msg = run_x_out(k, 64);
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
  std::string msg = run_x_out(k, 64);
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
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator+: shapes [16] and [32] cannot be "
                             "broadcast together"));
}

// ------------------------------------------------------------- shape ops

TEST(ShapeErrors, ReshapeChangesTheElementCount) {
  static int line;
  auto k =
      bl::kernel("reshape_count", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto v = bl::load(x + bl::arange(0, 32));
        auto square = (line = __LINE__, bl::reshape(v, {4, 4}));
        bl::store(out + bl::arange(0, 16), bl::reshape(square, {16}));
      });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::reshape: cannot reshape tensor<32xf32> (32 "
                             "elements) to [4, 4] (16 elements); the element "
                             "count must stay the same"));
}

TEST(ShapeErrors, ReshapeToANonPowerOfTwoDimension) {
  static int line;
  auto k = bl::kernel("reshape_pow2", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto v = bl::load(x + bl::arange(0, 16));
    auto odd = (line = __LINE__, bl::reshape(v, {3, 5}));
    (void)odd;
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::reshape: every dimension of a block must be "
                             "a power of two, got [3, 5]; round the size up "
                             "to a power of two and mask the extra elements"));
}

TEST(ShapeErrors, ReshapeOfABlockToAScalar) {
  static int line;
  auto k =
      bl::kernel("reshape_scalar", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto v = bl::load(x + bl::arange(0, 1));
        auto s = (line = __LINE__, bl::reshape(v, {}));
        bl::store(out, s);
      });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("cannot reshape tensor<1xf32> to a scalar"));
  EXPECT_THAT(msg, HasSubstr("bl::sum(x)"));
}

TEST(ShapeErrors, PermuteWithARepeatedDimension) {
  static int line;
  auto k =
      bl::kernel("permute_repeat", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto tile = bl::zeros({4, 8}, bl::float32);
        auto p = (line = __LINE__, bl::permute(tile, {0, 0}));
        (void)p;
      });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::permute: [0, 0] is not a permutation of the "
                             "dimensions of tensor<4x8xf32>; list each of 0 "
                             "to 1 exactly once"));
}

TEST(ShapeErrors, PermuteWithTheWrongNumberOfDimensions) {
  static int line;
  auto k = bl::kernel("permute_rank", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto tile = bl::zeros({4, 8}, bl::float32);
    auto p = (line = __LINE__, bl::permute(tile, {2, 0, 1}));
    (void)p;
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("[2, 0, 1] is not a permutation of the "
                             "dimensions of tensor<4x8xf32>"));
}

TEST(ShapeErrors, TransWithoutOrderOfA1DBlock) {
  static int line;
  auto k = bl::kernel("trans_1d", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto v = bl::load(x + bl::arange(0, 16));
    auto t = (line = __LINE__, bl::trans(v));
    bl::store(out + bl::arange(0, 16), t);
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::trans without an order transposes a 2-D "
                             "block, got tensor<16xf32>"));
}

TEST(ShapeErrors, ExpandDimsAxisOutOfRange) {
  static int line;
  auto k = bl::kernel("expand_axis", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto v = bl::load(x + bl::arange(0, 16));
    auto e = (line = __LINE__, bl::expand_dims(v, 2));
    (void)e;
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::expand_dims: axis 2 is out of range for "
                             "tensor<16xf32> (rank 1); use an axis from -2 "
                             "to 1"));
}

TEST(ShapeErrors, ExpandDimsBeyondThreeDimensions) {
  static int line;
  auto k = bl::kernel("expand_rank", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto cube = bl::zeros({2, 2, 2}, bl::float32);
    auto e = (line = __LINE__, bl::expand_dims(cube, 0));
    (void)e;
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::expand_dims: tensor<2x2x2xf32> already has "
                             "rank 3 and blocks have at most 3 dimensions"));
}

TEST(ShapeErrors, BroadcastToAnIncompatibleShape) {
  static int line;
  auto k =
      bl::kernel("broadcast_shape", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto v = bl::load(x + bl::arange(0, 16));
        auto b = (line = __LINE__, bl::broadcast_to(v, {16, 8}));
        (void)b;
      });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::broadcast_to: cannot broadcast "
                             "tensor<16xf32> to [16, 8]: dimension 0 has size "
                             "16 but the target has 8; only dimensions of "
                             "size 1 can grow (insert them with "
                             "bl::expand_dims)"));
}

TEST(ShapeErrors, BroadcastToALowerRank) {
  static int line;
  auto k =
      bl::kernel("broadcast_rank", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto tile = bl::zeros({1, 16}, bl::float32);
        auto b = (line = __LINE__, bl::broadcast_to(tile, {16}));
        (void)b;
      });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("cannot broadcast tensor<1x16xf32> to the "
                             "lower-rank shape [16]"));
  EXPECT_THAT(msg, HasSubstr("use bl::reshape to drop dimensions"));
}

TEST(ShapeErrors, JoinOfDifferentElementTypes) {
  static int line;
  auto k = bl::kernel("join_dtypes", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto v = bl::load(x + bl::arange(0, 16));
    auto j = (line = __LINE__, bl::join(v, bl::arange(0, 16)));
    (void)j;
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::join: tensor<16xf32> and tensor<16xi32> "
                             "differ in element type; convert one with "
                             ".to(...) so that both match"));
}

TEST(ShapeErrors, JoinOfShapesThatDoNotBroadcast) {
  static int line;
  auto k = bl::kernel("join_shapes", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto a = bl::load(x + bl::arange(0, 16));
    auto b = bl::load(x + bl::arange(0, 32));
    auto j = (line = __LINE__, bl::join(a, b));
    (void)j;
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::join: shapes [16] and [32] cannot be "
                             "broadcast together"));
}

TEST(ShapeErrors, SplitOfALastDimensionOtherThanTwo) {
  static int line;
  auto k = bl::kernel("split_dim", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto tile = bl::zeros({8, 4}, bl::float32);
    auto halves = (line = __LINE__, bl::split(tile));
    (void)halves;
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::split: tensor<8x4xf32> cannot be split; it "
                             "needs a last dimension of size 2"));
}

TEST(ShapeErrors, CatOfDifferentShapes) {
  static int line;
  auto k = bl::kernel("cat_shapes", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto a = bl::load(x + bl::arange(0, 16));
    auto b = bl::load(x + bl::arange(0, 8));
    auto c = (line = __LINE__, bl::cat(a, b));
    (void)c;
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::cat: tensor<16xf32> and tensor<8xf32> differ "
                             "in shape; bl::cat needs blocks of one shape"));
}

} // namespace
