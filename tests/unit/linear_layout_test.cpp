// Linear layouts over GF(2): blocked layouts built as products, broadcasts,
// an XOR-swizzled shared-memory layout, inverses and the conversions
// derived from them, each checked index by index against what the layout
// means, and the errors for layouts that cannot do what is asked.
#include "ir/error.h"
#include "ir/linear_layout.h"

#include <gtest/gtest.h>

namespace {

using blocc::ir::LinearLayout;
using Point = LinearLayout::Point;

/// Every index of `l`'s inputs, as points.
std::vector<Point> all_indices(const LinearLayout &l) {
  std::vector<Point> points = {{}};
  for (const LinearLayout::Dimension &d : l.inputs()) {
    std::vector<Point> next;
    for (const Point &p : points)
      for (int64_t v = 0; v < (int64_t{1} << d.bits); ++v) {
        Point q = p;
        q[d.name] = v;
        next.push_back(q);
      }
    points = next;
  }
  return points;
}

// size_per_thread 4, 32 lanes, 4 warps over 512 elements of one dimension.
LinearLayout blocked_1d() {
  return LinearLayout::identity("register", 2, "dim0") *
         LinearLayout::identity("lane", 5, "dim0") *
         LinearLayout::identity("warp", 2, "dim0");
}

TEST(LinearLayout, ABlockedLayoutNumbersRegistersThenLanesThenWarps) {
  LinearLayout l = blocked_1d();
  EXPECT_EQ(l.output_bits("dim0"), 9);
  for (const Point &p : all_indices(l)) {
    int64_t want = p.at("register") + 4 * p.at("lane") + 128 * p.at("warp");
    EXPECT_EQ(l.apply(p).at("dim0"), want) << l.str();
  }
  EXPECT_TRUE(l.is_invertible());
}

// A 32 x 16 tile, row-major order: 4 registers along dim1, lanes 4 along
// dim1 and 8 along dim0, 4 warps along dim0.
LinearLayout blocked_2d() {
  return LinearLayout::identity("register", 2, "dim1") *
         LinearLayout::identity("lane", 2, "dim1") *
         LinearLayout::identity("lane", 3, "dim0") *
         LinearLayout::identity("warp", 2, "dim0");
}

TEST(LinearLayout, ATwoDimensionalBlockedLayoutFollowsItsOrder) {
  LinearLayout l = blocked_2d();
  for (const Point &p : all_indices(l)) {
    int64_t r = p.at("register"), lane = p.at("lane"), w = p.at("warp");
    Point at = l.apply(p);
    EXPECT_EQ(at.at("dim1"), r + 4 * (lane & 3));
    EXPECT_EQ(at.at("dim0"), (lane >> 2) + 8 * w);
  }
}

TEST(LinearLayout, ABroadcastReplicatesTheBitsWhoseImageIsZero) {
  // 64 elements over 4 warps of 32 lanes: warps 0/2 and 1/3 hold the same.
  LinearLayout l = LinearLayout::identity("lane", 5, "dim0") *
                   LinearLayout::identity("warp", 1, "dim0") *
                   LinearLayout::zeros("warp", 1, "dim0");
  EXPECT_TRUE(l.is_surjective());
  EXPECT_FALSE(l.is_injective());
  EXPECT_EQ(l.replicated_bits(),
            (std::map<std::string, std::vector<int>>{{"warp", {1}}}));
  EXPECT_EQ(l.apply({{"lane", 7}, {"warp", 3}}).at("dim0"), 7 + 32);
  EXPECT_THROW(l.invert(), blocc::Error);
}

// Shared memory of 8 rows of 8 elements, each row's columns XOR-swizzled
// by the row: offset row * 8 + c holds (row, c ^ row).
LinearLayout swizzled() {
  std::vector<std::vector<int64_t>> images;
  for (int b = 0; b < 3; ++b)
    images.push_back({0, int64_t{1} << b}); // column bits
  for (int b = 0; b < 3; ++b)
    images.push_back({int64_t{1} << b, int64_t{1} << b}); // row, and XOR
  return LinearLayout::from_images({{"offset", 6}}, {{"dim0", 3}, {"dim1", 3}},
                                   {images});
}

TEST(LinearLayout, AnXorSwizzleIsLinearAndItsInverseFindsTheOffset) {
  LinearLayout l = swizzled();
  LinearLayout inverse = l.invert();
  for (int64_t row = 0; row < 8; ++row)
    for (int64_t c = 0; c < 8; ++c) {
      Point at = l.apply({{"offset", row * 8 + c}});
      EXPECT_EQ(at.at("dim0"), row);
      EXPECT_EQ(at.at("dim1"), c ^ row);
      EXPECT_EQ(inverse.apply({{"dim0", row}, {"dim1", c}}).at("offset"),
                row * 8 + (c ^ row));
    }
}

TEST(LinearLayout, AnInverseUndoesTheLayoutAtEveryIndex) {
  for (const LinearLayout &l : {blocked_1d(), blocked_2d(), swizzled()}) {
    LinearLayout round_trip = l.compose(l.invert());
    for (const Point &p : all_indices(l))
      EXPECT_EQ(round_trip.apply(p), p) << l.str();
  }
}

TEST(LinearLayout, AConversionFindsTheIndexThatHoldsTheSameElement) {
  // From 4 contiguous registers per lane to lanes contiguous, 4 registers
  // 128 apart.
  LinearLayout from = blocked_1d();
  LinearLayout to = LinearLayout::identity("lane", 5, "dim0") *
                    LinearLayout::identity("warp", 2, "dim0") *
                    LinearLayout::identity("register", 2, "dim0");
  LinearLayout conversion = from.invert_and_compose(to);
  for (const Point &p : all_indices(from))
    EXPECT_EQ(to.apply(conversion.apply(p)), from.apply(p));
  // Register bits of `from` become lane bits of `to`: a shuffle, not a
  // renumbering of registers.
  EXPECT_EQ(conversion.image("register", 0),
            (Point{{"lane", 1}, {"register", 0}, {"warp", 0}}));
}

TEST(LinearLayout, AConversionIntoABroadcastChoosesTheFirstReplica) {
  LinearLayout from = LinearLayout::identity("lane", 5, "dim0");
  LinearLayout to = LinearLayout::identity("lane", 5, "dim0") *
                    LinearLayout::zeros("warp", 2, "dim0");
  LinearLayout conversion = from.invert_and_compose(to);
  for (const Point &p : all_indices(from)) {
    Point q = conversion.apply(p);
    EXPECT_EQ(q.at("warp"), 0);
    EXPECT_EQ(to.apply(q), from.apply(p));
  }
}

TEST(LinearLayout, ProductsAndCompositionsKeepTheirDimensionsInOrder) {
  LinearLayout l = LinearLayout::identity("lane", 5, "dim0") *
                   LinearLayout::identity("warp", 2, "dim0");
  EXPECT_EQ(l.apply({{"lane", 3}, {"warp", 2}}).at("dim0"), 3 + 64);
  EXPECT_EQ(l, LinearLayout::identity("lane", 5, "dim0") *
                   LinearLayout::identity("warp", 2, "dim0"));
  EXPECT_FALSE(l == blocked_1d());
  // dim0 -> (dim0 / 8, dim0 % 8) as a reshape to 16 x 8, after l.
  LinearLayout reshape = LinearLayout::identity("dim0", 3, "d1") *
                         LinearLayout::identity("dim0", 4, "d0");
  LinearLayout reshaped = l.compose(reshape);
  Point at = reshaped.apply({{"lane", 13}, {"warp", 3}});
  EXPECT_EQ(at.at("d0"), (13 + 96) / 8);
  EXPECT_EQ(at.at("d1"), (13 + 96) % 8);
}

TEST(LinearLayout, LayoutsThatCannotDoWhatIsAskedSayWhy) {
  auto message = [](auto f) {
    try {
      f();
    } catch (const blocc::Error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] {
              LinearLayout::from_images({{"lane", 1}}, {{"dim0", 1}}, {{{2}}});
            }).find("outside output 'dim0'"),
            std::string::npos);
  EXPECT_NE(message([] {
              blocked_1d().compose(blocked_2d());
            }).find("cannot compose: output 'dim0'"),
            std::string::npos);
  EXPECT_NE(message([] {
              LinearLayout::zeros("lane", 2, "dim0", 1).invert();
            }).find("not invertible"),
            std::string::npos);
  EXPECT_NE(message([] {
              blocked_1d().apply({{"lane", 32}});
            }).find("outside input 'lane'"),
            std::string::npos);
  EXPECT_NE(message([] {
              LinearLayout::identity("lane", 5, "dim0")
                  .invert_and_compose(
                      LinearLayout::zeros("lane", 5, "dim0", 5));
            }).find("does not reach"),
            std::string::npos);
}

} // namespace
