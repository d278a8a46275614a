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
  if (n % (8 * int64_t{num_warps}) != 0)
    return "N = " + std::to_string(n) + " on " + std::to_string(num_warps) +
           " warps (tensor cores take 8 columns per warp: N a multiple of " +
           std::to_string(8 * num_warps) + ")";
  return "";
}

std::optional<BlockedLayout> mma_accumulator_layout(const ir::Operation &dot,
                                                    int num_warps) {
  if (!why_not_on_tensor_cores(dot, num_warps).empty())
    return std::nullopt;
  const ir::Type &c = dot.result()->type();
  return BlockedLayout{{c.dim(0), c.dim(1)}, {1, 2}, {8, 4}, {1, num_warps}};
}

MmaFragmentElement mma_fragment_element(const BlockedLayout &layout,
                                        int64_t r) {
  std::vector<int64_t> offset = layout.register_offset(r);
  int64_t tile_columns = layout.tile(1); // 8 per warp
  int64_t rows = offset[0] % 16, columns = offset[1] % tile_columns;
  return {offset[0] / 16, offset[1] / tile_columns,
          (rows >= 8 ? 2 : 0) + columns};
}

} // namespace blocc::nvptx
