// Conversion paths read off linear layouts: a renumbering of registers, warp
// shuffles or shared memory, for blocked layouts of one and two dimensions
// and for the MMA accumulator and operand layouts.
#include "backends/nvptx/conversion_path.h"
#include "backends/nvptx/layout.h"
#include "backends/nvptx/mma_layouts.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <optional>

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

// ---- routes within warps ----

/// Checks `route` lane by lane: every destination register of every thread
/// gets the coordinates the destination layout wants, from the register
/// and lane the route names, in the thread's own warp.
void expect_route_delivers(const LinearLayout &from, const LinearLayout &to,
                           const WarpRoute &route) {
  const int64_t lanes = int64_t{1} << to.input_bits("lane");
  const int64_t warps = int64_t{1} << to.input_bits("warp");
  const int64_t registers = int64_t{1} << to.input_bits("register");
  ASSERT_EQ(route.source_register.size(), size_t(registers));
  for (int64_t w = 0; w < warps; ++w)
    for (int64_t l = 0; l < lanes; ++l) {
      int64_t base = 0;
      for (size_t b = 0; b < route.lane_images.size(); ++b)
        if (l >> b & 1)
          base ^= route.lane_images[b];
      for (int64_t r = 0; r < registers; ++r) {
        LinearLayout::Point want =
            to.apply({{"register", r}, {"lane", l}, {"warp", w}});
        LinearLayout::Point got =
            from.apply({{"register", route.source_register[size_t(r)]},
                        {"lane", base ^ route.lane_xor[size_t(r)]},
                        {"warp", w}});
        ASSERT_EQ(got, want)
            << "register " << r << ", lane " << l << ", warp " << w << "\nfrom "
            << from.str() << "\nto " << to.str();
      }
    }
}

TEST(WarpRoute, TheSameLayoutRenumbersNothing) {
  std::optional<WarpRoute> route =
      warp_route(blocked({512}, 4, 4), blocked({512}, 4, 4));
  ASSERT_TRUE(route);
  EXPECT_FALSE(route->crosses_lanes());
  for (size_t r = 0; r < route->source_register.size(); ++r)
    EXPECT_EQ(route->source_register[r], int64_t(r));
}

TEST(WarpRoute, ElementsBetweenWarpsHaveNone) {
  EXPECT_FALSE(warp_route(blocked({512}, 4, 4), blocked({512}, 1, 4)));
}

TEST(WarpRoute, RegistersExchangedBetweenLanesAreShuffled) {
  // 64 elements on one warp, 2 per lane: as lanes 0-31 then registers
  // (element = r * 32 + lane) and as registers then lanes (element = lane
  // * 2 + r). Element e = 32 r + l sits in lane e / 2, register e % 2 of
  // the second: the register a thread reads depends on its lane, so no
  // route; the other way round it does not.
  LinearLayout lanes_first = LinearLayout::identity("lane", 5, "dim0") *
                             LinearLayout::identity("register", 1, "dim0") *
                             LinearLayout::zeros("warp", 0, "dim0");
  LinearLayout registers_first = LinearLayout::identity("register", 1, "dim0") *
                                 LinearLayout::identity("lane", 5, "dim0") *
                                 LinearLayout::zeros("warp", 0, "dim0");
  EXPECT_FALSE(warp_route(registers_first, lanes_first));
  // The same elements with lane bit 4 and register bit 0 swapped: lane l
  // register r holds what lane l ^ 16 register r held, for half the
  // registers.
  LinearLayout swapped = LinearLayout::from_images(
      {{"register", 1}, {"lane", 5}, {"warp", 0}}, {{"dim0", 6}},
      {{{16}}, {{1}, {2}, {4}, {8}, {32}}, {}});
  LinearLayout plain = LinearLayout::from_images(
      {{"register", 1}, {"lane", 5}, {"warp", 0}}, {{"dim0", 6}},
      {{{32}}, {{1}, {2}, {4}, {8}, {16}}, {}});
  std::optional<WarpRoute> route = warp_route(plain, swapped);
  ASSERT_FALSE(route); // lane bit 4 picks the register: not a route
  // A lane permutation: the destination's lanes reversed in bit order.
  LinearLayout reversed = LinearLayout::from_images(
      {{"register", 1}, {"lane", 5}, {"warp", 0}}, {{"dim0", 6}},
      {{{32}}, {{16}, {8}, {4}, {2}, {1}}, {}});
  route = warp_route(plain, reversed);
  ASSERT_TRUE(route);
  EXPECT_TRUE(route->crosses_lanes());
  EXPECT_FALSE(route->keeps_lanes());
  expect_route_delivers(plain, reversed, *route);
}

TEST(WarpRoute, EveryRouteBetweenBlockedLayoutsDelivers) {
  // Every pair of blocked layouts of these shapes (widths 1-8, 1-8 warps;
  // small shapes replicate over lanes and warps) that has a route: checked
  // thread by thread.
  int routes = 0, crossing = 0;
  for (std::vector<int64_t> shape : {std::vector<int64_t>{8},
                                     {16},
                                     {64},
                                     {256},
                                     {1024},
                                     {4, 8},
                                     {16, 16},
                                     {32, 64},
                                     {64, 8},
                                     {8, 128},
                                     {128, 64}})
    for (int warps : {1, 2, 4, 8})
      for (int64_t a : {1, 2, 4, 8})
        for (int64_t b : {1, 2, 4, 8}) {
          BlockedLayout from = choose_blocked_layout(shape, a, warps);
          BlockedLayout to = choose_blocked_layout(shape, b, warps);
          std::optional<WarpRoute> route =
              warp_route(linear_layout_of(from), linear_layout_of(to));
          if (!route)
            continue;
          ++routes;
          crossing += route->crosses_lanes();
          expect_route_delivers(linear_layout_of(from), linear_layout_of(to),
                                *route);
        }
  EXPECT_GT(routes, 0);
  std::printf("%d routes between blocked layouts, %d crossing lanes\n", routes,
              crossing);
}
