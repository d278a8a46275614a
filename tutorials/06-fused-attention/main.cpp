// Tutorial 06: fused attention, forward, causal and not. The kernel is in
// attention.h (Python calls it as blocc.kernels.attention); this program
// checks it against float64 attention on every backend, at sequence
// lengths that are not multiples of the blocks, and times it.
#include "attention.h"
#include "common/tutorial.h"

#include <algorithm>

namespace bl = blocc;
namespace tutorial = blocc::tutorial;

using blocc::tutorials::attention;

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
      }
    }
    std::printf("the configurations autotuning chose:\n");
    for (const auto &[key, config] : tuned.chosen())
      std::printf("  %-46s %s\n", key.c_str(), config.str().c_str());
  });
  return t.finish();
}
