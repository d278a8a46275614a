// Tutorial 06's kernel, shared by the tutorial (main.cpp) and the Python
// package (blocc.kernels.attention, bindings/module/shipped_kernels.cpp).
//
// Fused attention, forward: out = softmax(Q K^T * scale) V for each of
// batch * heads independent [seq, HEAD_DIM] matrices Q, K, V (contiguous),
// optionally causal (query i sees keys j <= i). Written naively, the
// [seq, seq] score matrix goes to memory and back; here it never exists.
// A program owns BLOCK_M queries of one head and walks the keys in blocks
// of BLOCK_N. For each key block it computes the scores S = Q K^T (bl::dot,
// float32), and folds them into three running values per query row with
// the *online softmax*: the row maximum m so far, the sum l of exp(s - m),
// and the output accumulator acc = sum of exp(s - m) v. When a new block
// raises the maximum from m to m', the old sums are in units of exp(-m):
// multiplying l and acc by alpha = exp(m - m') rescales them to exp(-m')
// before the new block's terms are added. After the last block, out =
// acc / l. Everything per query row stays in registers; each key and value
// tile is read once per program. exp is taken as exp2 of scores
// pre-multiplied by log2(e), and the probabilities are rounded to the
// inputs' precision before the second product, as Triton's tutorial does,
// so that both products take half inputs.
//
// Causal: the loop stops after the key block holding the program's last
// query (later keys are all masked), and scores of keys after their query
// are set to -inf before the maximum. CAUSAL is a compile-time constant.
#pragma once

#include <blocc/blocc.h>

#include <cmath>

namespace blocc::tutorials {

namespace bl = blocc;

template <typename T> auto make_attention(const char *name) {
  return bl::kernel(
      name,
      {"q", "k", "v", "out", "seq_len", "scale", "HEAD_DIM", "BLOCK_M",
       "BLOCK_N", "CAUSAL"},
      [](bl::Ptr<T> q, bl::Ptr<T> k, bl::Ptr<T> v, bl::Ptr<T> out,
         bl::i32 seq_len, bl::f32 scale, bl::Const<int> HEAD_DIM,
         bl::Const<int> BLOCK_M, bl::Const<int> BLOCK_N,
         bl::Const<bool> CAUSAL) {
        auto head = bl::program_id(1) * seq_len * HEAD_DIM; // its matrices
        auto first_query = bl::program_id(0) * BLOCK_M;
        auto queries = first_query + bl::arange(0, BLOCK_M);
        auto dims = bl::arange(0, HEAD_DIM);
        auto query_col = bl::expand_dims(queries, 1); // [BLOCK_M, 1]
        auto dim_row = bl::expand_dims(dims, 0);      // [1, HEAD_DIM]
        auto q_tile = bl::load(q + head + query_col * HEAD_DIM + dim_row,
                               query_col < seq_len, 0.f);

        auto m = bl::full({BLOCK_M}, -INFINITY, bl::float32);
        auto l = bl::zeros({BLOCK_M}, bl::float32);
        auto acc = bl::zeros({BLOCK_M, HEAD_DIM}, bl::float32);
        auto scale_log2 = scale * 1.4426950408889634f; // exp(x) = 2^(x log2 e)
        bl::Tensor end = seq_len;
        if (CAUSAL) // no key after the block's last query is seen
          end = bl::minimum(first_query + BLOCK_M, seq_len);
        for (auto first_key : bl::range(0, end, BLOCK_N)) {
          auto keys = first_key + bl::arange(0, BLOCK_N);
          auto key_row = bl::expand_dims(keys, 0); // [1, BLOCK_N]
          auto key_col = bl::expand_dims(keys, 1); // [BLOCK_N, 1]
          // K^T's tile, [HEAD_DIM, BLOCK_N], read straight from K's rows.
          auto kt_tile =
              bl::load(k + head + key_row * HEAD_DIM + bl::expand_dims(dims, 1),
                       key_row < seq_len, 0.f);
          auto visible = key_row < seq_len;
          if (CAUSAL)
            visible = visible & (key_row <= query_col);
          auto s = bl::where(visible, bl::dot(q_tile, kt_tile) * scale_log2,
                             -INFINITY);
          auto m_new = bl::maximum(m, bl::max(s, 1));
          auto p = bl::exp2(s - bl::expand_dims(m_new, 1));
          auto alpha = bl::exp2(m - m_new); // rescales the old sums
          l = l * alpha + bl::sum(p, 1);
          auto v_tile = bl::load(v + head + key_col * HEAD_DIM + dim_row,
                                 key_col < seq_len, 0.f);
          acc = bl::dot(p.to(bl::dtype_of<T>()), v_tile,
                        acc * bl::expand_dims(alpha, 1));
          m = m_new;
        }
        bl::store(out + head + query_col * HEAD_DIM + dim_row,
                  acc / bl::expand_dims(l, 1), query_col < seq_len);
      });
}

inline auto attention = make_attention<bl::half>("attention");

} // namespace blocc::tutorials
