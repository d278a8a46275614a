// Tutorial 06's forward kernels, shared by the tutorial (main.cpp) and the
// Python package (blocc.kernels.attention, attention_ws and attention_fwd_lse,
// bindings/module/shipped_kernels.cpp); the backward pass is in
// attention_backward.h.
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
// The keys are walked in two loops: the blocks wholly inside the sequence
// (and, causal, wholly before the program's first query) need no masks,
// and only the last few pass through a second loop that masks scores to
// -inf before the maximum. Causal, that loop stops after the key block
// holding the program's last query (later keys are all masked). CAUSAL is
// a compile-time constant. scale must be positive: the row maxima are
// taken before the scaling.
#pragma once

#include <blocc/blocc.h>

#include <cmath>
#include <optional>
#include <source_location>

namespace blocc::tutorials {

namespace bl = blocc;

/// Where the key blocks that the BLOCK_M queries from first_query see
/// end: those wholly before the sequence's end and, causal, before the
/// first query need no masks (up to unmasked_end); the last key any of
/// them sees is before `end`.
struct KeyBlocks {
  KeyBlocks(const bl::Tensor &first_query, bl::i32 seq_len, int BLOCK_M,
            int BLOCK_N, bool CAUSAL)
      : unmasked_end(seq_len), end(seq_len) {
    if (CAUSAL) {
      unmasked_end = bl::minimum(first_query, seq_len);
      end = bl::minimum(first_query + BLOCK_M, seq_len);
    }
    unmasked_end = unmasked_end / BLOCK_N * BLOCK_N;
  }
  bl::Tensor unmasked_end, end;
};

/// Calls fold(first_key, masked) for the key blocks that the BLOCK_M
/// queries from first_query see, in order: the blocks wholly before the
/// end and, causal, before the first query, where every score is seen
/// (masked = false); then the last few, up to the block holding the
/// last key a query sees (masked = true). The forward pass and the
/// backward pass's dq walk the keys alike.
/// `unmasked` is how the first loop is compiled (bl::LoopOptions).
template <typename Fold>
void for_each_key_block(const bl::Tensor &first_query, bl::i32 seq_len,
                        int BLOCK_M, int BLOCK_N, bool CAUSAL, Fold fold,
                        bl::LoopOptions unmasked = {}) {
  KeyBlocks keys(first_query, seq_len, BLOCK_M, BLOCK_N, CAUSAL);
  for (auto first_key : bl::range(0, keys.unmasked_end, BLOCK_N, unmasked))
    fold(first_key, false);
  for (auto first_key : bl::range(keys.unmasked_end, keys.end, BLOCK_N))
    fold(first_key, true);
}

/// The walk of for_each_key_block with the second product of each
/// unmasked key block issued one block later, after the next block's
/// scores, as FlashAttention-3 overlaps them within a warpgroup: where the
/// tensor cores run asynchronously (Hopper's warpgroup MMAs), block j's
/// exponentials then run while the tensor cores compute P_{j-1} V_{j-1},
/// where they would otherwise wait for them. `scores(first_key, masked)`
/// is a block's Q K^T, `values` its V tile, `softmax(scores)` folds the
/// scores into the row statistics and gives (P, alpha), `fold` folds a
/// whole block; P is rounded to `half` for the second product; acc is the
/// output accumulator. Block 0 goes first, masked
/// (every query sees key 0), its P V after the loop of unmasked blocks
/// where that loop runs none; the blocks that need masks follow as in
/// for_each_key_block. acc, in units of the row maxima before block j - 1,
/// is rescaled by alpha_{j-1} before it takes P_{j-1} V_{j-1}.
/// The loop of unmasked blocks asks for a producer warpgroup.
template <typename Scores, typename Values, typename Softmax, typename Fold>
void overlapped_key_walk(const bl::Tensor &first_query, bl::i32 seq_len,
                         int BLOCK_M, int BLOCK_N, bool CAUSAL, Scores scores,
                         Values values, Softmax softmax, Fold fold,
                         bl::DType half, bl::Tensor &acc) {
  KeyBlocks keys(first_query, seq_len, BLOCK_M, BLOCK_N, CAUSAL);
  auto [first, first_alpha] = softmax(scores(bl::scalar(0, bl::int32), true));
  bl::Tensor previous = first.to(half), alpha = first_alpha;
  for (auto first_key : bl::range(BLOCK_N, keys.unmasked_end, BLOCK_N,
                                  {.warp_specialize = true})) {
    // Rescaled before any MMA is issued: after the MMAs of the product,
    // it would wait for them; between those of the scores and the
    // product's, ptxas finds the accumulator read while MMAs are in flight
    // and issues them one at a time.
    acc = acc * alpha;
    auto qk = scores(first_key, false);
    acc = bl::dot(previous, values(first_key - BLOCK_N, false), acc);
    auto [p, p_alpha] = softmax(qk);
    previous = p.to(half);
    alpha = p_alpha;
  }
  bl::Tensor next = bl::maximum(keys.unmasked_end, BLOCK_N);
  acc = bl::dot(previous, values(next - BLOCK_N, true), acc * alpha);
  for (auto first_key : bl::range(next, keys.end, BLOCK_N))
    fold(first_key, true);
}

/// A loader of a loop body's blocks of pointers. Masked, it reads only the
/// elements whose `index` (broadcast against the block) is before seq_len,
/// and 0 for the others; unmasked, the block lies wholly inside the
/// sequence and loads with no mask to compute, which is what the unmasked
/// loops save. The load carries the line that calls the loader, so that
/// errors and the IR name the kernel's line rather than this one.
inline auto block_loader(bl::Tensor index, bl::Tensor seq_len, bool masked) {
  return [=](const bl::Tensor &ptrs,
             std::source_location loc = std::source_location::current()) {
    bl::Operand at(ptrs, loc);
    if (!masked)
      return bl::load(at);
    return bl::load(at, bl::Operand(index, loc) < bl::Operand(seq_len, loc),
                    bl::Operand(0.f, loc));
  };
}

/// One program of the forward pass; the kernels below differ in `lse` and
/// `rows`. Where given, `lse` receives each query row's log-sum-exp of its
/// scaled scores, ln(sum_j exp(scale q.k_j)): the one number per row from
/// which the backward pass (attention_backward.h) recomputes the row's
/// probabilities instead of storing them. Where `rows` (batch * heads *
/// seq_len) is given, the unmasked loop reads its key and value blocks
/// through tensor descriptors over all heads' rows (a block of that loop
/// lies wholly inside its head), whose copies a producer warpgroup issues
/// on Hopper (attention_ws). OVERLAP walks the keys with each block's
/// second product issued after the next block's scores
/// (overlapped_key_walk).
template <typename T>
void attention_forward(bl::Ptr<T> q, bl::Ptr<T> k, bl::Ptr<T> v, bl::Ptr<T> out,
                       std::optional<bl::Ptr<float>> lse, bl::i32 seq_len,
                       bl::f32 scale, int HEAD_DIM, int BLOCK_M, int BLOCK_N,
                       bool CAUSAL, std::optional<bl::i32> rows = {},
                       bool OVERLAP = false) {
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
  std::optional<bl::TensorDescriptor> k_rows, v_rows;
  if (rows) {
    k_rows = bl::make_tensor_descriptor(k, {*rows, HEAD_DIM}, {HEAD_DIM, 1},
                                        {BLOCK_N, HEAD_DIM});
    v_rows = bl::make_tensor_descriptor(v, {*rows, HEAD_DIM}, {HEAD_DIM, 1},
                                        {BLOCK_N, HEAD_DIM});
  }
  auto first_row = bl::program_id(1) * seq_len; // the head's first row
  // The scores of the key block at first_key, -inf where masked.
  auto scores = [&](const bl::Tensor &first_key, bool masked) {
    auto key_row = bl::expand_dims(first_key + bl::arange(0, BLOCK_N), 0);
    // K^T's tile, [HEAD_DIM, BLOCK_N], read straight from K's rows.
    auto kt_tile =
        rows && !masked
            ? bl::trans(bl::load(*k_rows, {first_row + first_key, 0}))
            : block_loader(key_row, seq_len, masked)(
                  k + head + key_row * HEAD_DIM + bl::expand_dims(dims, 1));
    auto qk = bl::dot(q_tile, kt_tile);
    if (masked) {
      auto visible = key_row < seq_len;
      if (CAUSAL)
        visible = visible & (key_row <= query_col);
      qk = bl::where(visible, qk, -INFINITY);
    }
    return qk;
  };
  // The value block at first_key, [BLOCK_N, HEAD_DIM].
  auto values = [&](const bl::Tensor &first_key, bool masked) {
    if (rows && !masked)
      return bl::load(*v_rows, {first_row + first_key, 0});
    auto key_col = bl::expand_dims(first_key + bl::arange(0, BLOCK_N), 1);
    return block_loader(key_col, seq_len,
                        masked)(v + head + key_col * HEAD_DIM + dim_row);
  };
  // Folds a block's scores into m and l; gives its probabilities and the
  // factor alpha that rescales the old sums.
  auto softmax = [&](const bl::Tensor &qk) {
    // Maxima of the scaled scores, as scale > 0; the scaling and the
    // subtraction of the maximum are one rounding (fma).
    // Powers below 2^-126 are flushed to 0 (bl::Subnormals::Flush, one
    // instruction each on the GPU): P is rounded to f16, whose smallest
    // number is 2^-24, and l, a sum that holds the 1 of each row's
    // maximum, cannot tell.
    auto m_new = bl::maximum(m, bl::max(qk, 1) * scale_log2);
    auto p = bl::exp2(bl::fma(qk, scale_log2, -bl::expand_dims(m_new, 1)),
                      bl::Subnormals::Flush);
    auto alpha = bl::exp2(m - m_new, bl::Subnormals::Flush);
    l = l * alpha + bl::sum(p, 1);
    m = m_new;
    return std::pair{p, bl::expand_dims(alpha, 1)};
  };
  // Folds the key block at first_key into m, l and acc.
  auto fold = [&](const bl::Tensor &first_key, bool masked) {
    auto [p, alpha] = softmax(scores(first_key, masked));
    acc = bl::dot(p.to(bl::dtype_of<T>()), values(first_key, masked),
                  acc * alpha);
  };
  if (OVERLAP)
    overlapped_key_walk(first_query, seq_len, BLOCK_M, BLOCK_N, CAUSAL, scores,
                        values, softmax, fold, bl::dtype_of<T>(), acc);
  else
    for_each_key_block(first_query, seq_len, BLOCK_M, BLOCK_N, CAUSAL, fold,
                       {.warp_specialize = rows.has_value()});
  // One reciprocal per row, then products: dividing each of the
  // HEAD_DIM elements correctly rounded cost the GPU a division routine per
  // element, and the f16 output cannot tell the two roundings from one.
  bl::store(out + head + query_col * HEAD_DIM + dim_row,
            acc * bl::expand_dims(1.0f / l, 1), query_col < seq_len);
  if (lse) {
    // m and l are in powers of two of the scaled scores: sum_j 2^(s_j
    // log2 e) = 2^m l, whose natural log is (m + log2 l) ln 2. Every
    // query inside the sequence sees at least key 0, so l > 0.
    bl::store(*lse + bl::program_id(1) * seq_len + queries,
              (m + bl::log2(l)) * 0.6931471805599453f, queries < seq_len);
  }
}

template <typename T> auto make_attention(const char *name) {
  return bl::kernel(name,
                    {"q", "k", "v", "out", "seq_len", "scale", "HEAD_DIM",
                     "BLOCK_M", "BLOCK_N", "CAUSAL"},
                    [](bl::Ptr<T> q, bl::Ptr<T> k, bl::Ptr<T> v, bl::Ptr<T> out,
                       bl::i32 seq_len, bl::f32 scale, bl::Const<int> HEAD_DIM,
                       bl::Const<int> BLOCK_M, bl::Const<int> BLOCK_N,
                       bl::Const<bool> CAUSAL) {
                      attention_forward<T>(q, k, v, out, std::nullopt, seq_len,
                                           scale, HEAD_DIM, BLOCK_M, BLOCK_N,
                                           CAUSAL);
                    });
}

/// The forward pass with `rows` = batch * heads * seq_len: its unmasked
/// blocks of K and V copied by a producer warpgroup on Hopper; OVERLAP:
/// the softmax of a block overlapped with the previous block's second
/// product (faster at long sequences, slower at short ones, where the
/// first block and the last product are left outside the loop).
template <typename T> auto make_attention_ws(const char *name) {
  return bl::kernel(
      name,
      {"q", "k", "v", "out", "seq_len", "rows", "scale", "HEAD_DIM", "BLOCK_M",
       "BLOCK_N", "CAUSAL", "OVERLAP"},
      [](bl::Ptr<T> q, bl::Ptr<T> k, bl::Ptr<T> v, bl::Ptr<T> out,
         bl::i32 seq_len, bl::i32 rows, bl::f32 scale, bl::Const<int> HEAD_DIM,
         bl::Const<int> BLOCK_M, bl::Const<int> BLOCK_N, bl::Const<bool> CAUSAL,
         bl::Const<bool> OVERLAP) {
        attention_forward<T>(q, k, v, out, std::nullopt, seq_len, scale,
                             HEAD_DIM, BLOCK_M, BLOCK_N, CAUSAL, rows, OVERLAP);
      });
}

/// The forward pass of training: out, and each row's log-sum-exp in `lse`,
/// [batch * heads, seq_len] float32, for the backward kernels.
template <typename T> auto make_attention_fwd_lse(const char *name) {
  return bl::kernel(name,
                    {"q", "k", "v", "out", "lse", "seq_len", "scale",
                     "HEAD_DIM", "BLOCK_M", "BLOCK_N", "CAUSAL"},
                    [](bl::Ptr<T> q, bl::Ptr<T> k, bl::Ptr<T> v, bl::Ptr<T> out,
                       bl::Ptr<float> lse, bl::i32 seq_len, bl::f32 scale,
                       bl::Const<int> HEAD_DIM, bl::Const<int> BLOCK_M,
                       bl::Const<int> BLOCK_N, bl::Const<bool> CAUSAL) {
                      attention_forward<T>(q, k, v, out, lse, seq_len, scale,
                                           HEAD_DIM, BLOCK_M, BLOCK_N, CAUSAL);
                    });
}

inline auto attention = make_attention<bl::half>("attention");
inline auto attention_ws = make_attention_ws<bl::half>("attention_ws");
inline auto attention_fwd_lse =
    make_attention_fwd_lse<bl::half>("attention_fwd_lse");

} // namespace blocc::tutorials
