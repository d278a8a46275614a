// Swizzled shared-memory layouts: the linear layout puts every element at
// the offset the swizzle formula gives, and the 128-byte swizzle keeps the
// 8 rows of 16-byte vectors that ldmatrix reads on distinct banks, where
// the unswizzled tile puts all 8 on the same ones.
#include "backends/nvptx/shared_layouts.h"
#include "ir/error.h"

#include <gtest/gtest.h>

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

} // namespace
