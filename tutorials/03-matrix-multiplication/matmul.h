// Tutorial 03's kernels, shared by the tutorial (main.cpp) and the Python
// package (blocc.kernels.matmul, matmul_bf16, matmul_persistent,
// matmul_persistent_bf16, matmul_tma, matmul_tma_bf16, matmul_tma_ws,
// matmul_tma_ws_bf16,
// matmul_persistent_tma and matmul_fp8,
// bindings/module/shipped_kernels.cpp).
//
// C = A @ B for A [M, K] and B [K, N] in half (or bfloat16) precision,
// accumulated and stored in float32. Each program computes one BLOCK_M x
// BLOCK_N tile of C: it walks K in steps of BLOCK_K, loading a BLOCK_M x
// BLOCK_K tile of A and a BLOCK_K x BLOCK_N tile of B and adding their
// product (bl::dot) to an accumulator that stays in registers (on the GPU)
// or in vector registers and cache (on the CPU) for the whole loop. The
// pointers to the next tiles are carried by the loop: adding BLOCK_K times
// the K stride moves both tiles one step. Masks zero the tiles' parts past
// M, N or K, so that any shape works, and the store skips them.
//
// Program ordering for L2 reuse: programs run roughly in the order of
// their ids. Numbered row-major (all of C's first tile row, then the
// next), consecutive programs share a tile row of A but each reads a
// different column of B, so B streams through the cache once per tile
// row. Grouped ordering numbers the tiles column by column within groups
// of GROUP_M tile rows: the programs running together then cover a
// GROUP_M x (a few) patch of C and reuse both the GROUP_M rows of A and the
// few columns of B they read, which then come from L2 rather than memory.
// Only the mapping from program id to (pid_m, pid_n) changes.
//
// matmul_persistent (and matmul_persistent_bf16) computes the same tiles
// with a grid sized to the machine rather than to C: one program per SM
// (min(SMs, tiles)), program pid walking the tiles pid, pid + programs,
// ... in the same grouped order, the whole K loop and the store for each
// (Triton's persistent matmul). What it saves: a CTA's launch and exit
// per tile (with one CTA per SM the SM idles between a CTA's last store
// and the next CTA's first copies) and each CTA's setup (the kernel's
// arguments, the grouped order's divisions, the per-thread offsets),
// done once per program instead of once per tile; and the next tile's
// first copies go out right behind the last tile's stores, which nothing
// waits for, so the stores' traffic overlaps the next tile's first
// loads. What it does not do: overlap the epilogue (the stores of the
// accumulator) with the next tile's K loop, which fills and drains its
// pipeline once per tile as matmul's does (Triton flattens the two loops
// for that). What it costs: the per-thread addresses of a tile's first
// copies are the same for every tile, so LLVM computes them once, before
// the tile loop, and they stay live across the K loop: more registers
// than matmul's (232 against 206 at 128 x 128 on 4 warps). One program per SM
// also leaves no second CTA to hide the pipeline's fill where two would fit,
// and where the tiles do not divide evenly among the programs the last round
// leaves SMs idle as the one-tile grid's last wave does.
//
// matmul_tma (and matmul_tma_bf16) reads the same tiles through tensor
// descriptors (bl::make_tensor_descriptor, Triton's
// tl.make_tensor_descriptor) instead of pointers and masks: each load names
// its tile by its first row and column, and elements past M, N or K read
// zero. On Hopper (sm_90a), where the tiles feed warpgroup MMAs, the
// Tensor Memory Accelerator copies them: one thread issues each tile's copy
// and the others wait on its mbarrier, with no address arithmetic per
// thread; C's tile is stored through a descriptor as well (on Hopper
// written to shared memory, then copied out by TMA, which clips the
// tails). It takes the matmul's arguments; the rows of A, B and C must be
// contiguous (stride_ak = stride_bn = stride_cn = 1), and TMA copies a
// tile whose array's row stride is a multiple of 16 bytes (others are read
// and written through pointers, as everywhere else). matmul_persistent_tma
// walks the tiles as matmul_persistent does, reading them as matmul_tma does.
//
// matmul_tma_ws (and matmul_tma_ws_bf16) is matmul_tma whose K loop asks
// for warp specialization (bl::LoopOptions): on Hopper four more warps, a
// producer warpgroup, issue the tiles' copies stages ahead while the
// kernel's warps only multiply, the stages handed back and forth through
// mbarriers with no barrier of the whole CTA in the loop (FlashAttention-3
// and CUTLASS's warp-specialized mainloops); elsewhere it is matmul_tma.
//
// matmul_fp8 walks the same tiles over fp8 (e4m3) inputs that carry one
// float32 scale per tensor (torch._scaled_mm's per-tensor scaling): the
// sums are in float32, and the scales multiply them once, at the store.
#pragma once

#include <blocc/blocc.h>

#include <optional>

namespace blocc::tutorials {

namespace bl = blocc;

/// The parts of the kernels below that do not depend on the input type.
namespace matmul_parts {

/// The rows (a column, [BLOCK_M, 1]) and columns (a row, [1, BLOCK_N]) of
/// a tile of C, and its first row and column (scalars).
struct Tile {
  bl::Tensor rows, cols;
  bl::Tensor first_row, first_col;
};

/// Tile `index` (pid_m, pid_n) of C, numbered in grouped order.
inline Tile grouped_tile(const bl::Tensor &index, bl::i32 M, bl::i32 N,
                         int BLOCK_M, int BLOCK_N, int GROUP_M) {
  auto tiles_m = bl::cdiv(M, BLOCK_M), tiles_n = bl::cdiv(N, BLOCK_N);
  auto per_group = GROUP_M * tiles_n;
  auto first_m = (index / per_group) * GROUP_M;
  auto group_rows = bl::minimum(tiles_m - first_m, GROUP_M);
  auto pid_m = first_m + (index % per_group) % group_rows;
  auto pid_n = (index % per_group) / group_rows;
  auto row = pid_m * BLOCK_M, col = pid_n * BLOCK_N;
  return {bl::expand_dims(row + bl::arange(0, BLOCK_M), 1),
          bl::expand_dims(col + bl::arange(0, BLOCK_N), 0), row, col};
}

/// The tile's part of A @ B, accumulated in float32 over K in steps of
/// BLOCK_K. `as_dot_input` turns a loaded tile into what bl::dot takes:
/// the tile itself for half and bfloat16, its bytes bitcast for fp8.
template <typename T, typename AsDotInput>
bl::Tensor product(bl::Ptr<T> a, bl::Ptr<T> b, const Tile &tile, bl::i32 M,
                   bl::i32 N, bl::i32 K, bl::i32 stride_am, bl::i32 stride_ak,
                   bl::i32 stride_bk, bl::i32 stride_bn, int BLOCK_M,
                   int BLOCK_N, int BLOCK_K, AsDotInput as_dot_input) {
  const bl::Tensor &rows = tile.rows, &cols = tile.cols;
  // The k indices as a row ([1, BLOCK_K]) and a column ([BLOCK_K, 1]), so
  // that they broadcast to the tiles' shapes.
  auto k_row = bl::expand_dims(bl::arange(0, BLOCK_K), 0);
  auto k_col = bl::expand_dims(bl::arange(0, BLOCK_K), 1);
  bl::Tensor a_tile = a + rows * stride_am + k_row * stride_ak; // [BM, BK]
  bl::Tensor b_tile = b + k_col * stride_bk + cols * stride_bn; // [BK, BN]

  auto acc = bl::zeros({BLOCK_M, BLOCK_N}, bl::float32);
  for (auto k : bl::range(0, K, BLOCK_K)) {
    auto a_part = bl::load(a_tile, (rows < M) & (k_row < K - k), 0);
    auto b_part = bl::load(b_tile, (k_col < K - k) & (cols < N), 0);
    acc = bl::dot(as_dot_input(a_part), as_dot_input(b_part), acc);
    a_tile = a_tile + BLOCK_K * stride_ak;
    b_tile = b_tile + BLOCK_K * stride_bk;
  }
  return acc;
}

/// A's, B's and C's tiles as tensor descriptors (made once per program,
/// before any tile loop).
struct Descriptors {
  bl::TensorDescriptor a, b, c;
};
template <typename T>
Descriptors
descriptors_of(bl::Ptr<T> a, bl::Ptr<T> b, bl::Ptr<float> c, bl::i32 M,
               bl::i32 N, bl::i32 K, bl::i32 stride_am, bl::i32 stride_ak,
               bl::i32 stride_bk, bl::i32 stride_bn, bl::i32 stride_cm,
               bl::i32 stride_cn, int BLOCK_M, int BLOCK_N, int BLOCK_K) {
  return {bl::make_tensor_descriptor(a, {M, K}, {stride_am, stride_ak},
                                     {BLOCK_M, BLOCK_K}),
          bl::make_tensor_descriptor(b, {K, N}, {stride_bk, stride_bn},
                                     {BLOCK_K, BLOCK_N}),
          bl::make_tensor_descriptor(c, {M, N}, {stride_cm, stride_cn},
                                     {BLOCK_M, BLOCK_N})};
}

/// The same product with A's and B's tiles read through their descriptors
/// from the tile's first row and column: elements past M, N or K read
/// zero.
inline bl::Tensor product_of_descriptors(const Descriptors &d, const Tile &tile,
                                         bl::i32 K, int BLOCK_M, int BLOCK_N,
                                         int BLOCK_K,
                                         bool warp_specialize = false) {
  auto acc = bl::zeros({BLOCK_M, BLOCK_N}, bl::float32);
  for (auto k : bl::range(0, K, BLOCK_K, {.warp_specialize = warp_specialize}))
    acc = bl::dot(bl::load(d.a, {tile.first_row, k}),
                  bl::load(d.b, {k, tile.first_col}), acc);
  return acc;
}

/// Stores the tile's part of C, skipping the parts past M and N.
inline void store(bl::Ptr<float> c, const Tile &tile, const bl::Tensor &value,
                  bl::i32 M, bl::i32 N, bl::i32 stride_cm, bl::i32 stride_cn) {
  bl::store(c + tile.rows * stride_cm + tile.cols * stride_cn, value,
            (tile.rows < M) & (tile.cols < N));
}

} // namespace matmul_parts

/// How a launch's programs share C's tiles.
enum class TileWalk {
  /// One tile per program: the grid is the number of tiles.
  OnePerProgram,
  /// Any grid (the processors' count): program p computes the tiles p,
  /// p + programs, ... (matmul_persistent).
  Persistent,
};

/// How a program reads the tiles of A and B.
enum class TileReads {
  /// Blocks of pointers and masks, carried by the K loop (matmul).
  Pointers,
  /// Tensor descriptors (matmul_tma).
  Descriptors,
  /// Tensor descriptors, a producer warpgroup issuing the copies on Hopper
  /// (matmul_tma_ws).
  DescriptorsByProducer,
};

template <typename T, TileWalk WALK, TileReads READS = TileReads::Pointers>
auto make_matmul(const char *name) {
  return bl::kernel(
      name,
      {"a", "b", "c", "M", "N", "K", "stride_am", "stride_ak", "stride_bk",
       "stride_bn", "stride_cm", "stride_cn", "BLOCK_M", "BLOCK_N", "BLOCK_K",
       "GROUP_M"},
      [](bl::Ptr<T> a, bl::Ptr<T> b, bl::Ptr<float> c, bl::i32 M, bl::i32 N,
         bl::i32 K, bl::i32 stride_am, bl::i32 stride_ak, bl::i32 stride_bk,
         bl::i32 stride_bn, bl::i32 stride_cm, bl::i32 stride_cn,
         bl::Const<int> BLOCK_M, bl::Const<int> BLOCK_N, bl::Const<int> BLOCK_K,
         bl::Const<int> GROUP_M) {
        std::optional<matmul_parts::Descriptors> descriptors;
        if (READS != TileReads::Pointers)
          descriptors = matmul_parts::descriptors_of(
              a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
              stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K);
        // Tile `index` of C: its whole K loop, then its store.
        auto compute = [&](const bl::Tensor &index) {
          auto tile = matmul_parts::grouped_tile(index, M, N, BLOCK_M, BLOCK_N,
                                                 GROUP_M);
          auto as_is = [](const bl::Tensor &t) { return t; };
          bl::Tensor acc =
              descriptors
                  ? matmul_parts::product_of_descriptors(
                        *descriptors, tile, K, BLOCK_M, BLOCK_N, BLOCK_K,
                        READS == TileReads::DescriptorsByProducer)
                  : matmul_parts::product(a, b, tile, M, N, K, stride_am,
                                          stride_ak, stride_bk, stride_bn,
                                          BLOCK_M, BLOCK_N, BLOCK_K, as_is);
          if (descriptors)
            bl::store(descriptors->c, {tile.first_row, tile.first_col}, acc);
          else
            matmul_parts::store(c, tile, acc, M, N, stride_cm, stride_cn);
        };
        if constexpr (WALK == TileWalk::Persistent) {
          // A traced loop: its K loop is nested in it, pipelined as the
          // one-tile kernel's is.
          auto tiles = bl::cdiv(M, BLOCK_M) * bl::cdiv(N, BLOCK_N);
          for (auto index :
               bl::range(bl::program_id(0), tiles, bl::num_programs(0)))
            compute(index);
        } else {
          compute(bl::program_id(0));
        }
      });
}

/// C = (scale_a * scale_b) (A @ B) for A and B in fp8 (e4m3), each scaled
/// by one float32 for the whole tensor, accumulated and stored in float32.
/// fp8 has no host type: A and B are their bytes (uint8), which the kernel
/// bitcasts to bl::float8e4m3 after loading them.
inline auto matmul_fp8 = bl::kernel(
    "matmul_fp8",
    {"a", "b", "c", "scale_a", "scale_b", "M", "N", "K", "stride_am",
     "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn", "BLOCK_M",
     "BLOCK_N", "BLOCK_K", "GROUP_M"},
    [](bl::Ptr<uint8_t> a, bl::Ptr<uint8_t> b, bl::Ptr<float> c,
       bl::f32 scale_a, bl::f32 scale_b, bl::i32 M, bl::i32 N, bl::i32 K,
       bl::i32 stride_am, bl::i32 stride_ak, bl::i32 stride_bk,
       bl::i32 stride_bn, bl::i32 stride_cm, bl::i32 stride_cn,
       bl::Const<int> BLOCK_M, bl::Const<int> BLOCK_N, bl::Const<int> BLOCK_K,
       bl::Const<int> GROUP_M) {
      auto tile = matmul_parts::grouped_tile(bl::program_id(0), M, N, BLOCK_M,
                                             BLOCK_N, GROUP_M);
      auto as_e4m3 = [](const bl::Tensor &bytes) {
        return bl::bitcast(bytes, bl::float8e4m3);
      };
      auto acc = matmul_parts::product(a, b, tile, M, N, K, stride_am,
                                       stride_ak, stride_bk, stride_bn, BLOCK_M,
                                       BLOCK_N, BLOCK_K, as_e4m3);
      // The scales apply once, to the float32 sums (masked-off elements
      // load the byte 0, which is e4m3's +0).
      matmul_parts::store(c, tile, acc * (scale_a * scale_b), M, N, stride_cm,
                          stride_cn);
    });

inline auto matmul = make_matmul<bl::half, TileWalk::OnePerProgram>("matmul");
inline auto matmul_bf16 =
    make_matmul<bl::bfloat16_t, TileWalk::OnePerProgram>("matmul_bf16");
inline auto matmul_persistent =
    make_matmul<bl::half, TileWalk::Persistent>("matmul_persistent");
inline auto matmul_persistent_bf16 =
    make_matmul<bl::bfloat16_t, TileWalk::Persistent>("matmul_persistent_bf16");
inline auto matmul_tma =
    make_matmul<bl::half, TileWalk::OnePerProgram, TileReads::Descriptors>(
        "matmul_tma");
inline auto matmul_tma_bf16 =
    make_matmul<bl::bfloat16_t, TileWalk::OnePerProgram,
                TileReads::Descriptors>("matmul_tma_bf16");
inline auto matmul_tma_ws =
    make_matmul<bl::half, TileWalk::OnePerProgram,
                TileReads::DescriptorsByProducer>("matmul_tma_ws");
inline auto matmul_tma_ws_bf16 =
    make_matmul<bl::bfloat16_t, TileWalk::OnePerProgram,
                TileReads::DescriptorsByProducer>("matmul_tma_ws_bf16");
inline auto matmul_persistent_tma =
    make_matmul<bl::half, TileWalk::Persistent, TileReads::Descriptors>(
        "matmul_persistent_tma");

} // namespace blocc::tutorials
