// The mma.sync m16n8k16 register layouts against the PTX ISA's fragment
// formulas, element by element, and what the maps derive: the accumulator
// of two m16n8 tiles side by side is operand A of the next MMA with no
// data movement (a register renumbering), as attention chains two MMAs;
// and the blocked layout a dot on tensor cores homes its result in, whose
// every register is the fragment element mma_fragment_element names.
#include "backends/nvptx/mma_layouts.h"
#include "ir/builder.h"

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

// Each (warp, lane, register) of the accumulator layout holds the element
// that its MMA fragment element puts there: fragment (m_tile, n_tile) of
// the warp's own, placed by the PTX ISA's accumulator table, with the
// fragment's rows 8-15 one layout tile (8 rows a warp) below its rows 0-7.
void expect_blocked_layout_is_fragments(int64_t m, int64_t n, int64_t warps_m,
                                        int64_t warps_n) {
  BlockedLayout layout{{m, n}, {1, 2}, {8, 4}, {warps_m, warps_n}};
  EXPECT_FALSE(layout.has_replicas());
  LinearLayout placed = linear_layout_of(layout);
  LinearLayout fragment = mma_m16n8k16_accumulator();
  for (int64_t w = 0; w < warps_m * warps_n; ++w)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t r = 0; r < layout.num_registers(); ++r) {
        LinearLayout::Point at =
            placed.apply({{"register", r}, {"lane", lane}, {"warp", w}});
        MmaFragmentElement f = mma_fragment_element(layout, r);
        LinearLayout::Point in_tile =
            fragment.apply({{"register", f.element}, {"lane", lane}});
        int64_t row_in_tile = in_tile.at("dim0");
        EXPECT_EQ(at.at("dim0"), 16 * warps_m * f.m_tile + 8 * (w / warps_n) +
                                     row_in_tile % 8 +
                                     row_in_tile / 8 * 8 * warps_m)
            << m << "x" << n << " on " << warps_m << "x" << warps_n
            << " warps: warp " << w << ", lane " << lane << ", register " << r;
        EXPECT_EQ(at.at("dim1"), 8 * warps_n * f.n_tile + 8 * (w % warps_n) +
                                     in_tile.at("dim1"))
            << m << "x" << n << " on " << warps_m << "x" << warps_n
            << " warps: warp " << w << ", lane " << lane << ", register " << r;
      }
}

TEST(MmaAccumulatorLayout, EveryRegisterIsAFragmentElement) {
  expect_blocked_layout_is_fragments(16, 8, 1, 1);
  expect_blocked_layout_is_fragments(32, 64, 1, 4);
  expect_blocked_layout_is_fragments(128, 128, 2, 2);
  expect_blocked_layout_is_fragments(64, 128, 4, 2);
  expect_blocked_layout_is_fragments(128, 64, 4, 1);
}

// Warps split the longer side of a warp's part, each part whole 16 x 8
// tiles.
TEST(MmaAccumulatorLayout, WarpsSplitTheBlockIntoNearSquareParts) {
  using Grid = std::optional<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(mma_warp_grid(128, 128, 4), (Grid{{2, 2}}));
  EXPECT_EQ(mma_warp_grid(128, 128, 8), (Grid{{4, 2}}));
  EXPECT_EQ(mma_warp_grid(128, 64, 4), (Grid{{4, 1}}));
  EXPECT_EQ(mma_warp_grid(64, 128, 8), (Grid{{2, 4}}));
  EXPECT_EQ(mma_warp_grid(16, 64, 4), (Grid{{1, 4}}));
  EXPECT_EQ(mma_warp_grid(256, 8, 4), (Grid{{4, 1}}));
  EXPECT_EQ(mma_warp_grid(16, 8, 1), (Grid{{1, 1}}));
  EXPECT_EQ(mma_warp_grid(16, 16, 4), Grid{});
  EXPECT_EQ(mma_warp_grid(16, 4, 1), Grid{});
  EXPECT_EQ(mma_warp_grid(8, 8, 1), Grid{});
  EXPECT_EQ(mma_warp_grid(32, 8, 4), Grid{});
}

/// The layout chosen for a dot of an m x k by a k x n block of `in` into
/// `out` on `warps` warps.
std::optional<BlockedLayout> layout_for(blocc::ir::Scalar in,
                                        blocc::ir::Scalar out, int64_t m,
                                        int64_t n, int64_t k, int warps) {
  using namespace blocc::ir;
  Function f("dot");
  Builder b(&f.body());
  Value *x = b.float_constant(1.0, Type::block(Type::scalar(in), {m, k}));
  Value *y = b.float_constant(1.0, Type::block(Type::scalar(in), {k, n}));
  Value *c = b.float_constant(0.0, Type::block(Type::scalar(out), {m, n}));
  Value *d = b.create_value(OpCode::Dot, {x, y, c}, c->type());
  return mma_accumulator_layout(*d->defining_op(), warps);
}

TEST(MmaAccumulatorLayout, OnlyForHalfInputsIntoF32OnWholeTiles) {
  using blocc::ir::Scalar;
  std::optional<BlockedLayout> l =
      layout_for(Scalar::F16, Scalar::F32, 128, 64, 32, 4);
  ASSERT_TRUE(l);
  EXPECT_EQ(*l, (BlockedLayout{{128, 64}, {1, 2}, {8, 4}, {4, 1}}));
  EXPECT_TRUE(layout_for(Scalar::BF16, Scalar::F32, 16, 8, 16, 1));
  // Other types, and tiles the warps' MMAs do not cover whole.
  EXPECT_FALSE(layout_for(Scalar::F16, Scalar::F16, 128, 64, 32, 4));
  EXPECT_FALSE(layout_for(Scalar::F32, Scalar::F32, 128, 64, 32, 4));
  EXPECT_FALSE(layout_for(Scalar::I8, Scalar::I32, 128, 64, 32, 4));
  EXPECT_FALSE(layout_for(Scalar::F16, Scalar::F32, 8, 64, 32, 4));
  EXPECT_FALSE(layout_for(Scalar::F16, Scalar::F32, 16, 16, 32, 4));
  EXPECT_FALSE(layout_for(Scalar::F16, Scalar::F32, 128, 64, 8, 4));
}

// Two chained dots (softmax(Q K^T) V without the softmax): both split M
// alone, 4 x 1, where a lone dot of the same shape splits 2 x 2.
TEST(MmaAccumulatorLayout, ChainedDotsSplitRowsAlone) {
  using namespace blocc::ir;
  Function f("chain");
  Builder b(&f.body());
  Type half = Type::block(Type::scalar(Scalar::F16), {64, 64});
  Type f32 = Type::block(Type::scalar(Scalar::F32), {64, 64});
  Value *q = b.float_constant(1.0, half), *k = b.float_constant(1.0, half);
  Value *zero = b.float_constant(0.0, f32);
  Value *s = b.create_value(OpCode::Dot, {q, k, zero}, f32);
  Value *p = b.create_value(OpCode::Cast, {s}, half);
  Value *o = b.create_value(OpCode::Dot, {p, k, zero}, f32);
  Value *lone = b.create_value(OpCode::Dot, {q, k, zero}, f32);
  for (Value *chained : {s, o}) {
    EXPECT_TRUE(in_dot_chain(*chained->defining_op()));
    EXPECT_EQ(mma_accumulator_layout(*chained->defining_op(), 4)->warps_per_cta,
              (std::vector<int64_t>{4, 1}));
  }
  EXPECT_FALSE(in_dot_chain(*lone->defining_op()));
  EXPECT_EQ(mma_accumulator_layout(*lone->defining_op(), 4)->warps_per_cta,
            (std::vector<int64_t>{2, 2}));
}

} // namespace
