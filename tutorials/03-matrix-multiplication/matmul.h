// Tutorial 03's kernel, shared by the tutorial (main.cpp) and the Python
// package (blocc.kernels.matmul, bindings/module/shipped_kernels.cpp).
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
#pragma once

#include <blocc/blocc.h>

namespace blocc::tutorials {

namespace bl = blocc;

template <typename T> auto make_matmul(const char *name) {
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
        // This program's tile (pid_m, pid_n), in grouped order.
        auto pid = bl::program_id(0);
        auto tiles_m = bl::cdiv(M, BLOCK_M), tiles_n = bl::cdiv(N, BLOCK_N);
        auto per_group = GROUP_M * tiles_n;
        auto first_m = (pid / per_group) * GROUP_M;
        auto group_rows = bl::minimum(tiles_m - first_m, GROUP_M);
        auto pid_m = first_m + (pid % per_group) % group_rows;
        auto pid_n = (pid % per_group) / group_rows;

        // Row, column and k indices of the tiles, as a column ([X, 1]) or
        // a row ([1, X]) so that they broadcast to the tile's shape.
        auto rows =
            bl::expand_dims(pid_m * BLOCK_M + bl::arange(0, BLOCK_M), 1);
        auto cols =
            bl::expand_dims(pid_n * BLOCK_N + bl::arange(0, BLOCK_N), 0);
        auto k_row = bl::expand_dims(bl::arange(0, BLOCK_K), 0);
        auto k_col = bl::expand_dims(bl::arange(0, BLOCK_K), 1);
        auto a_tile = a + rows * stride_am + k_row * stride_ak; // [BM, BK]
        auto b_tile = b + k_col * stride_bk + cols * stride_bn; // [BK, BN]

        auto acc = bl::zeros({BLOCK_M, BLOCK_N}, bl::float32);
        for (auto k : bl::range(0, K, BLOCK_K)) {
          auto a_part = bl::load(a_tile, (rows < M) & (k_row < K - k), 0.f);
          auto b_part = bl::load(b_tile, (k_col < K - k) & (cols < N), 0.f);
          acc = bl::dot(a_part, b_part, acc);
          a_tile = a_tile + BLOCK_K * stride_ak;
          b_tile = b_tile + BLOCK_K * stride_bk;
        }
        bl::store(c + rows * stride_cm + cols * stride_cn, acc,
                  (rows < M) & (cols < N));
      });
}

inline auto matmul = make_matmul<bl::half>("matmul");
inline auto matmul_bf16 = make_matmul<bl::bfloat16_t>("matmul_bf16");

} // namespace blocc::tutorials
