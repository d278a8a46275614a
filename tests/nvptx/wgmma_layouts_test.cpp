// The warpgroup MMA's layouts against the PTX ISA: the accumulator's
// blocked layout (a warp's lanes repeated twice along M, per_warp = [2,
// 1]) holds in each register the element of the instruction's fragment
// table; the tiles' atoms are the ISA's canonical swizzled layouts, byte
// for byte (CuTe's Swizzle<B, 4, 3> on the byte address); the descriptor
// fields and start addresses read the same bytes; and which dots take the
// instruction.
#include "backends/nvptx/mma_layouts.h"
#include "nvptx/dot_of.h"

#include <gtest/gtest.h>

namespace {

using blocc::ir::LinearLayout;
using namespace blocc::nvptx;

const GpuArch kSm90a{90, true};

/// A dot of an m x k block of `in` by a k x n block into `out` (f32 as
/// tf32).
struct DotOf : blocc::gpu_testing::DotOf {
  DotOf(blocc::ir::Scalar in, blocc::ir::Scalar out, int64_t m, int64_t n,
        int64_t k)
      : blocc::gpu_testing::DotOf(in, in, out, m, n, k,
                                  in == blocc::ir::Scalar::F32 ? "tf32" : "") {}
};

// The ISA's accumulator of m64nNk*: warp w of the warpgroup holds rows
// 16 w + lane / 4 (+ 8 for d[i] with i & 2), columns 8 (i / 4) + 2 (lane
// % 4) + (i & 1). Each register of the blocked layout, placed by its
// offsets in that instruction's numbering, is that element.
TEST(WgmmaLayouts, TheAccumulatorIsTheFragmentTableOfEveryWarpgroup) {
  for (int64_t warps : {4, 8})
    for (int64_t passes : {1, 2})
      for (int64_t n : {16, 64, 256}) {
        const int64_t m = 16 * warps * passes;
        BlockedLayout layout = wgmma_fragments_layout(m, n, warps);
        LinearLayout map = linear_layout_of(layout);
        ASSERT_EQ(layout.num_registers(), passes * n / 2);
        for (int64_t r = 0; r < layout.num_registers(); ++r) {
          std::vector<int64_t> offset = layout.register_offset(r);
          const int64_t pass = offset[0] / layout.tile(0);
          const int64_t i = 4 * (offset[1] / 8) +
                            2 * ((offset[0] % layout.tile(0)) / 8) +
                            offset[1] % 8;
          for (int64_t warp = 0; warp < warps; ++warp)
            for (int64_t lane = 0; lane < 32; ++lane) {
              LinearLayout::Point at =
                  map.apply({{"register", r}, {"lane", lane}, {"warp", warp}});
              const int64_t row = pass * 16 * warps + 64 * (warp / 4) +
                                  16 * (warp % 4) + lane / 4 +
                                  ((i & 2) ? 8 : 0);
              const int64_t col = 8 * (i / 4) + 2 * (lane % 4) + (i & 1);
              ASSERT_EQ(at.at("dim0"), row)
                  << m << "x" << n << " register " << r << " warp " << warp;
              ASSERT_EQ(at.at("dim1"), col)
                  << m << "x" << n << " register " << r << " warp " << warp;
            }
        }
      }
}

// Printed and parsed as the GPU IR spells it: per_warp only where given.
TEST(WgmmaLayouts, PerWarpIsPrintedWhereItRepeats) {
  EXPECT_EQ(wgmma_fragments_layout(128, 64, 8).str(),
            "blocked<shape=[128,64] per_thread=[1,2] threads=[8,4] "
            "per_warp=[2,1] warps=[8,1]>");
  EXPECT_EQ(mma_fragments_layout(128, 64, 4, 1).str(),
            "blocked<shape=[128,64] per_thread=[1,2] threads=[8,4] "
            "warps=[4,1]>");
}

/// CuTe's Swizzle<bits, 4, 3> on a byte address: bits 4.. XORed with
/// bits 7.., as the ISA's canonical layouts are swizzled.
int64_t swizzled(int64_t address, int bits) {
  return address ^ (((address >> 7) & ((int64_t{1} << bits) - 1)) << 4);
}

/// The byte the ISA's canonical layout puts element (row, column) of a
/// tile at: rows of `swizzle_bytes` (one atom's), atoms of the tile's rows
/// one after another along the columns.
int64_t canonical_byte(const SharedTile &tile, int64_t row, int64_t column,
                       int64_t swizzle_bytes) {
  const int64_t per_atom_row = swizzle_bytes / tile.element_bytes;
  const int64_t address = (column / per_atom_row) * tile.rows * swizzle_bytes +
                          row * swizzle_bytes +
                          (column % per_atom_row) * tile.element_bytes;
  const int bits = swizzle_bytes == 128 ? 3 : swizzle_bytes == 64 ? 2 : 1;
  return swizzled(address, bits);
}

TEST(WgmmaLayouts, TilesAreTheCanonicalSwizzledAtoms) {
  for (int64_t bytes : {1, 2, 4})
    for (int64_t rows : {8, 64, 128})
      for (int64_t row_bytes : {32, 64, 128, 256, 512}) {
        SharedTile tile;
        tile.rows = rows;
        tile.columns = row_bytes / bytes;
        tile.element_bytes = bytes;
        tile.swizzle = wgmma_swizzle(row_bytes, bytes);
        const int64_t swizzle_bytes = std::min<int64_t>(row_bytes, 128);
        LinearLayout offsets = tile.offsets();
        for (int64_t row = 0; row < tile.rows; ++row)
          for (int64_t column = 0; column < tile.columns; ++column) {
            int64_t offset =
                offsets.apply({{"dim0", row}, {"dim1", column}}).at("offset");
            ASSERT_EQ(offset * bytes,
                      canonical_byte(tile, row, column, swizzle_bytes))
                << rows << " rows of " << row_bytes << " bytes, (" << row
                << ", " << column << ")";
          }
        EXPECT_EQ(wgmma_tile_alignment(tile), 8 * swizzle_bytes);
      }
}

// A 128 x 64 half A (K-major, 128-byte rows) and a 64 x 128 half B kept
// [K][N] (MN-major: two atoms of 64 columns).
TEST(WgmmaLayouts, DescriptorsReadTheTilesBytes) {
  DotOf d(blocc::ir::Scalar::F16, blocc::ir::Scalar::F32, 128, 128, 64);
  WgmmaOperand a = wgmma_operand(wgmma_operand_tile(*d.dot, 0, true));
  EXPECT_FALSE(a.mn_major);
  EXPECT_EQ(a.swizzle_mode, 1);
  EXPECT_EQ(a.stride_bytes, 1024);
  EXPECT_EQ(a.start_bytes(64, 16), 64 * 128 + 32);
  WgmmaOperand b = wgmma_operand(wgmma_operand_tile(*d.dot, 1, false));
  EXPECT_TRUE(b.mn_major);
  EXPECT_EQ(b.tile.swizzle.atom_columns, 64);
  EXPECT_EQ(b.leading_bytes, 64 * 128); // the next 64 columns of N
  EXPECT_EQ(b.stride_bytes, 1024);      // the next 8 rows of K
  EXPECT_EQ(b.start_bytes(0, 16), 16 * 128);
  // Every start a step can have is the byte of its element, unswizzled
  // (a multiple of 8 rows: phase 0).
  for (const WgmmaOperand &o : {a, b}) {
    LinearLayout offsets = o.tile.offsets();
    const int64_t mn_extent = o.mn_major ? o.tile.columns : o.tile.rows;
    const int64_t k_extent = o.mn_major ? o.tile.rows : o.tile.columns;
    for (int64_t mn = 0; mn < mn_extent; mn += 64)
      for (int64_t k = 0; k < k_extent; k += 16) {
        int64_t row = o.mn_major ? k : mn, column = o.mn_major ? mn : k;
        EXPECT_EQ(
            o.start_bytes(mn, k),
            offsets.apply({{"dim0", row}, {"dim1", column}}).at("offset") * 2);
      }
  }
}

TEST(WgmmaLayouts, WhichDotsTakeIt) {
  using blocc::ir::Scalar;
  auto why = [](Scalar in, Scalar out, int64_t m, int64_t n, int64_t k,
                int warps, GpuArch arch = kSm90a) {
    DotOf d(in, out, m, n, k);
    return why_not_on_warpgroups(*d.dot, warps, arch);
  };
  EXPECT_EQ(why(Scalar::F16, Scalar::F32, 128, 128, 64, 4), "");
  EXPECT_EQ(why(Scalar::BF16, Scalar::F32, 128, 256, 64, 8), "");
  EXPECT_EQ(why(Scalar::F32, Scalar::F32, 64, 64, 32, 4), "");
  EXPECT_EQ(why(Scalar::F8E4M3, Scalar::F32, 128, 128, 128, 4), "");
  EXPECT_EQ(why(Scalar::I8, Scalar::I32, 64, 64, 64, 4), "");
  EXPECT_NE(why(Scalar::F16, Scalar::F32, 128, 128, 64, 4, GpuArch{90, false}),
            "");
  EXPECT_NE(why(Scalar::F16, Scalar::F32, 128, 128, 64, 2), ""); // no group
  EXPECT_NE(why(Scalar::F16, Scalar::F32, 64, 128, 64, 8), "");  // M < 128
  EXPECT_NE(why(Scalar::F16, Scalar::F32, 64, 512, 64, 4), "");  // N > 256
  EXPECT_NE(why(Scalar::F16, Scalar::F32, 64, 8, 64, 4), "");    // 16-bit N 8
  EXPECT_NE(why(Scalar::I8, Scalar::I32, 64, 40, 64, 4), "");    // int8 N 40
  EXPECT_NE(why(Scalar::F16, Scalar::F16, 128, 128, 64, 4), ""); // f16 sums
  DotOf d(Scalar::F16, Scalar::F32, 128, 64, 64);
  EXPECT_EQ(*wgmma_accumulator_layout(*d.dot, 8, kSm90a),
            wgmma_fragments_layout(128, 64, 8));
}

// A chain of dots (softmax(Q K^T) V without the softmax) takes warpgroup
// MMAs in one pass of 64 rows per warpgroup and in two (128 rows on 4
// warps, as Triton runs attention's 128-query blocks).
TEST(WgmmaLayouts, ChainsTakeItInOneOrTwoPassesOfRows) {
  using namespace blocc::ir;
  for (int64_t rows : {64, 128}) {
    Function f("chain");
    Builder b(&f.body());
    Type half = Type::block(Type::scalar(Scalar::F16), {rows, 64});
    Type keys = Type::block(Type::scalar(Scalar::F16), {64, 64});
    Type f32 = Type::block(Type::scalar(Scalar::F32), {rows, 64});
    Value *q = b.float_constant(1.0, half), *k = b.float_constant(1.0, keys);
    Value *zero = b.float_constant(0.0, f32);
    Value *s = b.create_value(OpCode::Dot, {q, k, zero}, f32);
    Value *p = b.create_value(OpCode::Cast, {s}, half);
    Value *o = b.create_value(OpCode::Dot, {p, k, zero}, f32);
    for (Value *link : {s, o}) {
      EXPECT_EQ(why_not_on_warpgroups(*link->defining_op(), 4, kSm90a), "");
    }
    EXPECT_EQ(a_from_a_dot(*o->defining_op()), true);
    EXPECT_EQ(a_from_a_dot(*s->defining_op()), false);
  }
}

} // namespace
