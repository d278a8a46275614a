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

} // namespace blocc::nvptx
