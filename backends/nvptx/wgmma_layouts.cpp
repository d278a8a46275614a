// The warpgroup MMA's layouts (mma_layouts.h): which dots take it, its
// accumulator as a blocked layout, its operand tiles and the descriptors
// that find them.
#include "backends/nvptx/mma_layouts.h"

#include <algorithm>

namespace blocc::nvptx {

namespace {

constexpr int64_t kTileAlignment = 128; // see shared_tile_alignment

/// The warpgroup MMA's N for an accumulator of `type`: 8 to 256 in 8s;
/// int8 into int32 takes 8, 16, 24, then 16s from 32 (the PTX ISA's
/// shapes).
bool wgmma_takes_n(int64_t n, ir::Scalar accumulator) {
  if (n < 8 || n > 256 || n % 8 != 0)
    return false;
  const bool integer =
      accumulator == ir::Scalar::I32 || accumulator == ir::Scalar::U32;
  return !integer || n <= 24 || n % 16 == 0;
}

/// The bytes a swizzle atom's row holds (the swizzling mode).
int64_t atom_row_bytes(const SharedTile &tile) {
  const int64_t columns =
      tile.swizzle.atom_columns ? tile.swizzle.atom_columns : tile.columns;
  return columns * tile.element_bytes;
}

} // namespace

std::string why_not_on_warpgroups(const ir::Operation &dot, int num_warps,
                                  const GpuArch &arch) {
  if (arch.sm != 90 || !arch.arch_specific)
    return "warpgroup MMAs need sm_90a, not " + arch.name();
  if (num_warps % 4 != 0)
    return std::to_string(num_warps) +
           " warps (warpgroup MMAs take whole warpgroups of 4)";
  std::string why;
  std::optional<MmaInstruction> mma = mma_instruction(dot, arch, &why);
  if (!mma)
    return why;
  if (mma->split_tf32)
    return "tf32x3 (its three products a step run as mma.sync)";
  if (mma->accumulator == ir::Scalar::F16)
    return "an f16 accumulator (kept on mma.sync)";
  const ir::Type &c = dot.result()->type();
  const int64_t m = c.dim(0), n = c.dim(1);
  if (m % (16 * int64_t{num_warps}) != 0)
    return "M = " + std::to_string(m) + " on " + std::to_string(num_warps) +
           " warps (warpgroup MMAs give each warp 16 rows or a multiple)";
  if (!wgmma_takes_n(n, mma->accumulator))
    return "N = " + std::to_string(n) +
           " (warpgroup MMAs take N from 8 to 256 in 8s)";
  if (mma->input_bytes == 2 && n < 16)
    return "N = " + std::to_string(n) +
           " of 16-bit B (its rows of N would be under 32 bytes)";
  return "";
}

BlockedLayout wgmma_fragments_layout(int64_t rows, int64_t cols,
                                     int64_t num_warps) {
  return BlockedLayout{{rows, cols}, {1, 2}, {8, 4}, {num_warps, 1}, {2, 1}};
}

std::optional<BlockedLayout> wgmma_accumulator_layout(const ir::Operation &dot,
                                                      int num_warps,
                                                      const GpuArch &arch) {
  if (!why_not_on_warpgroups(dot, num_warps, arch).empty())
    return std::nullopt;
  const ir::Type &c = dot.result()->type();
  return wgmma_fragments_layout(c.dim(0), c.dim(1), num_warps);
}

std::optional<BlockedLayout> wgmma_operand_a_layout(const ir::Operation &dot,
                                                    int num_warps,
                                                    const GpuArch &arch) {
  const ir::Type &a = dot.operand(0)->type();
  if (!wgmma_accumulator_layout(dot, num_warps, arch) ||
      ir::scalar_bits(a.element()) != 16 || !a_from_a_dot(dot))
    return std::nullopt;
  return wgmma_fragments_layout(a.dim(0), a.dim(1), num_warps);
}

FragmentTile wgmma_operand_tile(const ir::Operation &dot, int operand,
                                bool k_fastest) {
  FragmentTile tile = fragment_tile(dot, operand, k_fastest);
  tile.swizzle =
      wgmma_swizzle(tile.columns * tile.element_bytes, tile.element_bytes);
  return tile;
}

int64_t WgmmaOperand::start_bytes(int64_t mn, int64_t k) const {
  const int64_t bytes = tile.element_bytes;
  const int64_t w = atom_row_bytes(tile) / bytes; // columns of an atom
  // (row, column) of the element at (mn, k): a multiple of 8 rows, in an
  // atom's first vector or a whole vector along it, where the swizzle
  // moves nothing (phase 0).
  const int64_t row = mn_major ? k : mn, column = mn_major ? mn : k;
  return (column / w) * tile.rows * w * bytes + row * w * bytes +
         (column % w) * bytes;
}

WgmmaOperand wgmma_operand(const FragmentTile &tile) {
  WgmmaOperand out;
  out.tile = tile;
  out.mn_major = !tile.k_fastest;
  const int64_t row_bytes = atom_row_bytes(tile);
  out.swizzle_mode = row_bytes == 128 ? 1 : row_bytes == 64 ? 2 : 3;
  // Eight rows of an atom: the next 8 rows of M or N (K-major), the next
  // 8 rows of K (MN-major).
  out.stride_bytes = 8 * row_bytes;
  // K-major: unused where K's step stays in one atom, as it always does
  // (32 bytes of K a step); MN-major: the next atom along N.
  out.leading_bytes = out.mn_major ? tile.rows * row_bytes : 16;
  return out;
}

int64_t wgmma_tile_alignment(const SharedTile &tile) {
  return 8 * atom_row_bytes(tile);
}

int64_t shared_tile_alignment(const SharedTile &tile, bool warpgroup_mma) {
  return warpgroup_mma ? std::max(kTileAlignment, wgmma_tile_alignment(tile))
                       : kTileAlignment;
}

int64_t stages_alignment(int64_t stage_alignment) {
  return std::max(kTileAlignment, stage_alignment);
}

} // namespace blocc::nvptx
