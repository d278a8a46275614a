// The register layouts of the tensor cores' warp-level MMA (mma.sync) as
// linear layouts: which element of a tile each (register, lane) of a warp
// holds for the accumulator and the two operands. They are the layouts a
// dot on tensor cores converts its operands into and its result out of;
// the conversions come from the maps (ir/linear_layout.h), not from a case
// per pair.
//
// m16n8k16 with f16/bf16 operands (the PTX ISA's fragment tables): lanes
// form 8 groups of 4 (group = lane / 4, the row; lane % 4, a pair of
// columns), and a thread's registers add the second element of its pair,
// the row 8 below, and (for A, whose K is 16) the columns 8 to the right.
//
// The other input types (m16n8k8 tf32, m16n8k32 s8/u8/e4m3/e5m2) have,
// in 32-bit words, the very same fragments: every row of A and column of
// B is 32 bytes of K, lane % 4 picks a word of it and the registers add
// the row 8 below and the word 4 to the right (16 bytes). Only the
// elements packed in a word differ (one tf32, two halves, four bytes), so
// that one lowering (lower_dot.cpp) serves them all with the K of a step
// being 32 bytes of elements.
#pragma once

#include "backends/nvptx/gpu_arch.h"
#include "backends/nvptx/layout.h"
#include "backends/nvptx/shared_layouts.h"
#include "ir/function.h"
#include "ir/linear_layout.h"

#include <optional>
#include <string>
#include <utility>

namespace blocc::nvptx {

/// The 16 x 8 accumulator (C and D, f32 or f16): 4 registers per lane;
/// outputs dim0 (row, m) and dim1 (column, n).
ir::LinearLayout mma_m16n8k16_accumulator();

/// Operand A, 16 x 16 (m x k), f16/bf16: 8 elements per lane (four
/// .f16x2 registers); outputs dim0 (m) and dim1 (k).
ir::LinearLayout mma_m16n8k16_operand_a();

/// Operand B, 16 x 8 (k x n), f16/bf16: 4 elements per lane (two .f16x2
/// registers); outputs dim0 (k) and dim1 (n).
ir::LinearLayout mma_m16n8k16_operand_b();

/// m16n8k8 with tf32 operands: A, 16 x 8 (m x k), 4 registers of one
/// element; B, 8 x 8 (k x n), 2 registers.
ir::LinearLayout mma_m16n8k8_tf32_operand_a();
ir::LinearLayout mma_m16n8k8_tf32_operand_b();

/// m16n8k32 with 8-bit operands (s8, u8, e4m3, e5m2): A, 16 x 32, 16
/// elements per lane (four registers of four bytes, the lowest k in the
/// lowest byte); B, 32 x 8, 8 elements (two registers).
ir::LinearLayout mma_m16n8k32_8bit_operand_a();
ir::LinearLayout mma_m16n8k32_8bit_operand_b();

/// The mma.sync a dot on tensor cores issues for each 16 x 8 tile of C.
/// The accumulator's elements sit as mma_m16n8k16_accumulator() says
/// whatever its type (f16: c0 c1 and c2 c3 packed in two .f16x2
/// registers, the lower column in the low half).
struct MmaInstruction {
  int64_t k = 16;   // m16n8k<k>: 32 bytes of the input type
  std::string a, b; // PTX types: f16 bf16 tf32 s8 u8 e4m3 e5m2
  ir::Scalar accumulator = ir::Scalar::F32; // F32, F16 or I32
  int64_t input_bytes = 2;                  // bytes of an element of A and B
  bool split_tf32 = false; // tf32x3: three MMAs per tile (below)
  /// "mma.sync m16n8k8 tf32 into f32"
  std::string describe() const;
};

/// The MMA that `dot` runs on with `arch`, or nullopt where its types or
/// shape take none (then `why`, where given, says why). f32 inputs run
/// on tensor cores as tf32 only where their input_precision asks for it
/// ("tf32", or "tf32x3": each input split into a tf32 big part and a tf32
/// small part, three MMAs adding big x big, big x small and small x big);
/// without the attribute (hand-written IR) a dot of f32 is IEEE, as the
/// interpreter computes it. fp8 needs sm_89 or newer.
std::optional<MmaInstruction> mma_instruction(const ir::Operation &dot,
                                              const GpuArch &arch,
                                              std::string *why = nullptr);

/// How `num_warps` warps split an m x n block of C for MMAs: (warps along
/// M, warps along N), each warp's part a whole number of 16 x 8 tiles;
/// nullopt where no split gives every warp such a part. `rows_only`: the
/// warps split M alone (each warp holds whole rows).
std::optional<std::pair<int64_t, int64_t>>
mma_warp_grid(int64_t m, int64_t n, int num_warps, bool rows_only = false);

/// Whether `dot` is a link of a chain of dots in its block: its result
/// becomes the A of a later dot, or its A comes from an earlier dot's
/// result (attention: softmax(Q K^T) V). The warps of a chain split M
/// alone, so that the row reductions between the links stay within a
/// warp and every link's rows are where the next one needs them.
bool in_dot_chain(const ir::Operation &dot);

/// Whether `dot`'s A is computed, in its block, from another dot's result
/// (the later link of a chain: attention's P).
bool a_from_a_dot(const ir::Operation &dot);

/// The blocked layout of a dot's result that is at once the accumulator
/// fragments of m16n8k16 MMAs, where the dot can run on tensor cores:
/// two consecutive columns per thread, the lanes of a warp 8 rows by 4
/// column pairs, the warps in mma_warp_grid's grid, the tile repeated
/// over the block. A thread's registers along M are, in pairs, rows g and
/// g + 8 of one 16-row fragment (rows one tile apart in C: the fragment's
/// rows need not be adjacent, since each lane hands ldmatrix its own row's
/// address); along N, the 8-column tiles of the thread's warp. Every
/// thread owns its elements. nullopt unless the dot multiplies
/// two-dimensional blocks in an mma_instruction, M in 16s and K in the
/// instruction's K, and the warps can split the block.
std::optional<BlockedLayout> mma_accumulator_layout(const ir::Operation &dot,
                                                    int num_warps,
                                                    const GpuArch &arch);

/// The blocked layout whose registers are m16n8k16 accumulator fragments
/// (or, with `cols` along K, A's fragments: see below) of a rows x cols
/// block over a grid of warps: two consecutive columns per thread, the
/// lanes of a warp 8 rows by 4 column pairs, the tile repeated over the
/// block.
BlockedLayout mma_fragments_layout(int64_t rows, int64_t cols, int64_t along_m,
                                   int64_t along_n);

/// Where a dot of a chain takes its A from another dot's result (the
/// result, cast or scaled, of softmax(Q K^T) as the A of its product with
/// V): the blocked layout in which A's registers are already its m16n8k16
/// fragments — the accumulator layout of A's own shape, since an
/// accumulator's tiles j and j + 1 (columns 16s .. 16s + 15) hold, pair by
/// pair, the A fragment of the step of 16 along K at 16s. A computed in it
/// needs no shared memory. Also a loop's dot of such a chain whose A is
/// computed before the loop (attention's Q): its fragments then stay in
/// registers across the loop. Only for 16-bit A, whose fragments pair
/// two accumulator elements to a word. nullopt for the other dots.
std::optional<BlockedLayout> mma_operand_a_layout(const ir::Operation &dot,
                                                  int num_warps,
                                                  const GpuArch &arch);

/// Why `dot` does not run on tensor cores on `num_warps` warps of
/// `arch`, in words for the layouts inspection stage ("" when it does).
std::string why_not_on_tensor_cores(const ir::Operation &dot, int num_warps,
                                    const GpuArch &arch);

/// How a dot on tensor cores keeps an operand in shared memory for
/// ldmatrix: A (m x k) and B (k x n) as rows of K (`k_fastest`: [mn][k])
/// or rows of M or N ([k][mn], read with ldmatrix's .trans), a swizzled
/// tile (shared_layouts.h) without padding: each row's 16-byte vectors
/// are XOR-swizzled so that the 8 rows one phase of ldmatrix reads, and
/// the 16-byte copies of 8 lanes, meet every bank once. ldmatrix moves
/// 16-bit elements: its .trans transposes halves, so tiles of 32-bit or
/// 8-bit elements are kept with K fastest (fragment_tile_k_fastest).
struct FragmentTile : SharedTile {
  bool k_fastest = true;
};
/// The tile of operand `operand` (0: A, 1: B) of `dot`.
FragmentTile fragment_tile(const ir::Operation &dot, int operand,
                           bool k_fastest);
/// The GPU IR's shared layout of operand `operand`'s tile, of the
/// operand's shape ([M, K] for A, [K, N] for B): swizzled, K fastest
/// (order [1,0] for A, [0,1] for B) where the tile keeps K fastest.
SharedLayout shared_layout_of(const FragmentTile &tile, int operand);
/// The tile a shared layout of operand `operand` keeps, with elements of
/// `element_bytes`; nullopt where it is no tile that ldmatrix reads (a
/// padded layout, or a swizzle other than swizzle_for_rows gives its rows)
/// or, with `warpgroups`, that warpgroup MMAs read (wgmma_swizzle).
std::optional<FragmentTile> fragment_tile_of(const SharedLayout &shared,
                                             int operand, int64_t element_bytes,
                                             bool warpgroups = false);
/// The orientation of the tile of an operand written from registers held
/// in `layout` over `parent`: as its registers run (operand_runs_along_k),
/// so that they are written as vectors; but K fastest for elements other
/// than 16 bits, so that ldmatrix (without .trans) reads it.
bool fragment_tile_k_fastest(const ir::Operation &dot,
                             const BlockedLayout &parent, const Layout &layout,
                             int operand);
/// Whether a dot operand held in `layout` over `parent` runs along K in
/// each thread's registers (its fastest dimension is K): then it is kept
/// with K fastest, so that the registers' runs are the tile's rows.
bool operand_runs_along_k(const BlockedLayout &parent, const Layout &layout,
                          int operand);

/// The element of `tile` (operand `operand` of a dot homed in
/// `accumulator`, an mma_accumulator_layout, with inputs of `input_bytes`)
/// whose address each lane of each warp hands ldmatrix.x4 at the warp's
/// first fragments and k = 0: (lane, warp) -> (dim0 = the tile's row, dim1
/// = its column). Lanes 8i .. 8i + 7 give the 8 rows of matrix i: of M or
/// N where K runs fastest, else of K (read with .trans). A's matrices are
/// the fragment's rows 0-7 and 8-15 (rows of C one layout tile apart) at
/// the first 16 bytes of K, then both at the next 16 bytes (a0..a3); B's
/// are the two 16 bytes of K of the warp's first 8-column tile, then of
/// its second (b0, b1 of two tiles; lanes 16-31 repeat lanes 0-15 where
/// the warp has one tile, read by ldmatrix.x2). Warps are numbered along N
/// first. The lowering computes the lanes' rows from this map, and adds
/// steps along K and tiles along M or N as constants (tile_addresses.h).
ir::LinearLayout ldmatrix_rows(const FragmentTile &tile, int operand,
                               const BlockedLayout &accumulator,
                               int64_t input_bytes);

// ---- Warpgroup MMA (wgmma.mma_async, sm_90a). --------------------------
//
// Four consecutive warps (a warpgroup, the first warp a multiple of 4)
// multiply a 64-row block of A, read from a tile in shared memory through
// a descriptor, by all of B's columns (N up to 256), into an accumulator
// of which warp w of the group holds rows 16w to 16w + 15: per 8 columns
// the m16n8 accumulator fragment of mma.sync. As a blocked layout that is
// mma.sync's fragments with the warp's lanes repeated twice along M
// (rows g and g + 8) before the next warp's 16 rows: per_warp = [2, 1],
// all warps along M. A block of more rows repeats the warps' 16 * warps
// rows; each warpgroup issues one MMA per 64 rows it holds and per step
// of 32 bytes along K (wgmma_fragments_layout).

/// Why `dot` does not run as warpgroup MMAs on `num_warps` warps of `arch`
/// ("" where it does): it needs sm_90a, warps in whole warpgroups, an
/// mma_instruction (tf32x3 and f16 accumulators excepted), M in 16 rows
/// per warp, N from 8 to 256 in 8s (in 16s from 32 for int8). Both
/// operands come from shared memory: a link of a chain of dots (attention's
/// P) is written to its tile first.
std::string why_not_on_warpgroups(const ir::Operation &dot, int num_warps,
                                  const GpuArch &arch);

/// The accumulator layout of a rows x cols block of warpgroup MMAs on
/// `num_warps` warps: per_thread [1, 2], threads [8, 4], per_warp [2, 1],
/// warps [num_warps, 1].
BlockedLayout wgmma_fragments_layout(int64_t rows, int64_t cols,
                                     int64_t num_warps);

/// The accumulator layout of `dot` as warpgroup MMAs; nullopt where it
/// does not run as them (why_not_on_warpgroups).
std::optional<BlockedLayout> wgmma_accumulator_layout(const ir::Operation &dot,
                                                      int num_warps,
                                                      const GpuArch &arch);

/// For the later link of a chain of dots on warpgroup MMAs (attention's
/// P @ V), the layout in which A's registers are already the A operand
/// that wgmma.mma_async reads from registers: the warpgroup accumulator
/// layout of A's own shape (each warp's 16 rows of a pass are the
/// m16n8k16 A fragment, its accumulator tiles j and j + 1 those of the
/// step of 16 along K at 16 j / 2), so that P never goes through shared
/// memory. Only for 16-bit A computed in the dot's block from a dot;
/// nullopt for the other dots.
std::optional<BlockedLayout> wgmma_operand_a_layout(const ir::Operation &dot,
                                                    int num_warps,
                                                    const GpuArch &arch);

/// The tile of operand `operand` of a dot on warpgroups: as fragment_tile,
/// but swizzled as the MMA's descriptors read it (wgmma_swizzle: rows of at
/// most 128 bytes, longer ones in atoms of 128 bytes).
FragmentTile wgmma_operand_tile(const ir::Operation &dot, int operand,
                                bool k_fastest);

/// How a warpgroup MMA finds an operand in its tile: the matrix
/// descriptor's fields (the PTX ISA's canonical layouts) and where, in
/// bytes from the tile's start, the 64 rows (A) or the whole of B at step
/// `k` along K begin. K-major tiles (rows of M or N, K fastest): the
/// stride between groups of 8 rows (SBO) is 8 rows of an atom; steps
/// along K move within an atom's row, or to the next atom. MN-major tiles
/// (16-bit B stored [K][N]): atoms of 8 rows of K by 128 bytes of N,
/// the next atom along N at LBO, the next 8 rows of K at SBO.
struct WgmmaOperand {
  int64_t leading_bytes = 16; // LBO
  int64_t stride_bytes = 0;   // SBO
  int swizzle_mode = 1;       // 1: 128-byte, 2: 64-byte, 3: 32-byte
  bool mn_major = false;      // the instruction's imm-trans
  /// Bytes from the tile's start to the operand's rows from `mn` (a
  /// multiple of 8) at `k` (a multiple of the instruction's K).
  int64_t start_bytes(int64_t mn, int64_t k) const;
  FragmentTile tile;
};
WgmmaOperand wgmma_operand(const FragmentTile &tile);

/// The bytes a tile read by warpgroup MMAs starts at a multiple of: its
/// swizzle's pattern (8 rows of 128 bytes, 4 of 64 bytes... : 1024, 512
/// or 256 bytes), which the MMA computes from the address's own bits.
int64_t wgmma_tile_alignment(const SharedTile &tile);

/// The bytes a tile of shared memory starts at a multiple of: 128, where
/// the swizzle's pattern of 8 rows of 16-byte vectors starts on bank 0,
/// or, in a kernel that uses warpgroup MMAs (`warpgroup_mma`), the
/// warpgroup swizzle's pattern where it is larger. The lowering places
/// tiles there, and the pipeline's count of shared memory follows it.
int64_t shared_tile_alignment(const SharedTile &tile, bool warpgroup_mma);
/// The bytes a pipelined loop's stages start at a multiple of, where its
/// tiles start at multiples of `stage_alignment` within a stage.
int64_t stages_alignment(int64_t stage_alignment);

/// Where register r of a thread in an mma_accumulator_layout sits: the
/// warp's 16-row fragment along M and 8-column tile along N (counted among
/// the warp's own), and the accumulator fragment element (c0..c3).
struct MmaFragmentElement {
  int64_t m_tile = 0, n_tile = 0, element = 0;
};
MmaFragmentElement mma_fragment_element(const BlockedLayout &layout, int64_t r);

} // namespace blocc::nvptx
