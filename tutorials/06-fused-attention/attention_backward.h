// Tutorial 06's backward kernels, shared by the tutorial (main.cpp) and the
// Python package (blocc.kernels.attention_bwd_preprocess,
// attention_bwd_dkdv and attention_bwd_dq).
//
// With S = scale Q K^T, P = softmax(S) row by row and out = P V, the
// gradients of a loss whose gradient at out is dO are
//   dV = P^T dO,   dP = dO V^T,   dS = P * (dP - delta),
//   dQ = scale dS K,   dK = scale dS^T Q,
// where delta_i = sum_j P_ij dP_ij. Since dP = dO V^T, that sum is
// sum_d dO_id out_id: one dot product of two rows the forward pass already
// has, rather than a sum over a row of P (FlashAttention-2's trick). As in
// the forward pass, no [seq, seq] matrix is ever stored: each program
// recomputes its tiles of P from Q, K and each query row's log-sum-exp L_i
// (attention_fwd_lse), P_ij = exp(S_ij - L_i), which needs no running
// maximum: L_i is the maximum and the sum at once.
//
// Three kernels, as in Triton's tutorial:
//  - attention_bwd_preprocess: delta, one float32 per query row.
//  - attention_bwd_dkdv: dK and dV are sums over queries, so a program owns
//    BLOCK_N keys and walks the query blocks, with the keys' K and V tiles
//    and both accumulators held throughout. It works on transposed tiles
//    (S^T = K Q^T, [BLOCK_N, BLOCK_M]) so that dV += P^T dO and
//    dK += dS^T Q are products of what it already holds, with no transpose
//    of a block in registers. Each block of Q and dO is loaded once, and
//    S^T and dP^T read it transposed (bl::trans): on tensor cores both
//    products read the same tile of shared memory, one of them in the
//    other orientation.
//  - attention_bwd_dq: dQ is a sum over keys, so a program owns BLOCK_M
//    queries and walks the key blocks, as the forward does.
// Splitting dQ from dK and dV costs a second computation of S and dP, but
// each program then writes only what it owns: one kernel for all three
// would add every program's share of dQ into memory atomically.
//
// Like the forward pass, each loop over blocks is split in two: the blocks
// where every score is seen need no masks, and only the blocks on the
// causal diagonal or past the end of the sequence pass through a masked
// copy of the loop body. Causal, the blocks where no query sees a key are
// not visited at all. P and dS are rounded to the inputs' precision before
// the products they feed, so that every product takes half inputs, and the
// gradients are accumulated in float32 and stored in the inputs' type.
#pragma once

#include "attention.h"

#include <blocc/blocc.h>

#include <cmath>

namespace blocc::tutorials {

namespace bl = blocc;

/// delta = rowsum(dO * out) for every row of the [rows, HEAD_DIM] matrices
/// out and dout (all heads' rows, one after another), in float32.
template <typename T> auto make_attention_bwd_preprocess(const char *name) {
  return bl::kernel(
      name, {"out", "dout", "delta", "rows", "HEAD_DIM", "BLOCK_M"},
      [](bl::Ptr<T> out, bl::Ptr<T> dout, bl::Ptr<float> delta, bl::i32 rows,
         bl::Const<int> HEAD_DIM, bl::Const<int> BLOCK_M) {
        auto row = bl::program_id(0) * BLOCK_M + bl::arange(0, BLOCK_M);
        auto row_col = bl::expand_dims(row, 1); // [BLOCK_M, 1]
        auto offsets =
            row_col * HEAD_DIM + bl::expand_dims(bl::arange(0, HEAD_DIM), 0);
        auto o = bl::load(out + offsets, row_col < rows, 0.f);
        auto d_o = bl::load(dout + offsets, row_col < rows, 0.f);
        bl::store(delta + row,
                  bl::sum(o.to(bl::float32) * d_o.to(bl::float32), 1),
                  row < rows);
      });
}

/// dK and dV of BLOCK_N keys of one head per program (a 2-D grid: key
/// block, head), from the inputs, dout, and each query row's lse and delta.
template <typename T> auto make_attention_bwd_dkdv(const char *name) {
  return bl::kernel(
      name,
      {"q", "k", "v", "dout", "lse", "delta", "dk", "dv", "seq_len", "scale",
       "HEAD_DIM", "BLOCK_M", "BLOCK_N", "CAUSAL"},
      [](bl::Ptr<T> q, bl::Ptr<T> k, bl::Ptr<T> v, bl::Ptr<T> dout,
         bl::Ptr<float> lse, bl::Ptr<float> delta, bl::Ptr<T> dk, bl::Ptr<T> dv,
         bl::i32 seq_len, bl::f32 scale, bl::Const<int> HEAD_DIM,
         bl::Const<int> BLOCK_M, bl::Const<int> BLOCK_N,
         bl::Const<bool> CAUSAL) {
        auto head_row = bl::program_id(1) * seq_len; // its first row
        auto head = head_row * HEAD_DIM;             // its matrices
        auto first_key = bl::program_id(0) * BLOCK_N;
        auto keys = first_key + bl::arange(0, BLOCK_N);
        auto dims = bl::arange(0, HEAD_DIM);
        auto key_col = bl::expand_dims(keys, 1); // [BLOCK_N, 1]
        auto dim_row = bl::expand_dims(dims, 0); // [1, HEAD_DIM]
        auto kv_offsets = head + key_col * HEAD_DIM + dim_row;
        // Keys past the end load as zeros; their rows of the accumulators
        // are never stored, and a row of a product depends only on the
        // same row of its left operand, so they reach nothing else.
        auto k_tile = bl::load(k + kv_offsets, key_col < seq_len, 0.f);
        auto v_tile = bl::load(v + kv_offsets, key_col < seq_len, 0.f);
        auto dk_acc = bl::zeros({BLOCK_N, HEAD_DIM}, bl::float32);
        auto dv_acc = bl::zeros({BLOCK_N, HEAD_DIM}, bl::float32);
        auto scale_log2 = scale * 1.4426950408889634f;
        // Folds the query block at first_query into dk_acc and dv_acc.
        // Masked: queries past the end, or (causal) before some key.
        auto fold = [&](const bl::Tensor &first_query, bool masked) {
          auto queries = first_query + bl::arange(0, BLOCK_M);
          auto query_row = bl::expand_dims(queries, 0); // [1, BLOCK_M]
          auto query_col = bl::expand_dims(queries, 1); // [BLOCK_M, 1]
          auto row_offsets = head + query_col * HEAD_DIM + dim_row;
          auto load_rows = block_loader(query_col, seq_len, masked);
          // [BLOCK_M, HEAD_DIM] each.
          auto q_tile = load_rows(q + row_offsets);
          auto do_tile = load_rows(dout + row_offsets);
          auto per_query = [&](const bl::Ptr<float> &values) {
            return masked ? bl::load(values + head_row + queries,
                                     queries < seq_len, 0.f)
                          : bl::load(values + head_row + queries);
          };
          // S^T = K Q^T, and dP^T = V dO^T right after it: on Hopper's
          // warpgroup MMAs the second product runs while P^T is computed
          // from the first (each is waited for where it is first read).
          // The hidden scores have P = 0, hence dS = 0.
          auto st = bl::dot(k_tile, bl::trans(q_tile));
          auto dpt = bl::dot(v_tile, bl::trans(do_tile));
          // S^T * log2(e) - L, so that P^T is one exp2 (L in log2 units).
          auto exponent = bl::fma(
              st, scale_log2,
              -bl::expand_dims(per_query(lse) * 1.4426950408889634f, 0));
          if (masked) {
            auto visible = query_row < seq_len;
            if (CAUSAL)
              visible = visible & (key_col <= query_row);
            exponent = bl::where(visible, exponent, -INFINITY);
          }
          // [BLOCK_N, BLOCK_M]; P^T and dS^T are rounded to f16, where
          // powers below 2^-126 (flushed to 0) round to 0 anyway.
          auto pt = bl::exp2(exponent, bl::Subnormals::Flush);
          dv_acc = bl::dot(pt.to(bl::dtype_of<T>()), do_tile, dv_acc);
          auto dst = pt * (dpt - bl::expand_dims(per_query(delta), 0));
          dk_acc = bl::dot(dst.to(bl::dtype_of<T>()), q_tile, dk_acc);
        };
        // Query blocks in order: causal, those wholly before first_key see
        // none of the keys and are skipped, and the blocks on the diagonal
        // (some query before the program's last key) are masked; then the
        // blocks wholly inside the sequence, unmasked; then the partial
        // block at the end, masked.
        auto full_end = seq_len / BLOCK_M * BLOCK_M;
        bl::Tensor unmasked_begin = bl::scalar(0, bl::int32), tail = full_end;
        if (CAUSAL) {
          unmasked_begin = bl::cdiv(first_key + BLOCK_N - 1, BLOCK_M) * BLOCK_M;
          for (auto first_query :
               bl::range(first_key / BLOCK_M * BLOCK_M,
                         bl::minimum(unmasked_begin, seq_len), BLOCK_M))
            fold(first_query, true);
          tail = bl::maximum(unmasked_begin, full_end);
        }
        for (auto first_query : bl::range(unmasked_begin, full_end, BLOCK_M))
          fold(first_query, false);
        for (auto first_query : bl::range(tail, seq_len, BLOCK_M))
          fold(first_query, true);
        bl::store(dk + kv_offsets, dk_acc * scale, key_col < seq_len);
        bl::store(dv + kv_offsets, dv_acc, key_col < seq_len);
      });
}

/// dQ of BLOCK_M queries of one head per program (a 2-D grid: query block,
/// head), from the inputs, dout, and the rows' lse and delta.
template <typename T> auto make_attention_bwd_dq(const char *name) {
  return bl::kernel(
      name,
      {"q", "k", "v", "dout", "lse", "delta", "dq", "seq_len", "scale",
       "HEAD_DIM", "BLOCK_M", "BLOCK_N", "CAUSAL"},
      [](bl::Ptr<T> q, bl::Ptr<T> k, bl::Ptr<T> v, bl::Ptr<T> dout,
         bl::Ptr<float> lse, bl::Ptr<float> delta, bl::Ptr<T> dq,
         bl::i32 seq_len, bl::f32 scale, bl::Const<int> HEAD_DIM,
         bl::Const<int> BLOCK_M, bl::Const<int> BLOCK_N,
         bl::Const<bool> CAUSAL) {
        auto head_row = bl::program_id(1) * seq_len;
        auto head = head_row * HEAD_DIM;
        auto first_query = bl::program_id(0) * BLOCK_M;
        auto queries = first_query + bl::arange(0, BLOCK_M);
        auto dims = bl::arange(0, HEAD_DIM);
        auto query_col = bl::expand_dims(queries, 1); // [BLOCK_M, 1]
        auto dim_row = bl::expand_dims(dims, 0);      // [1, HEAD_DIM]
        auto dim_col = bl::expand_dims(dims, 1);      // [HEAD_DIM, 1]
        // Queries past the end load as zeros and are never stored; like
        // the keys past the end in attention_bwd_dkdv, they reach only
        // their own rows.
        auto q_offsets = head + query_col * HEAD_DIM + dim_row;
        auto q_tile = bl::load(q + q_offsets, query_col < seq_len, 0.f);
        auto do_tile = bl::load(dout + q_offsets, query_col < seq_len, 0.f);
        auto lse_log2 =
            bl::load(lse + head_row + queries, queries < seq_len, 0.f) *
            1.4426950408889634f;
        auto delta_col = bl::expand_dims(
            bl::load(delta + head_row + queries, queries < seq_len, 0.f), 1);
        auto dq_acc = bl::zeros({BLOCK_M, HEAD_DIM}, bl::float32);
        auto scale_log2 = scale * 1.4426950408889634f;
        // Folds the key block at first_key into dq_acc; masked: keys past
        // the end, or (causal) after some query.
        auto fold = [&](const bl::Tensor &first_key, bool masked) {
          auto keys = first_key + bl::arange(0, BLOCK_N);
          auto key_row = bl::expand_dims(keys, 0); // [1, BLOCK_N]
          auto key_col = bl::expand_dims(keys, 1); // [BLOCK_N, 1]
          // K's tile, [BLOCK_N, HEAD_DIM], loaded once for S = Q K^T and
          // dQ += dS K; V^T's, [HEAD_DIM, BLOCK_N], read from V's rows.
          auto load_rows = block_loader(key_col, seq_len, masked);
          auto k_tile = load_rows(k + head + key_col * HEAD_DIM + dim_row);
          auto col_offsets = head + key_row * HEAD_DIM + dim_col;
          auto load_cols = block_loader(key_row, seq_len, masked);
          // S and dP issued together, as in attention_bwd_dkdv.
          auto s = bl::dot(q_tile, bl::trans(k_tile));
          auto dp = bl::dot(do_tile, load_cols(v + col_offsets));
          auto exponent = bl::fma(s, scale_log2, -bl::expand_dims(lse_log2, 1));
          if (masked) {
            auto visible = key_row < seq_len;
            if (CAUSAL)
              visible = visible & (key_row <= query_col);
            exponent = bl::where(visible, exponent, -INFINITY);
          }
          // [BLOCK_M, BLOCK_N]; flushed as P^T above.
          auto p = bl::exp2(exponent, bl::Subnormals::Flush);
          auto ds = p * (dp - delta_col);
          dq_acc = bl::dot(ds.to(bl::dtype_of<T>()), k_tile, dq_acc);
        };
        // The forward pass's two loops: unmasked key blocks, then the
        // masked ones up to the last key the block's queries see.
        for_each_key_block(first_query, seq_len, BLOCK_M, BLOCK_N, CAUSAL,
                           fold);
        bl::store(dq + q_offsets, dq_acc * scale, query_col < seq_len);
      });
}

inline auto attention_bwd_preprocess =
    make_attention_bwd_preprocess<bl::half>("attention_bwd_preprocess");
inline auto attention_bwd_dkdv =
    make_attention_bwd_dkdv<bl::half>("attention_bwd_dkdv");
inline auto attention_bwd_dq =
    make_attention_bwd_dq<bl::half>("attention_bwd_dq");

} // namespace blocc::tutorials
