// Tutorial 05's kernels, shared by the tutorial (main.cpp) and the Python
// package (blocc.kernels.layer_norm_fwd, layer_norm_fwd_row,
// layer_norm_bwd_dx and layer_norm_bwd_dwdb,
// bindings/module/shipped_kernels.cpp).
//
// Layer norm normalizes each row x of an [M, N] matrix to zero mean and
// unit variance, then scales and shifts it per column:
//   y = (x - mean) * rstd * w + b,   rstd = 1 / sqrt(var + eps).
// Forward: one program per row. A row may be longer than a block, so the
// program walks it in blocks three times: summing x into a block
// accumulator (mean), summing the squares of x - mean (variance), then
// normalizing. It also stores the row's mean and rstd for the backward
// pass. Where a row fits in one block (BLOCK >= N), layer_norm_fwd_row
// loads it once and keeps it in registers for all three steps: the loop
// form reads each row three times (the second and third reads hit the
// cache, but cost issue slots and cache bandwidth), so long rows that fit
// run closer to the copy's bandwidth held in registers.
//
// Backward, with xhat = (x - mean) * rstd and dy the gradient of y:
//   dx = (w dy - (xhat c1 + c2)) * rstd,
//     c1 = mean over the row of xhat * w dy,   c2 = mean of w dy;
//   dw = sum over the rows of dy * xhat,   db = sum over the rows of dy.
// dx is per row, but dw and db sum over all M rows: a reduction across
// programs. As in Triton's tutorial, it is done in two steps. First each
// of G programs handles the rows pid, pid + G, ... (the whole row in one
// block), writes their dx, and adds their dy * xhat and dy into block
// accumulators, which it stores as row pid of two [G, N] partial-sum
// matrices. Then layer_norm_bwd_dwdb sums those G rows column block by
// column block. (Triton's tutorial lets many programs add into a few
// shared partial rows under a spin lock; here every program owns its row,
// which needs no lock and gives the same bits in every run.)
#pragma once

#include <blocc/blocc.h>

namespace blocc::tutorials {

namespace bl = blocc;

/// The forward kernel for rows stored as T (float, or bl::half with float
/// statistics: the loads widen, the store rounds once).
template <typename T> auto make_layer_norm_fwd(const char *name) {
  return bl::kernel(
      name, {"x", "y", "w", "b", "mean", "rstd", "stride", "n", "eps", "BLOCK"},
      [](bl::Ptr<T> x, bl::Ptr<T> y, bl::Ptr<T> w, bl::Ptr<T> b,
         bl::Ptr<float> mean_out, bl::Ptr<float> rstd_out, bl::i32 stride,
         bl::i32 n, bl::f32 eps, bl::Const<int> BLOCK) {
        auto row = bl::program_id(0);
        auto x_row = x + row * stride;
        auto sum = bl::zeros({BLOCK}, bl::float32);
        for (auto start : bl::range(0, n, BLOCK)) {
          auto cols = start + bl::arange(0, BLOCK);
          sum += bl::load(x_row + cols, cols < n, 0.f).to(bl::float32);
        }
        auto mean = bl::sum(sum, 0) / n.to(bl::float32);
        // The variance from x - mean, not from E[x^2] - mean^2, which loses
        // the digits that matter when the mean is large against the spread.
        auto squares = bl::zeros({BLOCK}, bl::float32);
        for (auto start : bl::range(0, n, BLOCK)) {
          auto cols = start + bl::arange(0, BLOCK);
          auto v = bl::load(x_row + cols, cols < n).to(bl::float32);
          auto centered = bl::where(cols < n, v - mean, 0.f);
          squares += centered * centered;
        }
        auto variance = bl::sum(squares, 0) / n.to(bl::float32);
        auto rstd = 1.f / bl::sqrt(variance + eps);
        bl::store(mean_out + row, mean);
        bl::store(rstd_out + row, rstd);
        for (auto start : bl::range(0, n, BLOCK)) {
          auto cols = start + bl::arange(0, BLOCK);
          auto mask = cols < n;
          auto v = bl::load(x_row + cols, mask).to(bl::float32);
          auto xhat = (v - mean) * rstd;
          auto out = xhat * bl::load(w + cols, mask).to(bl::float32) +
                     bl::load(b + cols, mask).to(bl::float32);
          bl::store(y + row * stride + cols, out, mask); // rounded to T
        }
      });
}

inline auto layer_norm_fwd = make_layer_norm_fwd<float>("layer_norm_fwd");

/// The forward kernel for rows of at most BLOCK columns, each row loaded
/// once; the same parameters as layer_norm_fwd.
inline auto layer_norm_fwd_row = bl::kernel(
    "layer_norm_fwd_row",
    {"x", "y", "w", "b", "mean", "rstd", "stride", "n", "eps", "BLOCK"},
    [](bl::Ptr<float> x, bl::Ptr<float> y, bl::Ptr<float> w, bl::Ptr<float> b,
       bl::Ptr<float> mean_out, bl::Ptr<float> rstd_out, bl::i32 stride,
       bl::i32 n, bl::f32 eps, bl::Const<int> BLOCK) {
      auto row = bl::program_id(0);
      auto cols = bl::arange(0, BLOCK); // the whole row: BLOCK >= n
      auto mask = cols < n;
      auto v = bl::load(x + row * stride + cols, mask, 0.f);
      auto mean = bl::sum(v, 0) / n.to(bl::float32);
      auto centered = bl::where(mask, v - mean, 0.f);
      auto variance = bl::sum(centered * centered, 0) / n.to(bl::float32);
      auto rstd = 1.f / bl::sqrt(variance + eps);
      bl::store(mean_out + row, mean);
      bl::store(rstd_out + row, rstd);
      auto out =
          centered * rstd * bl::load(w + cols, mask) + bl::load(b + cols, mask);
      bl::store(y + row * stride + cols, out, mask);
    });

inline auto layer_norm_bwd_dx = bl::kernel(
    "layer_norm_bwd_dx",
    {"dx", "dy", "partial_dw", "partial_db", "x", "w", "mean", "rstd", "stride",
     "rows", "n", "BLOCK"},
    [](bl::Ptr<float> dx, bl::Ptr<float> dy, bl::Ptr<float> partial_dw,
       bl::Ptr<float> partial_db, bl::Ptr<float> x, bl::Ptr<float> w,
       bl::Ptr<float> mean, bl::Ptr<float> rstd, bl::i32 stride, bl::i32 rows,
       bl::i32 n, bl::Const<int> BLOCK) {
      auto pid = bl::program_id(0);
      auto cols = bl::arange(0, BLOCK); // the whole row: BLOCK >= n
      auto mask = cols < n;
      auto w_row = bl::load(w + cols, mask, 0.f);
      auto dw = bl::zeros({BLOCK}, bl::float32);
      auto db = bl::zeros({BLOCK}, bl::float32);
      for (auto row : bl::range(pid, rows, bl::num_programs(0))) {
        auto rstd_row = bl::load(rstd + row);
        auto xhat = (bl::load(x + row * stride + cols, mask, 0.f) -
                     bl::load(mean + row)) *
                    rstd_row;
        auto dy_row = bl::load(dy + row * stride + cols, mask, 0.f);
        auto wdy = w_row * dy_row; // 0 past n, so the sums see only the row
        auto c1 = bl::sum(xhat * wdy, 0) / n.to(bl::float32);
        auto c2 = bl::sum(wdy, 0) / n.to(bl::float32);
        bl::store(dx + row * stride + cols, (wdy - (xhat * c1 + c2)) * rstd_row,
                  mask);
        dw += dy_row * xhat;
        db += dy_row;
      }
      bl::store(partial_dw + pid * n + cols, dw, mask);
      bl::store(partial_db + pid * n + cols, db, mask);
    });

inline auto layer_norm_bwd_dwdb = bl::kernel(
    "layer_norm_bwd_dwdb",
    {"partial_dw", "partial_db", "dw", "db", "m", "n", "BLOCK_M", "BLOCK_N"},
    [](bl::Ptr<float> partial_dw, bl::Ptr<float> partial_db, bl::Ptr<float> dw,
       bl::Ptr<float> db, bl::i32 m, bl::i32 n, bl::Const<int> BLOCK_M,
       bl::Const<int> BLOCK_N) {
      auto cols = bl::program_id(0) * BLOCK_N + bl::arange(0, BLOCK_N);
      auto dw_sum = bl::zeros({BLOCK_M, BLOCK_N}, bl::float32);
      auto db_sum = bl::zeros({BLOCK_M, BLOCK_N}, bl::float32);
      for (auto start : bl::range(0, m, BLOCK_M)) {
        auto rows = start + bl::arange(0, BLOCK_M);
        auto offsets = bl::expand_dims(rows, 1) * n + bl::expand_dims(cols, 0);
        auto mask = bl::expand_dims(rows < m, 1) & bl::expand_dims(cols < n, 0);
        dw_sum += bl::load(partial_dw + offsets, mask, 0.f);
        db_sum += bl::load(partial_db + offsets, mask, 0.f);
      }
      bl::store(dw + cols, bl::sum(dw_sum, 0), cols < n);
      bl::store(db + cols, bl::sum(db_sum, 0), cols < n);
    });

} // namespace blocc::tutorials
