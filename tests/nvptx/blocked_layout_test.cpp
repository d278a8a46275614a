// The GPU backend's blocked layouts as linear layouts: for every layout
// choose_blocked_layout makes (1-D and 2-D shapes from 1 element up, 1 to
// 8 warps, 1 to 8 elements per thread), the linear form puts every
// (register, lane, warp) at the element the lowering gives it, holds every
// element, and replicates exactly the threads the lowering does not let
// write. Two layouts of different parents are one placement where their
// linear maps are (same_linear_layout: the row slices of parents that
// differ only along the columns).
#include "backends/nvptx/layout.h"

#include <gtest/gtest.h>

namespace {

using blocc::ir::LinearLayout;
using blocc::nvptx::BlockedLayout;
using blocc::nvptx::choose_blocked_layout;
using blocc::nvptx::kWarpSize;
using blocc::nvptx::linear_layout_of;

/// Where the lowering puts register r of thread (lane, warp), and whether
/// that thread owns its elements (the first copy of a replicated tile).
struct Placement {
  std::vector<int64_t> element;
  bool owner = true;
};

Placement lowering_placement(const BlockedLayout &l, int64_t r, int64_t lane,
                             int64_t warp) {
  Placement p;
  p.element.assign(size_t(l.rank()), 0);
  std::vector<int64_t> offset = l.register_offset(r);
  for (int d = l.rank() - 1; d >= 0; --d) {
    int64_t lane_d = lane % l.threads_per_warp[d];
    lane /= l.threads_per_warp[d];
    int64_t warp_d = warp % l.warps_per_cta[d];
    warp /= l.warps_per_cta[d];
    int64_t first =
        (warp_d * l.threads_per_warp[d] + lane_d) * l.size_per_thread[d];
    if (l.tile(d) > l.shape[d]) {
      p.owner = p.owner && first < l.shape[d];
      first %= l.shape[d];
    }
    p.element[size_t(d)] = first + offset[size_t(d)];
  }
  return p;
}

void expect_linear_form_matches(const BlockedLayout &l, int warps) {
  SCOPED_TRACE(l.str());
  LinearLayout linear = linear_layout_of(l);
  EXPECT_TRUE(linear.is_surjective()) << linear.str();
  EXPECT_EQ(linear.is_injective(), !l.has_replicas()) << linear.str();
  auto replicated = linear.replicated_bits();
  for (int64_t warp = 0; warp < warps; ++warp)
    for (int64_t lane = 0; lane < kWarpSize; ++lane)
      for (int64_t r = 0; r < l.num_registers(); ++r) {
        Placement want = lowering_placement(l, r, lane, warp);
        LinearLayout::Point at =
            linear.apply({{"register", r}, {"lane", lane}, {"warp", warp}});
        for (int d = 0; d < l.rank(); ++d)
          ASSERT_EQ(at["dim" + std::to_string(d)], want.element[size_t(d)])
              << "register " << r << ", lane " << lane << ", warp " << warp;
        // The owner is the copy whose replicated lane and warp bits are 0.
        bool first_copy = true;
        for (const auto &[name, bits] : replicated)
          for (int b : bits)
            if (name != "register")
              first_copy =
                  first_copy && ((name == "lane" ? lane : warp) >> b & 1) == 0;
        ASSERT_EQ(first_copy, want.owner)
            << "lane " << lane << ", warp " << warp;
      }
}

TEST(BlockedLayout, EveryChosenLayoutIsTheLinearMapTheLoweringUses) {
  for (int warps : {1, 2, 4, 8})
    for (int64_t width : {1, 2, 4, 8}) {
      for (int64_t n = 1; n <= 4096; n *= 2)
        expect_linear_form_matches(choose_blocked_layout({n}, width, warps),
                                   warps);
      for (int64_t rows = 1; rows <= 128; rows *= 4)
        for (int64_t cols = 1; cols <= 256; cols *= 4)
          expect_linear_form_matches(
              choose_blocked_layout({rows, cols}, width, warps), warps);
    }
}

TEST(BlockedLayout, AConversionBetweenTwoBlockedLayoutsMovesEveryElement) {
  // 4 elements per thread to 1 per thread, 128 x 64 on 4 warps: each
  // element's new holder is the (register, lane, warp) that the second
  // layout puts at the same coordinates.
  BlockedLayout from = choose_blocked_layout({128, 64}, 4, 4);
  BlockedLayout to = choose_blocked_layout({128, 64}, 1, 4);
  LinearLayout a = linear_layout_of(from), b = linear_layout_of(to);
  LinearLayout conversion = a.invert_and_compose(b);
  for (int64_t warp = 0; warp < 4; ++warp)
    for (int64_t lane = 0; lane < kWarpSize; ++lane)
      for (int64_t r = 0; r < from.num_registers(); ++r) {
        LinearLayout::Point x = {
            {"register", r}, {"lane", lane}, {"warp", warp}};
        EXPECT_EQ(b.apply(conversion.apply(x)), a.apply(x));
      }
}

} // namespace

namespace {

using blocc::nvptx::canonical_register;
using blocc::nvptx::Layout;

// A value's layout over a 2-D parent: whole, sliced along either
// dimension (expand_dims' operand), or with a size-1 dimension (broadcast's
// operand).
std::vector<Layout> value_layouts(const BlockedLayout &p) {
  return {Layout{0, {0, 1}, p.shape}, Layout{0, {1}, {p.shape[1]}},
          Layout{0, {0}, {p.shape[0]}}, Layout{0, {0, 1}, {p.shape[0], 1}},
          Layout{0, {0, 1}, {1, p.shape[1]}}};
}

TEST(BlockedLayout, CanonicalRegistersClearTheRegisterBitsAValueReplicates) {
  for (int warps : {1, 4})
    for (int64_t rows = 1; rows <= 64; rows *= 4)
      for (int64_t cols = 1; cols <= 128; cols *= 4) {
        BlockedLayout parent = choose_blocked_layout({rows, cols}, 4, warps);
        for (const Layout &value : value_layouts(parent)) {
          LinearLayout linear = linear_layout_of(parent, value);
          int64_t replicated = 0;
          auto bits = linear.replicated_bits();
          for (int b : bits["register"])
            replicated |= int64_t{1} << b;
          for (int64_t r = 0; r < parent.num_registers(); ++r)
            ASSERT_EQ(canonical_register(parent, value, r), r & ~replicated)
                << parent.str() << ", register " << r << ", " << linear.str();
        }
      }
}

TEST(BlockedLayout,
     SlicesOfParentsThatDifferOnlyAlongTheSlicedDimensionAreOne) {
  // 4 threads along the columns in both, 4 or 8 columns each: the rows'
  // slices place every row in the same registers of the same threads,
  // the tiles themselves do not.
  BlockedLayout four{{64, 64}, {1, 4}, {8, 4}, {4, 1}};
  BlockedLayout eight{{64, 64}, {1, 8}, {8, 4}, {4, 1}};
  Layout rows_of_four{0, {0}, {64}}, rows_of_eight{1, {0}, {64}};
  EXPECT_TRUE(blocc::nvptx::same_linear_layout(four, rows_of_four, eight,
                                               rows_of_eight));
  Layout tile_of_four{0, {0, 1}, {64, 64}}, tile_of_eight{1, {0, 1}, {64, 64}};
  EXPECT_FALSE(blocc::nvptx::same_linear_layout(four, tile_of_four, eight,
                                                tile_of_eight));
  // Columns: 4 and 8 a thread, not one placement.
  EXPECT_FALSE(blocc::nvptx::same_linear_layout(four, Layout{0, {1}, {64}},
                                                eight, Layout{1, {1}, {64}}));
  EXPECT_TRUE(blocc::nvptx::is_full(four, tile_of_four));
  EXPECT_FALSE(blocc::nvptx::is_full(four, rows_of_four));
  EXPECT_FALSE(blocc::nvptx::is_full(four, Layout{0, {0, 1}, {64, 1}}));
}

} // namespace
