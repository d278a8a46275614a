// Swizzled shared-memory layouts: the linear layout puts every element at
// the offset the swizzle formula gives, and the 128-byte swizzle keeps the
// 8 rows of 16-byte vectors that ldmatrix reads on distinct banks, where
// the unswizzled tile puts all 8 on the same ones. The GPU IR's shared
// layouts (SharedLayout): the padded one's linear layout numbers the
// elements in its order, and its text and checks.
#include "backends/nvptx/shared_layouts.h"
#include "ir/error.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace {

using blocc::ir::LinearLayout;
using namespace blocc::nvptx;

int64_t formula_offset(int64_t row, int64_t col, int64_t cols,
                       const Swizzle &s) {
  int64_t phase = (row / s.per_phase) % s.max_phase;
  return row * cols + ((col / s.vector) ^ phase) * s.vector + col % s.vector;
}

TEST(SharedLayouts, EveryElementSitsWhereTheSwizzleFormulaPutsIt) {
  for (Swizzle s : {Swizzle{1, 1, 1}, Swizzle{8, 1, 8}, Swizzle{4, 2, 4},
                    Swizzle{8, 4, 2}, Swizzle{2, 1, 16}}) {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{64, 64}, {16, 32}}) {
      if (s.vector * s.max_phase > cols)
        continue;
      LinearLayout l = swizzled_shared_layout(rows, cols, s);
      ASSERT_TRUE(l.is_invertible()) << l.str();
      LinearLayout offset_of = l.invert();
      for (int64_t row = 0; row < rows; ++row)
        for (int64_t col = 0; col < cols; ++col)
          ASSERT_EQ(
              offset_of.apply({{"dim0", row}, {"dim1", col}}).at("offset"),
              formula_offset(row, col, cols, s))
              << "row " << row << ", column " << col << ", vector " << s.vector
              << ", per_phase " << s.per_phase << ", max_phase " << s.max_phase;
    }
  }
}

/// Whether 8 consecutive rows' 16-byte vectors at column vector `c` of an
/// f16 tile with 64 columns (128-byte rows) fall on 8 different groups of
/// 4 banks, for every c and every group of 8 rows.
bool ldmatrix_reads_are_conflict_free(const LinearLayout &layout) {
  LinearLayout offset_of = layout.invert();
  for (int64_t first = 0; first < 64; first += 8)
    for (int64_t c = 0; c < 8; ++c) {
      std::set<int64_t> bank_groups;
      for (int64_t row = first; row < first + 8; ++row) {
        int64_t offset =
            offset_of.apply({{"dim0", row}, {"dim1", c * 8}}).at("offset");
        bank_groups.insert(offset * 2 / 16 % 8); // 16 bytes = 4 banks
      }
      if (bank_groups.size() != 8)
        return false;
    }
  return true;
}

TEST(SharedLayouts, The128ByteSwizzleKeepsLdmatrixRowsOnDistinctBanks) {
  EXPECT_TRUE(ldmatrix_reads_are_conflict_free(
      swizzled_shared_layout(64, 64, {8, 1, 8})));
  EXPECT_FALSE(ldmatrix_reads_are_conflict_free(
      swizzled_shared_layout(64, 64, {8, 1, 1})));
}

TEST(SharedLayouts, ASwizzleThatDoesNotFitItsRowIsAnError) {
  EXPECT_THROW(swizzled_shared_layout(64, 32, {8, 1, 8}), blocc::Error);
  EXPECT_THROW(swizzled_shared_layout(48, 32, {1, 1, 1}), blocc::Error);
}

TEST(SharedLayouts, APaddedLayoutNumbersItsElementsInItsOrder) {
  SharedLayout rows = SharedLayout::padded_row_major({8, 16});
  EXPECT_EQ(rows.str(), "padded<shape=[8,16] order=[1,0] pad_every=32 pad=1>");
  EXPECT_EQ(rows.problem(), "");
  LinearLayout by_rows = rows.linear_layout();
  SharedLayout columns = rows;
  columns.order = {0, 1};
  LinearLayout by_columns = columns.linear_layout();
  for (int64_t offset = 0; offset < 128; ++offset) {
    LinearLayout::Point r = by_rows.apply({{"offset", offset}});
    EXPECT_EQ(r.at("dim0"), offset / 16);
    EXPECT_EQ(r.at("dim1"), offset % 16);
    LinearLayout::Point c = by_columns.apply({{"offset", offset}});
    EXPECT_EQ(c.at("dim0"), offset % 8);
    EXPECT_EQ(c.at("dim1"), offset / 8);
  }
  // 128 elements and a pad after every 32 of them.
  EXPECT_EQ(rows.buffer_elements(), 132);
}

SharedLayout swizzled(std::vector<int64_t> shape, std::vector<int64_t> order,
                      Swizzle swizzle) {
  SharedLayout layout;
  layout.kind = SharedLayout::Kind::Swizzled;
  layout.shape = std::move(shape);
  layout.order = std::move(order);
  layout.swizzle = swizzle;
  return layout;
}

TEST(SharedLayouts, ASwizzledLayoutIsTheSwizzledTile) {
  SharedLayout tile = swizzled({64, 64}, {1, 0}, {8, 1, 8});
  EXPECT_EQ(tile.str(), "swizzled<shape=[64,64] order=[1,0] vector=8 "
                        "per_phase=1 max_phase=8>");
  EXPECT_EQ(tile.problem(), "");
  EXPECT_EQ(tile.linear_layout(), swizzled_shared_layout(64, 64, {8, 1, 8}));
  EXPECT_EQ(tile.buffer_elements(), 4096);
}

TEST(SharedLayouts, ALayoutThatIsNoneSaysWhy) {
  SharedLayout odd = SharedLayout::padded_row_major({48, 16});
  EXPECT_EQ(odd.problem(), "its shape's sizes must be powers of two");
  SharedLayout repeated = SharedLayout::padded_row_major({8, 16});
  repeated.order = {1, 1};
  EXPECT_EQ(repeated.problem(),
            "its order must name each of its 2 dimensions once");
  SharedLayout wide = swizzled({64, 32}, {1, 0}, {8, 1, 8});
  EXPECT_EQ(wide.problem(),
            "8 phases of 8-element vectors do not fit a row of 32");
  // Column by column, the tile's rows are 64 long: the swizzle fits.
  wide.order = {0, 1};
  EXPECT_EQ(wide.problem(), "");
  wide.shape = {32, 64};
  EXPECT_EQ(wide.problem(),
            "8 phases of 8-element vectors do not fit a row of 32");
  SharedLayout flat = SharedLayout::padded_row_major({256});
  flat.kind = SharedLayout::Kind::Swizzled;
  EXPECT_EQ(flat.problem(), "a swizzled layout is a 2-D tile");
}

// order=[0,1] keeps a value column by column: element (i, j) sits where the
// swizzled tile of the transposed value keeps (j, i).
TEST(SharedLayouts, ASwizzledLayoutColumnByColumnIsTheTransposedTile) {
  SharedLayout columns = swizzled({64, 16}, {0, 1}, {8, 1, 8});
  ASSERT_EQ(columns.problem(), "");
  LinearLayout tile = swizzled_shared_layout(16, 64, {8, 1, 8});
  LinearLayout l = columns.linear_layout();
  for (int64_t offset = 0; offset < 64 * 16; ++offset) {
    LinearLayout::Point c = l.apply({{"offset", offset}});
    LinearLayout::Point t = tile.apply({{"offset", offset}});
    EXPECT_EQ(c.at("dim0"), t.at("dim1"));
    EXPECT_EQ(c.at("dim1"), t.at("dim0"));
  }
}

// A permute's view of a tile reads the same buffer: each offset holds the
// element it held, under its permuted index; permuted back, the layout is
// the tile's again. Padded layouts permute alike.
TEST(SharedLayouts, APermutedLayoutSeesTheSameBytesTransposed) {
  for (SharedLayout original : {swizzled({32, 128}, {1, 0}, {8, 1, 8, 64}),
                                SharedLayout::padded_row_major({16, 64})}) {
    SCOPED_TRACE(original.str());
    SharedLayout transposed = original.permuted({1, 0});
    ASSERT_EQ(transposed.problem(), "");
    EXPECT_EQ(transposed.shape,
              (std::vector<int64_t>{original.shape[1], original.shape[0]}));
    LinearLayout before = original.linear_layout();
    LinearLayout after = transposed.linear_layout();
    for (int64_t offset = 0; offset < original.shape[0] * original.shape[1];
         ++offset) {
      LinearLayout::Point b = before.apply({{"offset", offset}});
      LinearLayout::Point a = after.apply({{"offset", offset}});
      ASSERT_EQ(a.at("dim0"), b.at("dim1")) << "offset " << offset;
      ASSERT_EQ(a.at("dim1"), b.at("dim0")) << "offset " << offset;
    }
    EXPECT_EQ(transposed.permuted({1, 0}), original);
    EXPECT_EQ(transposed.buffer_elements(), original.buffer_elements());
  }
}

// A conversion through shared memory pads by the shorter of the runs of
// consecutive elements the two layouts hold along their last dimension,
// so that both move them as aligned vectors; one element where either
// holds single elements there (a column, say), or the value's last
// dimension is another of the parent's.
TEST(SharedLayouts, AConversionPadsByTheShorterVectorRun) {
  const BlockedLayout fours{{128, 128}, {1, 4}, {4, 8}, {4, 1}};
  const BlockedLayout singles{{128, 128}, {4, 1}, {8, 4}, {1, 4}};
  const Layout whole{0, {0, 1}, {128, 128}};
  auto pad = [&](const BlockedLayout &a, const BlockedLayout &b,
                 int64_t bytes) {
    SharedLayout l = SharedLayout::for_conversion(a, whole, b, whole, bytes);
    EXPECT_EQ(l.kind, SharedLayout::Kind::Padded);
    return l.pad;
  };
  EXPECT_EQ(pad(fours, fours, 4), 4);
  EXPECT_EQ(pad(fours, singles, 4), 1);
  // At most 16 bytes a vector: two doubles.
  EXPECT_EQ(pad(fours, fours, 8), 2);
  // The value's last dimension along the parent's first (a transposed
  // read): single elements there.
  const Layout transposed{0, {1, 0}, {128, 128}};
  EXPECT_EQ(
      SharedLayout::for_conversion(fours, whole, fours, transposed, 4).pad, 1);
  SharedLayout l = SharedLayout::for_conversion(fours, whole, fours, whole, 4);
  EXPECT_EQ(l.str(), "padded<shape=[128,128] order=[1,0] pad_every=32 pad=4>");
  EXPECT_EQ(l.buffer_elements(), 128 * 128 + 128 * 128 / 32 * 4);
}

// Runs of two lengths (an MMA's pairs read back as rows) go through a
// swizzled tile of 16-byte vectors, where each side moves its own runs,
// where neither side meets itself on a bank there: half-precision pairs
// written 8 rows a pass and rows of eight read 16 bytes a lane. Rows of
// eight floats read 16 bytes a lane 32 bytes apart, two lanes on one bank
// of the tile's row: padded by the shorter run instead. A value of other
// than two dimensions, or whose rows are no whole vectors, stays padded.
TEST(SharedLayouts, RunsOfTwoLengthsMeetInASwizzledTileOffEachOthersBanks) {
  const BlockedLayout fragments{{128, 128}, {1, 2}, {8, 4}, {4, 1}, {2, 1}};
  const BlockedLayout rows{{128, 128}, {1, 8}, {2, 16}, {4, 1}};
  const Layout whole{0, {0, 1}, {128, 128}};
  SharedLayout halves =
      SharedLayout::for_conversion(fragments, whole, rows, whole, 2);
  EXPECT_EQ(halves.str(), "swizzled<shape=[128,128] order=[1,0] vector=8 "
                          "per_phase=1 max_phase=8>");
  EXPECT_EQ(halves.problem(), "");
  EXPECT_EQ(halves.buffer_elements(), 128 * 128);
  EXPECT_EQ(SharedLayout::for_conversion(rows, whole, fragments, whole, 2),
            halves);
  EXPECT_EQ(worst_bank_conflict(fragments, whole, halves, 2, 2), 1);
  EXPECT_EQ(worst_bank_conflict(rows, whole, halves, 8, 2), 1);
  // Padded by the shorter run, the rows would read pairs; padded by the
  // longer, the fragments' rows 8 apart meet.
  EXPECT_GT(worst_bank_conflict(fragments, whole,
                                SharedLayout::padded_row_major({128, 128}, 8),
                                2, 2),
            1);

  SharedLayout floats =
      SharedLayout::for_conversion(fragments, whole, rows, whole, 4);
  EXPECT_EQ(floats.str(),
            "padded<shape=[128,128] order=[1,0] pad_every=32 pad=2>");
  EXPECT_EQ(worst_bank_conflict(fragments, whole, floats, 2, 4), 1);
  EXPECT_EQ(worst_bank_conflict(rows, whole, floats, 2, 4), 1);
  SharedLayout tile = halves;
  tile.swizzle = swizzle_for_rows(128 * 4, 4);
  EXPECT_EQ(worst_bank_conflict(rows, whole, tile, 4, 4), 2);

  // Rows of 4 elements of 2 bytes: no whole 16-byte vector.
  const BlockedLayout narrow{{256, 4}, {1, 4}, {32, 1}, {4, 1}};
  const BlockedLayout narrow_pairs{{256, 4}, {1, 2}, {16, 2}, {4, 1}};
  const Layout thin{0, {0, 1}, {256, 4}};
  EXPECT_EQ(
      SharedLayout::for_conversion(narrow, thin, narrow_pairs, thin, 2).kind,
      SharedLayout::Kind::Padded);
  // One dimension: padded.
  const BlockedLayout line{{512}, {4}, {32}, {4}};
  const BlockedLayout line_pairs{{512}, {2}, {32}, {4}};
  const Layout flat{0, {0}, {512}};
  EXPECT_EQ(SharedLayout::for_conversion(line, flat, line_pairs, flat, 4).str(),
            "padded<shape=[512] order=[0] pad_every=32 pad=2>");
}

// Attention's epilogue converts its accumulator, held in pairs of columns
// by the MMAs' fragments, to rows for 16-byte stores: padded by the
// shorter run (2), both sides move pairs without two lanes of a pass on
// one bank. Padded by the longer run (4), the pairs' rows 8 apart meet.
TEST(SharedLayouts, TheConversionsPadKeepsVectorsOffEachOthersBanks) {
  const BlockedLayout fragments{{128, 128}, {1, 2}, {8, 4}, {4, 1}, {2, 1}};
  const BlockedLayout rows{{128, 128}, {1, 8}, {2, 16}, {4, 1}};
  const Layout whole{0, {0, 1}, {128, 128}};
  SharedLayout shorter = SharedLayout::padded_row_major({128, 128}, 2);
  EXPECT_EQ(worst_bank_conflict(fragments, whole, shorter, 2, 4), 1);
  EXPECT_EQ(worst_bank_conflict(rows, whole, shorter, 2, 4), 1);
  SharedLayout longer = SharedLayout::padded_row_major({128, 128}, 4);
  EXPECT_GT(worst_bank_conflict(fragments, whole, longer, 2, 4), 1);
  // A transposed read of single elements, a lane a row, in rows of 32:
  // one pad element keeps a column on 32 banks.
  const BlockedLayout square_rows{{32, 32}, {1, 4}, {4, 8}, {4, 1}};
  const BlockedLayout columns{{32, 32}, {1, 1}, {32, 1}, {1, 4}};
  const Layout square{0, {0, 1}, {32, 32}};
  SharedLayout one =
      SharedLayout::for_conversion(square_rows, square, columns, square, 4);
  ASSERT_EQ(one.pad, 1);
  EXPECT_EQ(worst_bank_conflict(square_rows, square, one, 1, 4), 1);
  EXPECT_EQ(worst_bank_conflict(columns, square, one, 1, 4), 1);
}

} // namespace
