// The mma.sync m16n8k16 register layouts against the PTX ISA's fragment
// formulas, element by element, and what the maps derive: the accumulator
// of two m16n8 tiles side by side is operand A of the next MMA with no
// data movement (a register renumbering), as attention chains two MMAs.
#include "backends/nvptx/mma_layouts.h"

#include <gtest/gtest.h>

namespace {

using blocc::ir::LinearLayout;
using namespace blocc::nvptx;

struct Element {
  int64_t row, col;
};

// The PTX ISA's formulas: group = lane >> 2, pair = lane % 4.
Element accumulator_element(int64_t i, int64_t lane) {
  return {(lane >> 2) + (i >= 2 ? 8 : 0), (lane % 4) * 2 + (i & 1)};
}
Element operand_a_element(int64_t i, int64_t lane) {
  bool low_row = i < 2 || (i >= 4 && i < 6);
  return {(lane >> 2) + (low_row ? 0 : 8),
          (lane % 4) * 2 + (i & 1) + (i >= 4 ? 8 : 0)};
}
Element operand_b_element(int64_t i, int64_t lane) {
  return {(lane % 4) * 2 + (i & 1) + (i >= 2 ? 8 : 0), lane >> 2};
}

void expect_layout_follows(const LinearLayout &l, int registers,
                           Element (*formula)(int64_t, int64_t)) {
  EXPECT_TRUE(l.is_invertible()) << l.str();
  for (int64_t i = 0; i < registers; ++i)
    for (int64_t lane = 0; lane < 32; ++lane) {
      LinearLayout::Point at = l.apply({{"register", i}, {"lane", lane}});
      Element want = formula(i, lane);
      EXPECT_EQ(at.at("dim0"), want.row)
          << "element " << i << ", lane " << lane;
      EXPECT_EQ(at.at("dim1"), want.col)
          << "element " << i << ", lane " << lane;
    }
}

TEST(MmaLayouts, M16n8k16FragmentsAreThePtxIsasTables) {
  expect_layout_follows(mma_m16n8k16_accumulator(), 4, accumulator_element);
  expect_layout_follows(mma_m16n8k16_operand_a(), 8, operand_a_element);
  expect_layout_follows(mma_m16n8k16_operand_b(), 4, operand_b_element);
}

TEST(MmaLayouts, TwoAccumulatorsSideBySideAreOperandAWithoutMovingData) {
  // A 16 x 16 accumulator: two 16 x 8 tiles, the second 8 columns right.
  LinearLayout accumulator =
      mma_m16n8k16_accumulator() *
      LinearLayout::from_images({{"register", 1}}, {{"dim0", 0}, {"dim1", 1}},
                                {{{0, 1}}});
  LinearLayout conversion =
      accumulator.invert_and_compose(mma_m16n8k16_operand_a());
  for (int bit = 0; bit < 5; ++bit)
    EXPECT_EQ(
        conversion.image("lane", bit),
        (LinearLayout::Point{{"lane", int64_t{1} << bit}, {"register", 0}}))
        << "lane bit " << bit << " moves: " << conversion.str();
  for (int bit = 0; bit < 3; ++bit)
    EXPECT_EQ(conversion.image("register", bit).at("lane"), 0)
        << "register bit " << bit << " moves across lanes";
}

} // namespace
