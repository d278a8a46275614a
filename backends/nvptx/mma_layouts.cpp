#include "backends/nvptx/mma_layouts.h"

namespace blocc::nvptx {

namespace {

using ir::LinearLayout;

/// The lanes of every m16n8 fragment: lane % 4 picks a pair of columns
/// (dimension `pairs`, bits 1 and 2), lane / 4 the row (dimension `rows`,
/// bits 0 to 2).
std::vector<std::vector<int64_t>> lane_images(int rows, int pairs) {
  std::vector<std::vector<int64_t>> images;
  auto at = [&](int dimension, int64_t value) {
    std::vector<int64_t> coordinates = {0, 0};
    coordinates[size_t(dimension)] = value;
    return coordinates;
  };
  images.push_back(at(pairs, 2));
  images.push_back(at(pairs, 4));
  images.push_back(at(rows, 1));
  images.push_back(at(rows, 2));
  images.push_back(at(rows, 4));
  return images;
}

} // namespace

LinearLayout mma_m16n8k16_accumulator() {
  // c0..c3: i & 1 the second column of the pair, i & 2 the row 8 below.
  return LinearLayout::from_images({{"register", 2}, {"lane", 5}},
                                   {{"dim0", 4}, {"dim1", 3}},
                                   {{{0, 1}, {8, 0}}, lane_images(0, 1)});
}

LinearLayout mma_m16n8k16_operand_a() {
  // a0..a7: i & 1 the second column, i & 2 the row 8 below, i & 4 the
  // columns 8 to the right.
  return LinearLayout::from_images(
      {{"register", 3}, {"lane", 5}}, {{"dim0", 4}, {"dim1", 4}},
      {{{0, 1}, {8, 0}, {0, 8}}, lane_images(0, 1)});
}

LinearLayout mma_m16n8k16_operand_b() {
  // b0..b3: i & 1 the second row (k) of the pair, i & 2 the rows 8 below;
  // the group is the column (n).
  return LinearLayout::from_images({{"register", 2}, {"lane", 5}},
                                   {{"dim0", 4}, {"dim1", 3}},
                                   {{{1, 0}, {8, 0}}, lane_images(1, 0)});
}

std::optional<std::pair<int64_t, int64_t>> mma_warp_grid(int64_t m, int64_t n,
                                                         int num_warps) {
  // Warps split the block where each warp's part is longer, so that a
  // warp's tile of C stays near square: it then reads the fewest operand
  // fragments per MMA it issues (shared memory's bandwidth is the bound).
  int64_t along_m = 1, along_n = 1;
  while (along_m * along_n < num_warps) {
    bool m_can = m % (32 * along_m) == 0, n_can = n % (16 * along_n) == 0;
    if (m_can && (m / along_m >= n / along_n || !n_can))
      along_m *= 2;
    else if (n_can)
      along_n *= 2;
    else
      return std::nullopt;
  }
  return std::make_pair(along_m, along_n);
}

std::string why_not_on_tensor_cores(const ir::Operation &dot, int num_warps) {
  const ir::Type &a = dot.operand(0)->type(), &b = dot.operand(1)->type();
  const ir::Type &c = dot.result()->type();
  bool f16 = a.element() == ir::Scalar::F16 && b.element() == ir::Scalar::F16;
  bool bf16 =
      a.element() == ir::Scalar::BF16 && b.element() == ir::Scalar::BF16;
  if (c.rank() != 2)
    return "a batched dot (tensor cores take two-dimensional blocks)";
  if ((!f16 && !bf16) || c.element() != ir::Scalar::F32)
    return a.str() + " by " + b.str() + " into " +
           std::string(ir::scalar_name(c.element())) +
           " (tensor cores take f16 by f16 or bf16 by bf16 into f32)";
  int64_t m = c.dim(0), n = c.dim(1), k = a.dim(1);
  if (m % 16 != 0 || k % 16 != 0)
    return "M = " + std::to_string(m) + ", K = " + std::to_string(k) +
           " (tensor cores take multiples of 16)";
  if (!mma_warp_grid(m, n, num_warps))
    return std::to_string(m) + " x " + std::to_string(n) + " on " +
           std::to_string(num_warps) +
           " warps (tensor cores take a 16 x 8 tile or more per warp)";
  return "";
}

std::optional<BlockedLayout> mma_accumulator_layout(const ir::Operation &dot,
                                                    int num_warps) {
  if (!why_not_on_tensor_cores(dot, num_warps).empty())
    return std::nullopt;
  const ir::Type &c = dot.result()->type();
  auto [along_m, along_n] = *mma_warp_grid(c.dim(0), c.dim(1), num_warps);
  return BlockedLayout{
      {c.dim(0), c.dim(1)}, {1, 2}, {8, 4}, {along_m, along_n}};
}

MmaFragmentElement mma_fragment_element(const BlockedLayout &layout,
                                        int64_t r) {
  // Along M the registers step by the tile (8 rows a warp): repetitions
  // 2t and 2t + 1 are rows g and g + 8 of fragment t. Along N they step by
  // the tile too (8 columns a warp), the column pair within it.
  std::vector<int64_t> offset = layout.register_offset(r);
  int64_t row_repetition = offset[0] / layout.tile(0);
  int64_t column = offset[1] % layout.tile(1);
  return {row_repetition / 2, offset[1] / layout.tile(1),
          (row_repetition % 2) * 2 + column};
}

} // namespace blocc::nvptx
