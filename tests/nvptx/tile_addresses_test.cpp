// The addresses the lowering emits into swizzled tiles (tile_addresses.h),
// computed without a GPU: the IR they are built of is folded to constants
// by LLVM's IRBuilder for constant lanes and warps, and compared with the
// tile's linear layout (shared_layouts.h) for every tile a dot on tensor
// cores keeps (16-bit, 32-bit tf32 and 8-bit elements; K fastest and K
// slowest; the warp grids of 4 and 8 warps); and the banks they hit: each
// of ldmatrix's 8-row matrices, and each wavefront of the 16-byte cp.async
// copies of a load's layout, meets all 32 banks once.
#include "backends/nvptx/mma_layouts.h"
#include "backends/nvptx/tile_addresses.h"
#include "ir/error.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/LLVMContext.h>

#include <gtest/gtest.h>

#include <set>

namespace {

using blocc::ir::LinearLayout;
using namespace blocc::nvptx;

int64_t constant(llvm::Value *v) {
  auto *c = llvm::dyn_cast<llvm::ConstantInt>(v);
  if (!c) {
    ADD_FAILURE() << "not folded to a constant";
    return -1;
  }
  return c->getSExtValue();
}

struct Folder {
  llvm::LLVMContext context;
  llvm::IRBuilder<> b{context};
  llvm::Value *i32(int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); }
};

int64_t offset_at(const LinearLayout &offsets, int64_t row, int64_t column) {
  return offsets.apply({{"dim0", row}, {"dim1", column}}).at("offset");
}

TEST(TileSwizzle, RowBytesChooseThePhasesAsTritonAndCutlass) {
  struct Want {
    int64_t row_bytes, per_phase, max_phase;
  };
  for (Want w : {Want{16, 8, 1}, Want{32, 4, 2}, Want{64, 2, 4},
                 Want{128, 1, 8}, Want{256, 1, 8}, Want{512, 1, 8}})
    for (int64_t bytes : {1, 2, 4}) {
      Swizzle s = swizzle_for_rows(w.row_bytes, bytes);
      EXPECT_EQ(s.vector, 16 / bytes);
      EXPECT_EQ(s.per_phase, w.per_phase) << w.row_bytes;
      EXPECT_EQ(s.max_phase, w.max_phase) << w.row_bytes;
    }
  EXPECT_THROW(swizzle_for_rows(8, 2), blocc::Error);
  // No padding: a tile is its elements.
  EXPECT_EQ(swizzled_tile(128, 32, 2).bytes(), 128 * 32 * 2);
}

TEST(TileAddresses, TheEmittedOffsetIsTheLinearLayoutsForEveryTile) {
  Folder f;
  for (int64_t bytes : {1, 2, 4})
    for (int64_t rows : {8, 16, 64, 128})
      for (int64_t row_bytes : {16, 32, 64, 128, 256, 512})
        for (bool atoms : {false, true}) {
          if (atoms && row_bytes < 32)
            continue;
          // atoms: the warpgroup MMA's tiles, rows longer than 128 bytes in
          // atoms of 128.
          SharedTile tile = swizzled_tile(rows, row_bytes / bytes, bytes);
          if (atoms)
            tile.swizzle = wgmma_swizzle(row_bytes, bytes);
          LinearLayout offsets = tile.offsets();
          for (int64_t row = 0; row < tile.rows; ++row)
            for (int64_t column = 0; column < tile.columns; ++column)
              ASSERT_EQ(constant(emit_swizzled_offset(f.b, tile, f.i32(row),
                                                      f.i32(column))),
                        offset_at(offsets, row, column))
                  << rows << " x " << tile.columns << " of " << bytes
                  << " bytes, row " << row << ", column " << column
                  << (atoms ? " in atoms" : "");
        }
}

/// A tile of a dot on tensor cores and how the dot's warps split C.
struct DotTile {
  int64_t bytes = 2;
  int operand = 0;
  bool k_fastest = true;
  int64_t m = 64, n = 64, k = 32;
  int warps = 4;

  FragmentTile tile() const {
    int64_t mn = operand == 0 ? m : n;
    FragmentTile t;
    static_cast<SharedTile &>(t) =
        swizzled_tile(k_fastest ? mn : k, k_fastest ? k : mn, bytes);
    t.k_fastest = k_fastest;
    return t;
  }
  BlockedLayout accumulator() const {
    auto [along_m, along_n] = *mma_warp_grid(m, n, warps);
    return mma_fragments_layout(m, n, along_m, along_n);
  }
  std::string str() const {
    return std::string(operand == 0 ? "A" : "B") + " of " + std::to_string(m) +
           "x" + std::to_string(n) + "x" + std::to_string(k) + ", " +
           std::to_string(8 * bytes) + "-bit, " +
           (k_fastest ? "K fastest" : "K slowest") + ", " +
           std::to_string(warps) + " warps";
  }
};

/// Every tile the tutorials' and tests' dots keep: M and N 16 to 128, K
/// of one to eight 16-byte vectors a row, both sides, K slowest only for
/// 16-bit elements.
std::vector<DotTile> dot_tiles() {
  std::vector<DotTile> out;
  for (int64_t bytes : {2, 4, 1})
    for (int operand : {0, 1})
      for (bool k_fastest : {true, false}) {
        if (!k_fastest && bytes != 2)
          continue;
        for (int64_t mn : {32, 64, 128})
          for (int64_t k_bytes : {32, 64, 128, 256})
            for (int warps : {4, 8}) {
              DotTile t{bytes,  operand,         k_fastest, mn,
                        2 * mn, k_bytes / bytes, warps};
              if (mma_warp_grid(t.m, t.n, warps))
                out.push_back(t);
              t.n = mn / 2;
              if (t.n >= 16 && mma_warp_grid(t.m, t.n, warps))
                out.push_back(t);
            }
      }
  return out;
}

/// The tile's elements each lane of `warp` hands ldmatrix at step `step`
/// along K and tile `t` along M or N, as the lowering computes them
/// (TileAddresses on ldmatrix_rows), checked against the linear layout.
std::vector<int64_t> ldmatrix_offsets(Folder &f, const DotTile &d,
                                      const FragmentTile &tile, int64_t warp,
                                      int64_t step, int64_t t) {
  BlockedLayout acc = d.accumulator();
  LinearLayout rows = ldmatrix_rows(tile, d.operand, acc, d.bytes);
  LinearLayout offsets = tile.offsets();
  const int64_t k = step * 32 / d.bytes;
  const int64_t mn = d.operand == 0 ? 2 * acc.tile(0) * t : acc.tile(1) * t;
  std::vector<int64_t> out;
  for (int64_t lane = 0; lane < 32; ++lane) {
    ThreadPart part = emit_thread_part(f.b, rows, f.i32(lane), f.i32(warp));
    LinearLayout::Point at = rows.apply({{"lane", lane}, {"warp", warp}});
    EXPECT_EQ(constant(part.row), at.at("dim0")) << d.str();
    EXPECT_EQ(constant(part.column), at.at("dim1")) << d.str();
    TileAddresses addresses(f.b, tile, part, f.b.getInt8Ty(),
                            [](llvm::Value *index) { return index; });
    int64_t row = d.k_fastest ? mn : k, column = d.k_fastest ? k : mn;
    int64_t got = constant(addresses.index(row, column));
    EXPECT_EQ(got,
              offset_at(offsets, at.at("dim0") + row, at.at("dim1") + column))
        << d.str() << ", lane " << lane << ", step " << step << ", tile " << t;
    // A loop's steps along K: the same element, computed whole at run time.
    EXPECT_EQ(constant(addresses.at(f.i32(row), f.i32(column))), got)
        << d.str() << ", lane " << lane << ", step " << step << ", tile " << t;
    out.push_back(got);
  }
  return out;
}

/// How many of ldmatrix's phases (one 8 x 16-byte matrix each) reading
/// `tile` for `d` hit a bank twice, over every warp, step and tile; the
/// phases counted in `phases`.
int ldmatrix_conflicts(Folder &f, const DotTile &d, const FragmentTile &tile,
                       int &phases) {
  BlockedLayout acc = d.accumulator();
  const int64_t tiles =
      d.operand == 0 ? d.m / (2 * acc.tile(0)) : d.n / acc.tile(1);
  const int64_t matrices = d.operand == 1 && tiles == 1 ? 2 : 4; // .x2
  int conflicts = 0;
  for (int64_t warp = 0; warp < d.warps; ++warp)
    for (int64_t step = 0; step < d.k * d.bytes / 32; ++step)
      for (int64_t t = 0; t < tiles; t += d.operand == 0 ? 1 : 2) {
        std::vector<int64_t> offsets =
            ldmatrix_offsets(f, d, tile, warp, step, t);
        for (int64_t matrix = 0; matrix < matrices; ++matrix) {
          std::set<int64_t> bank_groups; // 16 bytes: 4 banks
          for (int64_t lane = 8 * matrix; lane < 8 * matrix + 8; ++lane) {
            int64_t byte = offsets[lane] * d.bytes;
            EXPECT_EQ(byte % 16, 0) << d.str();
            bank_groups.insert(byte / 16 % 8);
          }
          conflicts += bank_groups.size() != 8;
          ++phases;
        }
      }
  return conflicts;
}

TEST(TileAddresses, EveryLdmatrixPhaseMeetsThe32BanksOnce) {
  Folder f;
  int phases = 0;
  for (const DotTile &d : dot_tiles())
    ASSERT_EQ(ldmatrix_conflicts(f, d, d.tile(), phases), 0) << d.str();
  EXPECT_GT(phases, 1000);
}

TEST(TileAddresses, UnswizzledRowsOf32BytesOrMoreWouldConflict) {
  // The check above can fail: the same tiles without their swizzle put a
  // matrix's 8 rows on the same banks.
  Folder f;
  int phases = 0;
  for (const DotTile &d : dot_tiles()) {
    FragmentTile plain = d.tile();
    plain.swizzle.max_phase = 1;
    if (plain.columns * plain.element_bytes >= 32) {
      EXPECT_GT(ldmatrix_conflicts(f, d, plain, phases), 0) << d.str();
    }
  }
}

/// The copies of a load of a dot's operand as gpu-pipeline-loops makes
/// them: 16 bytes per thread along the global rows, which run along K
/// into a tile with K fastest (A [M, K], B^T), along M or N into a 16-bit
/// tile with K slowest (B [K, N]).
TEST(TileAddresses, EveryWavefrontOfCpAsyncCopiesMeetsThe32BanksOnce) {
  Folder f;
  int checked = 0;
  for (const DotTile &d : dot_tiles()) {
    // A 16-bit tile with K slowest is copied from rows along M or N; every
    // other tile from rows along K.
    const int64_t mn = d.operand == 0 ? d.m : d.n;
    const bool along_k = d.k_fastest;
    const int64_t fast = along_k ? d.k : mn, slow = along_k ? mn : d.k;
    BlockedLayout p =
        choose_blocked_layout({slow, fast}, 16 / d.bytes, d.warps);
    if (p.has_replicas())
      continue; // not copied ahead (pipeline_loads.h)
    // The value's dimensions (operand order: A [m, k], B [k, n]) in the
    // load's parent, whose last dimension is the global rows'.
    const int k_dim = d.operand == 0 ? 1 : 0;
    Layout layout{
        0, {}, {d.operand == 0 ? d.m : d.k, d.operand == 0 ? d.k : d.n}};
    layout.dims = along_k == (k_dim == 1) ? std::vector<int>{0, 1}
                                          : std::vector<int>{1, 0};
    LinearLayout value = linear_layout_of(p, layout);
    FragmentTile tile = d.tile();
    LinearLayout offsets = tile.offsets();
    const int row_dim = tile.k_fastest ? 1 - k_dim : k_dim;
    const int64_t width = p.size_per_thread[1];
    const int64_t access = width * d.bytes;
    if (access < 4)
      continue;
    for (int64_t r = 0; r < p.num_registers(); r += width)
      for (int64_t warp = 0; warp < d.warps; ++warp) {
        std::vector<int64_t> words; // of every lane, in lane order
        for (int64_t lane = 0; lane < 32; ++lane) {
          LinearLayout::Point first =
              value.apply({{"lane", lane}, {"warp", warp}});
          LinearLayout::Point at =
              value.apply({{"register", r}, {"lane", lane}, {"warp", warp}});
          const std::string dims[2] = {"dim0", "dim1"};
          ThreadPart part =
              thread_part_of(value, row_dim, f.i32(first.at(dims[row_dim])),
                             f.i32(first.at(dims[1 - row_dim])));
          TileAddresses addresses(f.b, tile, part, f.b.getInt8Ty(),
                                  [](llvm::Value *index) { return index; });
          int64_t row = at.at(dims[row_dim]) - first.at(dims[row_dim]);
          int64_t column =
              at.at(dims[1 - row_dim]) - first.at(dims[1 - row_dim]);
          int64_t got = constant(addresses.index(row, column));
          ASSERT_EQ(got, offset_at(offsets, at.at(dims[row_dim]),
                                   at.at(dims[1 - row_dim])))
              << d.str() << ", register " << r << ", lane " << lane;
          for (int64_t word = 0; word < access / 4; ++word)
            words.push_back(got * d.bytes / 4 + word);
        }
        // A wavefront: 128 bytes of the warp's accesses, lanes in order.
        const size_t per_wavefront = 32;
        for (size_t w = 0; w < words.size(); w += per_wavefront) {
          std::set<int64_t> banks;
          for (size_t i = w; i < w + per_wavefront; ++i)
            banks.insert(words[i] % 32);
          ASSERT_EQ(banks.size(), per_wavefront)
              << d.str() << ", register " << r << ", warp " << warp
              << ", wavefront " << w / per_wavefront;
          ++checked;
        }
      }
  }
  EXPECT_GT(checked, 1000);
}

} // namespace
