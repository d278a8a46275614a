// The mma.sync m16n8k16 register layouts against the PTX ISA's fragment
// formulas, element by element, and what the maps derive: the accumulator
// of two m16n8 tiles side by side is operand A of the next MMA with no
// data movement (a register renumbering), as attention chains two MMAs;
// and the blocked layout a dot on tensor cores homes its result in, whose
// every register is the fragment element mma_fragment_element names.
#include "backends/nvptx/mma_layouts.h"
#include "ir/builder.h"
#include "nvptx/dot_of.h"

#include <gtest/gtest.h>

namespace {

using blocc::ir::LinearLayout;
using namespace blocc::nvptx;
using blocc::gpu_testing::DotOf;

const GpuArch kSm90{90, false};

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

// m16n8k8 tf32 (one element a register) and m16n8k32 with 8-bit inputs
// (four a register, the lowest k in the lowest byte): the PTX ISA's
// formulas, group = lane >> 2, c = lane % 4.
Element tf32_a_element(int64_t i, int64_t lane) {
  return {(lane >> 2) + (i & 1) * 8, lane % 4 + (i >= 2 ? 4 : 0)};
}
Element tf32_b_element(int64_t i, int64_t lane) {
  return {lane % 4 + (i == 1 ? 4 : 0), lane >> 2};
}
Element byte_a_element(int64_t i, int64_t lane) {
  bool low_row = i < 4 || (i >= 8 && i < 12);
  return {(lane >> 2) + (low_row ? 0 : 8),
          (lane % 4) * 4 + (i & 3) + (i >= 8 ? 16 : 0)};
}
Element byte_b_element(int64_t i, int64_t lane) {
  return {(lane % 4) * 4 + (i & 3) + (i >= 4 ? 16 : 0), lane >> 2};
}

TEST(MmaLayouts, Tf32AndByteFragmentsAreThePtxIsasTables) {
  expect_layout_follows(mma_m16n8k8_tf32_operand_a(), 4, tf32_a_element);
  expect_layout_follows(mma_m16n8k8_tf32_operand_b(), 2, tf32_b_element);
  expect_layout_follows(mma_m16n8k32_8bit_operand_a(), 16, byte_a_element);
  expect_layout_follows(mma_m16n8k32_8bit_operand_b(), 8, byte_b_element);
  // A few points of the tables, by hand.
  auto at = [](const LinearLayout &l, int64_t i, int64_t lane) {
    LinearLayout::Point p = l.apply({{"register", i}, {"lane", lane}});
    return std::make_pair(p.at("dim0"), p.at("dim1"));
  };
  using P = std::pair<int64_t, int64_t>;
  EXPECT_EQ(at(mma_m16n8k8_tf32_operand_a(), 3, 5), (P{9, 5}));
  EXPECT_EQ(at(mma_m16n8k8_tf32_operand_a(), 1, 31), (P{15, 3}));
  EXPECT_EQ(at(mma_m16n8k8_tf32_operand_b(), 1, 6), (P{6, 1}));
  EXPECT_EQ(at(mma_m16n8k32_8bit_operand_a(), 13, 6), (P{9, 25}));
  EXPECT_EQ(at(mma_m16n8k32_8bit_operand_a(), 2, 0), (P{0, 2}));
  EXPECT_EQ(at(mma_m16n8k32_8bit_operand_b(), 6, 7), (P{30, 1}));
  EXPECT_EQ(at(mma_m16n8k32_8bit_operand_b(), 3, 28), (P{3, 7}));
}

// In 32-bit words, every input type's fragments are m16n8k16's: the
// lowering reads them all with one addressing (ldmatrix's rows of 16
// bytes). Register word w of a lane is, for tf32, element w; for 16-bit
// elements, elements 2w and 2w + 1; for bytes, 4w to 4w + 3.
TEST(MmaLayouts, EveryInputTypesFragmentsAreTheSameWords) {
  struct Case {
    LinearLayout a, b;
    int64_t per_word;
  };
  const Case cases[] = {
      {mma_m16n8k8_tf32_operand_a(), mma_m16n8k8_tf32_operand_b(), 1},
      {mma_m16n8k32_8bit_operand_a(), mma_m16n8k32_8bit_operand_b(), 4}};
  const LinearLayout half_a = mma_m16n8k16_operand_a();
  const LinearLayout half_b = mma_m16n8k16_operand_b();
  for (const Case &c : cases)
    for (int64_t lane = 0; lane < 32; ++lane) {
      for (int64_t w = 0; w < 4; ++w) {
        LinearLayout::Point got =
            c.a.apply({{"register", w * c.per_word}, {"lane", lane}});
        LinearLayout::Point want =
            half_a.apply({{"register", 2 * w}, {"lane", lane}});
        EXPECT_EQ(got.at("dim0"), want.at("dim0")) << lane << " " << w;
        EXPECT_EQ(got.at("dim1") / c.per_word, want.at("dim1") / 2)
            << lane << " " << w;
      }
      for (int64_t w = 0; w < 2; ++w) {
        LinearLayout::Point got =
            c.b.apply({{"register", w * c.per_word}, {"lane", lane}});
        LinearLayout::Point want =
            half_b.apply({{"register", 2 * w}, {"lane", lane}});
        EXPECT_EQ(got.at("dim0") / c.per_word, want.at("dim0") / 2)
            << lane << " " << w;
        EXPECT_EQ(got.at("dim1"), want.at("dim1")) << lane << " " << w;
      }
    }
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
                                        int64_t n, int64_t k, int warps,
                                        const std::string &precision = "") {
  DotOf d(in, in, out, m, n, k, precision);
  return mma_accumulator_layout(*d.dot, warps, kSm90);
}

/// The instruction a dot takes on `arch` ("" for none), as printed.
std::string instruction_for(blocc::ir::Scalar a, blocc::ir::Scalar b,
                            blocc::ir::Scalar out, int64_t k,
                            const std::string &precision = "",
                            GpuArch arch = kSm90) {
  DotOf d(a, b, out, 64, 64, k, precision);
  std::optional<MmaInstruction> mma = mma_instruction(*d.dot, arch);
  return mma ? mma->describe() : "";
}

TEST(MmaInstruction, F32RunsAsTf32WhereItsPrecisionAsks) {
  using blocc::ir::Scalar;
  EXPECT_EQ(instruction_for(Scalar::F16, Scalar::F16, Scalar::F32, 32),
            "mma.sync m16n8k16 f16 into f32");
  EXPECT_EQ(instruction_for(Scalar::BF16, Scalar::BF16, Scalar::F32, 32),
            "mma.sync m16n8k16 bf16 into f32");
  EXPECT_EQ(instruction_for(Scalar::F16, Scalar::F16, Scalar::F16, 16),
            "mma.sync m16n8k16 f16 into f16");
  EXPECT_EQ(instruction_for(Scalar::F32, Scalar::F32, Scalar::F32, 8, "tf32"),
            "mma.sync m16n8k8 tf32 into f32");
  EXPECT_EQ(
      instruction_for(Scalar::F32, Scalar::F32, Scalar::F32, 24, "tf32x3"),
      "3 x mma.sync m16n8k8 tf32 into f32 (tf32x3)");
  EXPECT_EQ(instruction_for(Scalar::F32, Scalar::F32, Scalar::F32, 32, "ieee"),
            "");
  EXPECT_EQ(instruction_for(Scalar::F32, Scalar::F32, Scalar::F32, 32), "");
  EXPECT_EQ(instruction_for(Scalar::F32, Scalar::F32, Scalar::F32, 12, "tf32"),
            "");
  EXPECT_EQ(instruction_for(Scalar::F64, Scalar::F64, Scalar::F64, 32), "");
  DotOf ieee(Scalar::F32, Scalar::F32, Scalar::F32, 64, 64, 32, "ieee");
  EXPECT_EQ(why_not_on_tensor_cores(*ieee.dot, 4, kSm90),
            "tensor<64x32xf32> by tensor<32x64xf32> into f32 with "
            "input_precision ieee (tensor cores round f32 inputs to tf32)");
  DotOf odd(Scalar::F32, Scalar::F32, Scalar::F32, 64, 64, 20, "tf32");
  EXPECT_EQ(why_not_on_tensor_cores(*odd.dot, 4, kSm90),
            "M = 64, K = 20 (tensor cores take M in 16s and K in 8s for "
            "tf32)");
}

TEST(MmaInstruction, BytesIntoInt32AreM16n8k32OfEitherSignedness) {
  using blocc::ir::Scalar;
  EXPECT_EQ(instruction_for(Scalar::I8, Scalar::I8, Scalar::I32, 32),
            "mma.sync m16n8k32 s8 into i32");
  EXPECT_EQ(instruction_for(Scalar::U8, Scalar::I8, Scalar::I32, 64),
            "mma.sync m16n8k32 u8 by s8 into i32");
  EXPECT_EQ(instruction_for(Scalar::U8, Scalar::U8, Scalar::U32, 32),
            "mma.sync m16n8k32 u8 into i32");
  // K in 32s, else dp4a on the CUDA cores.
  EXPECT_EQ(instruction_for(Scalar::I8, Scalar::I8, Scalar::I32, 16), "");
  EXPECT_EQ(instruction_for(Scalar::I8, Scalar::I8, Scalar::I32, 48), "");
}

// fp8 MMAs exist from sm_89 (Ada) on; sm_80 multiplies fp8 on the CUDA
// cores. The two formats may be mixed. Into f16, the CUDA cores.
TEST(MmaInstruction, Fp8IntoF32FromSm89On) {
  using blocc::ir::Scalar;
  EXPECT_EQ(instruction_for(Scalar::F8E4M3, Scalar::F8E5M2, Scalar::F32, 32, "",
                            GpuArch{89, false}),
            "mma.sync m16n8k32 e4m3 by e5m2 into f32");
  EXPECT_EQ(instruction_for(Scalar::F8E5M2, Scalar::F8E5M2, Scalar::F32, 64),
            "mma.sync m16n8k32 e5m2 into f32");
  EXPECT_EQ(instruction_for(Scalar::F8E4M3, Scalar::F8E4M3, Scalar::F32, 32, "",
                            GpuArch{80, false}),
            "");
  EXPECT_EQ(instruction_for(Scalar::F8E4M3, Scalar::F8E4M3, Scalar::F32, 32, "",
                            GpuArch{86, false}),
            "");
  EXPECT_EQ(instruction_for(Scalar::F8E4M3, Scalar::F8E4M3, Scalar::F16, 32),
            "");
  DotOf fp8(Scalar::F8E4M3, Scalar::F8E5M2, Scalar::F32, 64, 64, 32);
  EXPECT_EQ(why_not_on_tensor_cores(*fp8.dot, 4, GpuArch{80, false}),
            "tensor<64x32xf8e4m3> by tensor<32x64xf8e5m2> into f32 on sm_80 "
            "(tensor cores take fp8 from sm_89)");
}

// Tiles of elements other than 16 bits are kept K fastest whatever their
// registers run along (ldmatrix cannot transpose them); rows unpadded and
// swizzled in 16-byte vectors by their length.
TEST(MmaFragmentTile, KFastestBeyondHalvesAndSwizzledByRowBytes) {
  using blocc::ir::Scalar;
  DotOf f32(Scalar::F32, Scalar::F32, Scalar::F32, 64, 64, 32, "tf32");
  FragmentTile a = fragment_tile(*f32.dot, 0, true);
  EXPECT_EQ(a.element_bytes, 4);
  EXPECT_EQ(a.rows, 64);
  EXPECT_EQ(a.columns, 32);
  EXPECT_EQ(a.bytes(), 64 * 32 * 4);
  // 128-byte rows: 8 phases, a new one every row.
  EXPECT_EQ(a.swizzle.vector, 4);
  EXPECT_EQ(a.swizzle.per_phase, 1);
  EXPECT_EQ(a.swizzle.max_phase, 8);
  BlockedLayout rows{{32, 64}, {1, 4}, {2, 16}, {4, 1}};
  Layout b_layout{0, {0, 1}, {32, 64}};
  EXPECT_FALSE(operand_runs_along_k(rows, b_layout, 1));
  EXPECT_TRUE(fragment_tile_k_fastest(*f32.dot, rows, b_layout, 1));
  DotOf halves(Scalar::F16, Scalar::F16, Scalar::F32, 64, 64, 32);
  EXPECT_FALSE(fragment_tile_k_fastest(*halves.dot, rows, b_layout, 1));
  // 64-byte rows: 4 phases, a new one every other row.
  FragmentTile h = fragment_tile(*halves.dot, 0, true);
  EXPECT_EQ(h.columns, 32);
  EXPECT_EQ(h.swizzle.vector, 8);
  EXPECT_EQ(h.swizzle.per_phase, 2);
  EXPECT_EQ(h.swizzle.max_phase, 4);
  // K slowest: B's rows are its 64 columns of N (128 bytes).
  FragmentTile b = fragment_tile(*halves.dot, 1, false);
  EXPECT_EQ(b.rows, 32);
  EXPECT_EQ(b.columns, 64);
  EXPECT_EQ(b.swizzle.max_phase, 8);
}

TEST(MmaAccumulatorLayout, OnlyForTensorCoreTypesOnWholeTiles) {
  using blocc::ir::Scalar;
  std::optional<BlockedLayout> l =
      layout_for(Scalar::F16, Scalar::F32, 128, 64, 32, 4);
  ASSERT_TRUE(l);
  EXPECT_EQ(*l, (BlockedLayout{{128, 64}, {1, 2}, {8, 4}, {4, 1}}));
  EXPECT_TRUE(layout_for(Scalar::BF16, Scalar::F32, 16, 8, 16, 1));
  // Other types, and tiles the warps' MMAs do not cover whole.
  EXPECT_TRUE(layout_for(Scalar::F16, Scalar::F16, 128, 64, 32, 4));
  EXPECT_FALSE(layout_for(Scalar::BF16, Scalar::F16, 128, 64, 32, 4));
  EXPECT_FALSE(layout_for(Scalar::F32, Scalar::F32, 128, 64, 32, 4));
  EXPECT_TRUE(layout_for(Scalar::I8, Scalar::I32, 128, 64, 32, 4));
  EXPECT_FALSE(layout_for(Scalar::I8, Scalar::I32, 128, 64, 16, 4));
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
    EXPECT_EQ(mma_accumulator_layout(*chained->defining_op(), 4, kSm90)
                  ->warps_per_cta,
              (std::vector<int64_t>{4, 1}));
  }
  EXPECT_FALSE(in_dot_chain(*lone->defining_op()));
  EXPECT_EQ(
      mma_accumulator_layout(*lone->defining_op(), 4, kSm90)->warps_per_cta,
      (std::vector<int64_t>{2, 2}));
}

} // namespace
