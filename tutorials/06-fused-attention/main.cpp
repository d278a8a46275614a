// Tutorial 06: fused attention, forward and backward, causal and not. The
// kernels are in attention.h and attention_backward.h (Python calls them as
// blocc.kernels.attention, ...); this program checks them against float64
// attention and its gradients on every backend, at sequence lengths that
// are not multiples of the blocks, and times them.
#include "attention.h"
#include "attention_backward.h"
#include "common/tutorial.h"

#include <algorithm>

namespace bl = blocc;
namespace tutorial = blocc::tutorial;

using blocc::tutorials::attention;
using blocc::tutorials::attention_bwd_dkdv;
using blocc::tutorials::attention_bwd_dq;
using blocc::tutorials::attention_bwd_preprocess;
using blocc::tutorials::attention_fwd_lse;
using blocc::tutorials::attention_ws;

struct Shape {
  int heads, seq, dim; // heads: batch * heads independent problems
  std::string label() const {
    return std::to_string(heads) + "x" + std::to_string(seq) + "x" +
           std::to_string(dim);
  }
};

/// The query rows checked: all of short sequences, else every 61st and
/// the last (the reference costs seq * dim per row, in float64 on the host).
std::vector<int> checked_rows(int seq) {
  std::vector<int> rows;
  for (int i = 0; i < seq; i += seq <= 257 ? 1 : 61)
    rows.push_back(i);
  if (rows.back() != seq - 1)
    rows.push_back(seq - 1);
  return rows;
}

/// softmax(Q K^T scale) V in float64 from the half inputs, for `rows` of
/// every head: out[head][row][d], flattened in that order.
std::vector<double> float64_attention(const Shape &s,
                                      const std::vector<bl::half> &q,
                                      const std::vector<bl::half> &k,
                                      const std::vector<bl::half> &v,
                                      double scale, bool causal,
                                      const std::vector<int> &rows) {
  std::vector<double> out, p(s.seq);
  for (int h = 0; h < s.heads; ++h) {
    size_t base = size_t(h) * s.seq * s.dim;
    for (int i : rows) {
      int keys = causal ? i + 1 : s.seq;
      double m = -INFINITY, l = 0;
      for (int j = 0; j < keys; ++j) {
        double dot = 0;
        for (int d = 0; d < s.dim; ++d)
          dot += double(float(q[base + size_t(i) * s.dim + d])) *
                 double(float(k[base + size_t(j) * s.dim + d]));
        p[j] = dot * scale;
        m = std::max(m, p[j]);
      }
      for (int j = 0; j < keys; ++j)
        l += p[j] = std::exp(p[j] - m);
      for (int d = 0; d < s.dim; ++d) {
        double o = 0;
        for (int j = 0; j < keys; ++j)
          o += p[j] * double(float(v[base + size_t(j) * s.dim + d]));
        out.push_back(o / l);
      }
    }
  }
  return out;
}

/// The same rows of the kernel's output, in the same order.
std::vector<bl::half> rows_of(const Shape &s, const std::vector<bl::half> &out,
                              const std::vector<int> &rows) {
  std::vector<bl::half> picked;
  for (int h = 0; h < s.heads; ++h)
    for (int i : rows)
      for (int d = 0; d < s.dim; ++d)
        picked.push_back(out[(size_t(h) * s.seq + i) * s.dim + d]);
  return picked;
}

// The backward pass's check. Half's rounding errs by at most u |x| for a
// normal x, and by at most `tiny` below them (subnormals).
constexpr double u = 0x1p-11, tiny = 0x1p-25;

/// softmax(Q K^T scale) V of every head in float64, from the half inputs:
/// P ([head][query][key]), out and each row's lse, with bounds on the
/// kernel's errors in out (P rounded to half before the product, out
/// rounded when stored) and in lse (float32 throughout: the scores' sums of
/// HEAD_DIM exact products, 2^-24 HEAD_DIM sum_d |q k| scale each, and the
/// sum of up to seq exponentials, rescaled once per key block, 2^-22 each
/// as exp2 is approximate on the GPU).
struct Float64Forward {
  std::vector<double> p, out, out_bound, lse, lse_bound;
};

Float64Forward float64_forward(const Shape &s, const std::vector<bl::half> &q,
                               const std::vector<bl::half> &k,
                               const std::vector<bl::half> &v, double scale,
                               bool causal) {
  const size_t n = size_t(s.heads) * s.seq * s.dim;
  Float64Forward r;
  r.p.assign(size_t(s.heads) * s.seq * s.seq, 0);
  r.out.assign(n, 0);
  r.out_bound.assign(n, 0);
  for (int h = 0; h < s.heads; ++h) {
    auto x = [&](const std::vector<bl::half> &a, int row, int d) {
      return double(float(a[(size_t(h) * s.seq + row) * s.dim + d]));
    };
    for (int i = 0; i < s.seq; ++i) {
      const int keys = causal ? i + 1 : s.seq;
      double *p = &r.p[(size_t(h) * s.seq + i) * s.seq];
      double m = -INFINITY, largest = 0, l = 0;
      for (int j = 0; j < keys; ++j) {
        double dot = 0, magnitude = 0;
        for (int d = 0; d < s.dim; ++d) {
          dot += x(q, i, d) * x(k, j, d);
          magnitude += std::fabs(x(q, i, d) * x(k, j, d));
        }
        p[j] = dot * scale;
        m = std::max(m, p[j]);
        largest = std::max(largest, magnitude * scale);
      }
      for (int j = 0; j < keys; ++j)
        l += p[j] = std::exp(p[j] - m);
      for (int j = 0; j < keys; ++j)
        p[j] /= l;
      const double lse = m + std::log(l);
      r.lse.push_back(lse);
      r.lse_bound.push_back(0x1p-24 * (s.dim + 2) * largest +
                            0x1p-22 * (8 + keys / 16.0 + 4 * std::fabs(lse)));
      for (int d = 0; d < s.dim; ++d) {
        double o = 0, o_abs = 0;
        for (int j = 0; j < keys; ++j) {
          o += p[j] * x(v, j, d);
          o_abs += p[j] * std::fabs(x(v, j, d));
        }
        const size_t at = (size_t(h) * s.seq + i) * s.dim + d;
        r.out[at] = o;
        r.out_bound[at] =
            2 * (u * o_abs + tiny * keys) + u * std::fabs(o) + tiny;
      }
    }
  }
  return r;
}

/// dQ, dK and dV of every head in float64, given dO and P, with a bound on
/// each element's error in the kernels'. delta is computed from `out`, the
/// forward kernel's own output (checked against float64 above): the one
/// the backward kernels are given. Taking the exact out instead would add
/// the forward's rounding to every bound, as if all its errors had the
/// sign of dO, and lose the errors that matter. With that, the kernels'
/// errors are: P and dS rounded to half before the products they feed,
///   |P_ij error| <= u P_ij + tiny,   |dS_ij error| <= u |dS_ij| + tiny + P_ij
///   e,
/// with e the float32 errors of dP_ij and delta_i (sums of HEAD_DIM exact
/// products: 2^-24 HEAD_DIM times the sum of their sizes), so
///   |dV_j error| <= sum_i |P_ij error| |dO_i|,
///   |dK_j error| <= scale sum_i |dS_ij error| |q_i|, dQ alike over j.
/// The bound is twice that, for the float32 effects not listed (the
/// scores' sums, exp2, lse, the accumulation: relative errors of a few
/// 2^-24 to 2^-22 per element against half's 2^-11), plus the final
/// rounding to half, u |want| + tiny.
struct Float64Gradients {
  std::vector<double> dq, dk, dv, dq_bound, dk_bound, dv_bound;
};

Float64Gradients float64_gradients(
    const Shape &s, const std::vector<bl::half> &q,
    const std::vector<bl::half> &k, const std::vector<bl::half> &v,
    const std::vector<bl::half> &dout, const std::vector<bl::half> &out,
    const std::vector<double> &p, double scale, bool causal) {
  const size_t n = size_t(s.heads) * s.seq * s.dim;
  Float64Gradients r;
  for (auto *x : {&r.dq, &r.dk, &r.dv, &r.dq_bound, &r.dk_bound, &r.dv_bound})
    x->assign(n, 0);
  std::vector<double> ds(size_t(s.seq) * s.seq), ds_error(ds.size());
  for (int h = 0; h < s.heads; ++h) {
    const size_t head = size_t(h) * s.seq * s.dim;
    auto x = [&](const std::vector<bl::half> &a, int row, int d) {
      return double(float(a[head + size_t(row) * s.dim + d]));
    };
    const double *ph = &p[size_t(h) * s.seq * s.seq];
    for (int i = 0; i < s.seq; ++i) {
      double delta = 0, delta_size = 0;
      for (int d = 0; d < s.dim; ++d) {
        delta += x(dout, i, d) * x(out, i, d);
        delta_size += std::fabs(x(dout, i, d) * x(out, i, d));
      }
      for (int j = 0; j < s.seq; ++j) {
        const size_t ij = size_t(i) * s.seq + j;
        if (causal && j > i) {
          ds[ij] = ds_error[ij] = 0;
          continue;
        }
        double dp = 0, dp_size = 0;
        for (int d = 0; d < s.dim; ++d) {
          dp += x(dout, i, d) * x(v, j, d);
          dp_size += std::fabs(x(dout, i, d) * x(v, j, d));
        }
        ds[ij] = ph[ij] * (dp - delta);
        ds_error[ij] = u * std::fabs(ds[ij]) + tiny +
                       ph[ij] * 0x1p-24 * s.dim * (dp_size + delta_size);
      }
    }
    for (int i = 0; i < s.seq; ++i)
      for (int j = 0; j < (causal ? i + 1 : s.seq); ++j) {
        const size_t ij = size_t(i) * s.seq + j;
        const double p_error = u * ph[ij] + tiny;
        for (int d = 0; d < s.dim; ++d) {
          const size_t at_i = head + size_t(i) * s.dim + d,
                       at_j = head + size_t(j) * s.dim + d;
          r.dv[at_j] += ph[ij] * x(dout, i, d);
          r.dv_bound[at_j] += p_error * std::fabs(x(dout, i, d));
          r.dk[at_j] += scale * ds[ij] * x(q, i, d);
          r.dk_bound[at_j] += scale * ds_error[ij] * std::fabs(x(q, i, d));
          r.dq[at_i] += scale * ds[ij] * x(k, j, d);
          r.dq_bound[at_i] += scale * ds_error[ij] * std::fabs(x(k, j, d));
        }
      }
  }
  for (auto [want, bound] :
       {std::pair{&r.dq, &r.dq_bound}, std::pair{&r.dk, &r.dk_bound},
        std::pair{&r.dv, &r.dv_bound}})
    for (size_t i = 0; i < n; ++i)
      (*bound)[i] = 2 * (*bound)[i] + u * std::fabs((*want)[i]) + tiny;
  return r;
}

/// Fused attention's training step: the forward pass storing each row's
/// log-sum-exp, then the backward pass (delta, then dK and dV, then dQ),
/// checked against float64 and timed (the backward pass alone).
template <typename Backend> void check_backward(Backend &on) {
  using C = bl::Config;
  const bool gpu = on.is_gpu();
  auto fwd = bl::autotune(
      attention_fwd_lse,
      gpu ? std::vector<C>{C({{"BLOCK_M", 64}, {"BLOCK_N", 64}}, 4),
                           C({{"BLOCK_M", 128}, {"BLOCK_N", 64}}, 4)}
          : std::vector<C>{C({{"BLOCK_M", 32}, {"BLOCK_N", 32}})},
      {"seq_len"});
  // dK and dV: a program holds two [BLOCK_N, HEAD_DIM] tiles and their
  // two float32 accumulators; dQ: one of each.
  auto dkdv = bl::autotune(
      attention_bwd_dkdv,
      gpu ? std::vector<C>{C({{"BLOCK_M", 32}, {"BLOCK_N", 64}}, 4),
                           C({{"BLOCK_M", 32}, {"BLOCK_N", 128}}, 4),
                           C({{"BLOCK_M", 64}, {"BLOCK_N", 64}}, 4),
                           C({{"BLOCK_M", 64}, {"BLOCK_N", 128}}, 8)}
          : std::vector<C>{C({{"BLOCK_M", 32}, {"BLOCK_N", 32}}),
                           C({{"BLOCK_M", 32}, {"BLOCK_N", 64}})},
      {"seq_len"});
  auto dq = bl::autotune(
      attention_bwd_dq,
      gpu ? std::vector<C>{C({{"BLOCK_M", 64}, {"BLOCK_N", 32}}, 4),
                           C({{"BLOCK_M", 128}, {"BLOCK_N", 32}}, 4),
                           C({{"BLOCK_M", 64}, {"BLOCK_N", 64}}, 4),
                           C({{"BLOCK_M", 128}, {"BLOCK_N", 64}}, 8)}
          : std::vector<C>{C({{"BLOCK_M", 32}, {"BLOCK_N", 32}}),
                           C({{"BLOCK_M", 64}, {"BLOCK_N", 32}})},
      {"seq_len"});
  // Head dimensions 64 and 128; the interpreter runs element by element,
  // so its shapes stay small.
  std::vector<Shape> shapes = {{1, 1, 64}, {2, 37, 64}, {2, 100, 128}};
  if (on.label() != "interpreter")
    shapes.push_back({2, 257, 64});
  if (gpu) {
    shapes.push_back({4, 1024, 64});
    shapes.push_back({2, 1024, 128});
  } else if (on.label() == "cpu") {
    shapes.push_back({2, 384, 128});
  }
  for (const Shape &s : shapes) {
    const size_t n = size_t(s.heads) * s.seq * s.dim;
    const size_t rows = size_t(s.heads) * s.seq;
    auto q = tutorial::random_uniform<bl::half>(n, -1, 1);
    auto k = tutorial::random_uniform<bl::half>(n, -1, 1);
    auto v = tutorial::random_uniform<bl::half>(n, -1, 1);
    auto dout = tutorial::random_uniform<bl::half>(n, -1, 1);
    const float scale = 1 / std::sqrt(float(s.dim));
    auto q_on = on.copy(q), k_on = on.copy(k), v_on = on.copy(v);
    auto dout_on = on.copy(dout);
    for (bool causal : {false, true}) {
      const Float64Forward forward = float64_forward(s, q, k, v, scale, causal);
      auto out = on.copy(tutorial::poisoned<bl::half>(n));
      auto lse = on.copy(tutorial::poisoned<float>(rows));
      auto delta = on.copy(tutorial::poisoned<float>(rows));
      auto dq_out = on.copy(tutorial::poisoned<bl::half>(n));
      auto dk_out = on.copy(tutorial::poisoned<bl::half>(n));
      auto dv_out = on.copy(tutorial::poisoned<bl::half>(n));
      auto query_blocks = [&](const C &c) {
        return bl::Grid(bl::cdiv(s.seq, int(c["BLOCK_M"])), s.heads);
      };
      auto key_blocks = [&](const C &c) {
        return bl::Grid(bl::cdiv(s.seq, int(c["BLOCK_N"])), s.heads);
      };
      fwd[query_blocks](q_on, k_on, v_on, out, lse, s.seq, scale, s.dim,
                        causal);
      const std::vector<bl::half> out_host = on.read(out);
      const Float64Gradients want = float64_gradients(
          s, q, k, v, dout, out_host, forward.p, scale, causal);
      // The five products of the backward pass (dV, dP, dS^T Q, dS K, and
      // S recomputed once), 2 seq^2 HEAD_DIM flops each per head, as the
      // rates of FlashAttention and Triton count them: 2.5 times the
      // forward's. Computing S and dP in both kernels is not counted.
      double flops = 10.0 * s.heads * s.seq * double(s.seq) * s.dim;
      on.row(
          s.label() + (causal ? " causal" : "") + " bwd",
          tutorial::Work::flops(causal ? flops / 2 : flops),
          [&] {
            attention_bwd_preprocess[{bl::cdiv(int(rows), 32)}](
                out, dout_on, delta, int(rows), s.dim, 32);
            dkdv[key_blocks](q_on, k_on, v_on, dout_on, lse, delta, dk_out,
                             dv_out, s.seq, scale, s.dim, causal);
            dq[query_blocks](q_on, k_on, v_on, dout_on, lse, delta, dq_out,
                             s.seq, scale, s.dim, causal);
          },
          [&](tutorial::Check &check) {
            // The bounds of float64_forward and float64_gradients, element
            // by element.
            check.within("out", out_host, forward.out, forward.out_bound);
            check.within("lse", on.read(lse), forward.lse, forward.lse_bound);
            check.within("dq", on.read(dq_out), want.dq, want.dq_bound);
            check.within("dk", on.read(dk_out), want.dk, want.dk_bound);
            check.within("dv", on.read(dv_out), want.dv, want.dv_bound);
          });
    }
  }
  std::printf("the configurations autotuning chose (dK and dV, then dQ):\n");
  for (const auto &chosen : {dkdv.chosen(), dq.chosen()})
    for (const auto &[key, config] : chosen)
      std::printf("  %-46s %s\n", key.c_str(), config.str().c_str());
}

int main() {
  tutorial::Tutorial t("06-fused-attention");
  t.run([&](auto &on) {
    // Query and key block sizes, chosen per (seq_len, HEAD_DIM, CAUSAL) by
    // measuring each configuration at its first launch (blocc::autotune).
    using C = bl::Config;
    auto tuned = bl::autotune(
        attention,
        on.is_gpu() ? std::vector<C>{C({{"BLOCK_M", 64}, {"BLOCK_N", 64}}, 4),
                                     C({{"BLOCK_M", 128}, {"BLOCK_N", 64}}, 4),
                                     C({{"BLOCK_M", 128}, {"BLOCK_N", 64}}, 8),
                                     C({{"BLOCK_M", 64}, {"BLOCK_N", 32}}, 4)}
                    : std::vector<C>{C({{"BLOCK_M", 32}, {"BLOCK_N", 32}}),
                                     C({{"BLOCK_M", 64}, {"BLOCK_N", 64}})},
        {"seq_len"});
    std::vector<Shape> shapes = {
        {1, 1, 16}, {2, 17, 16}, {3, 100, 32}, {2, 257, 64}};
    if (on.is_gpu())
      shapes.push_back({64, 2048, 64});
    else if (on.label() == "cpu")
      shapes.push_back({4, 1024, 64});
    for (const Shape &s : shapes) {
      const size_t n = size_t(s.heads) * s.seq * s.dim;
      auto q = tutorial::random_uniform<bl::half>(n, -1, 1);
      auto k = tutorial::random_uniform<bl::half>(n, -1, 1);
      auto v = tutorial::random_uniform<bl::half>(n, -1, 1);
      const float scale = 1 / std::sqrt(float(s.dim));
      auto q_on = on.copy(q), k_on = on.copy(k), v_on = on.copy(v);
      for (bool causal : {false, true}) {
        const std::vector<int> rows = checked_rows(s.seq);
        std::vector<double> want =
            float64_attention(s, q, k, v, scale, causal, rows);
        auto out = on.copy(tutorial::poisoned<bl::half>(n));
        // One program per block of queries of one head.
        auto grid = [&](const C &c) {
          return bl::Grid(bl::cdiv(s.seq, int(c["BLOCK_M"])), s.heads);
        };
        // Two products of 2 * seq * seq * dim flops per head (half of them
        // skipped when causal).
        double flops = 4.0 * s.heads * s.seq * double(s.seq) * s.dim;
        on.row(
            s.label() + (causal ? " causal" : ""),
            tutorial::Work::flops(causal ? flops / 2 : flops),
            [&] {
              tuned[grid](q_on, k_on, v_on, out, s.seq, scale, s.dim, causal);
            },
            [&](tutorial::Check &check) {
              // The probabilities are rounded to half before the second
              // product (2^-11 relative each) and the output is stored in
              // half; with |v| < 1 the error stays within a few 2^-11.
              check("out", rows_of(s, on.read(out), rows), want, {4e-3, 2e-3});
            });
        // attention_ws: the unmasked blocks of K and V read through tensor
        // descriptors over every head's rows (on Hopper, copied by TMA),
        // and each block's softmax overlapped with the previous block's
        // second product (OVERLAP).
        const int block = on.is_gpu() ? 64 : 32;
        auto out_ws = on.copy(tutorial::poisoned<bl::half>(n));
        on.row(
            s.label() + (causal ? " causal" : "") + " attention_ws",
            tutorial::Work::flops(causal ? flops / 2 : flops),
            [&] {
              attention_ws[bl::Grid(bl::cdiv(s.seq, block), s.heads)](
                  q_on, k_on, v_on, out_ws, s.seq, s.heads * s.seq, scale,
                  s.dim, block, block, causal, true);
            },
            [&](tutorial::Check &check) {
              check("out", rows_of(s, on.read(out_ws), rows), want,
                    {4e-3, 2e-3});
            });
      }
    }
    std::printf("the configurations autotuning chose:\n");
    for (const auto &[key, config] : tuned.chosen())
      std::printf("  %-46s %s\n", key.c_str(), config.str().c_str());
    check_backward(on);
  });
  return t.finish();
}
