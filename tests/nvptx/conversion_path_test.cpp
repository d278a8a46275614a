// Conversion paths read off linear layouts: a renumbering of registers, warp
// shuffles or shared memory, for blocked layouts of one and two dimensions
// and for the MMA accumulator and operand layouts.
#include "backends/nvptx/conversion_path.h"
#include "backends/nvptx/layout.h"
#include "backends/nvptx/mma_layouts.h"

#include <gtest/gtest.h>

namespace {

using blocc::ir::LinearLayout;
using namespace blocc::nvptx;

LinearLayout blocked(std::vector<int64_t> shape, int64_t width, int warps) {
  return linear_layout_of(choose_blocked_layout(shape, width, warps));
}

TEST(ConversionPath, TheSameLayoutNeedsNothingButItsRegisters) {
  for (int warps : {1, 4})
    EXPECT_EQ(
        conversion_path(blocked({512}, 4, warps), blocked({512}, 4, warps)),
        ConversionPath::Registers);
}

TEST(ConversionPath, ElementsMovingBetweenLanesOfOneWarpAreShuffled) {
  // 128 elements on one warp: 4 contiguous per lane, then 1 per lane in 4
  // rounds: each element changes lanes but never warps.
  EXPECT_EQ(conversion_path(blocked({128}, 4, 1), blocked({128}, 1, 1)),
            ConversionPath::Shuffles);
}

TEST(ConversionPath, ElementsMovingBetweenWarpsGoThroughSharedMemory) {
  // 512 elements on 4 warps: element 200 is warp 1's with 4 per lane,
  // warp 2's with 1 per lane.
  EXPECT_EQ(conversion_path(blocked({512}, 4, 4), blocked({512}, 1, 4)),
            ConversionPath::SharedMemory);
  // A transposed 2-D value: rows become columns across warps.
  LinearLayout rows = blocked({64, 64}, 4, 4);
  // Column-major: 4 elements per lane and 16 lanes down dim0, then 2
  // lanes, the 4 warps and 8 more registers along dim1.
  LinearLayout transposed = LinearLayout::identity("register", 2, "dim0") *
                            LinearLayout::identity("lane", 4, "dim0") *
                            LinearLayout::identity("lane", 1, "dim1") *
                            LinearLayout::identity("warp", 2, "dim1") *
                            LinearLayout::identity("register", 3, "dim1");
  ASSERT_EQ(transposed.output_bits("dim0"), 6);
  ASSERT_EQ(transposed.output_bits("dim1"), 6);
  EXPECT_EQ(conversion_path(rows, transposed), ConversionPath::SharedMemory);
}

TEST(ConversionPath, AnAccumulatorBecomesOperandAInItsRegisters) {
  LinearLayout accumulator =
      mma_m16n8k16_accumulator() *
      LinearLayout::from_images({{"register", 1}}, {{"dim0", 0}, {"dim1", 1}},
                                {{{0, 1}}});
  EXPECT_EQ(conversion_path(accumulator, mma_m16n8k16_operand_a()),
            ConversionPath::Registers);
  EXPECT_EQ(describe(ConversionPath::Registers), "registers");
}

} // namespace
