// Tutorial 08: rotary position embedding, forward and backward, in place on
// [batch, seq, heads, head_dim]. The kernel is in rope.h (Python calls it as
// blocc.kernels.rope); this program checks the forward and the backward
// pass against float64 rotations, and that backward undoes forward, on
// every backend, and times them.
#include "common/tutorial.h"
#include "rope.h"

#include <algorithm>
#include <bit>

namespace bl = blocc;
namespace tutorial = blocc::tutorial;

using blocc::tutorials::rope;

struct Shape {
  int batch, seq, heads, head_dim;
  std::string label() const {
    return std::to_string(batch) + "x" + std::to_string(seq) + "x" +
           std::to_string(heads) + "x" + std::to_string(head_dim);
  }
};

/// The model's tables: position s, pair d turns by s * 10000^(-2d / dim).
void rope_tables(const Shape &s, std::vector<float> &cos,
                 std::vector<float> &sin) {
  const int half = s.head_dim / 2;
  cos.resize(size_t(s.seq) * half);
  sin.resize(cos.size());
  for (int p = 0; p < s.seq; ++p)
    for (int d = 0; d < half; ++d) {
      double theta = p * std::pow(10000.0, -2.0 * d / s.head_dim);
      cos[size_t(p) * half + d] = float(std::cos(theta));
      sin[size_t(p) * half + d] = float(std::sin(theta));
    }
}

/// q rotated by (cos, sign * sin) in float64, and each element's error
/// bound: two float32 products and a sum, about three roundings of the
/// larger term (the result itself may cancel to zero).
void float64_rotation(const Shape &s, const std::vector<float> &q,
                      const std::vector<float> &cos,
                      const std::vector<float> &sin, double sign,
                      std::vector<double> &want, std::vector<double> &bound) {
  const int half = s.head_dim / 2;
  want.assign(q.size(), 0);
  bound.assign(q.size(), 0);
  for (size_t r = 0; r < size_t(s.batch) * s.seq; ++r)
    for (int h = 0; h < s.heads; ++h)
      for (int d = 0; d < half; ++d) {
        size_t i1 = (r * s.heads + h) * s.head_dim + d, i2 = i1 + half;
        size_t t = (r % s.seq) * half + d;
        double c = cos[t], sn = sign * sin[t], x1 = q[i1], x2 = q[i2];
        want[i1] = x1 * c - x2 * sn;
        want[i2] = x2 * c + x1 * sn;
        bound[i1] = 4 * 0x1p-24 * (std::fabs(x1 * c) + std::fabs(x2 * sn));
        bound[i2] = 4 * 0x1p-24 * (std::fabs(x2 * c) + std::fabs(x1 * sn));
      }
}

/// Checks got against want within the largest element's bound (tests/e2e's
/// rope test holds each element to its own).
void check_within(tutorial::Check &check, const std::string &what,
                  const std::vector<float> &got,
                  const std::vector<double> &want,
                  const std::vector<double> &bound) {
  double loosest = 0;
  for (double b : bound)
    loosest = std::max(loosest, b);
  check(what, got, want, {0, loosest});
}

int main() {
  tutorial::Tutorial t("08-rope");
  t.run([&](auto &on) {
    std::vector<Shape> shapes = {{1, 1, 1, 2},    // one pair
                                 {1, 7, 3, 6},    // half = 3: lanes off
                                 {2, 5, 5, 64},   // GROUP 4 leaves a head
                                 {3, 13, 2, 130}, // half = 65, BLOCK 128
                                 {4, 256, 16, 128}};
    if (on.is_gpu())
      shapes.push_back({8, 1024, 32, 128}); // 32M elements, 128 MB
    const int group = 4;
    for (const Shape &s : shapes) {
      const size_t n = size_t(s.batch) * s.seq * s.heads * s.head_dim;
      const int half = s.head_dim / 2;
      const int block = int(std::bit_ceil(unsigned(half)));
      auto x = tutorial::random_uniform(n, -2, 2);
      std::vector<float> cos, sin;
      rope_tables(s, cos, sin);
      auto cos_on = on.copy(cos), sin_on = on.copy(sin);
      const blocc::Grid grid{s.batch * s.seq, bl::cdiv(s.heads, group)};
      // q read and written once; the tables' rows read once per program.
      const double bytes = 8.0 * n + 8.0 * half * s.batch * s.seq * grid.y;
      for (bool backward : {false, true}) {
        std::vector<double> want, bound;
        float64_rotation(s, x, cos, sin, backward ? -1 : +1, want, bound);
        auto q = on.copy(x); // each row starts from x (the launch is in place)
        on.row(
            s.label() + (backward ? " bwd" : " fwd"), bytes,
            [&] {
              rope[grid](q, cos_on, sin_on, s.seq, s.heads, s.head_dim, group,
                         block, backward);
            },
            [&](tutorial::Check &check) {
              check_within(check, "q", on.read(q), want, bound);
            });
      }
      // Backward undoes forward: x (cos^2 + sin^2), cos^2 + sin^2 of the
      // float32 tables being 1 within a few 2^-24, plus each pass's
      // roundings (not timed: a row's timing would rotate q many times).
      auto q = on.copy(x);
      rope[grid](q, cos_on, sin_on, s.seq, s.heads, s.head_dim, group, block,
                 false);
      rope[grid](q, cos_on, sin_on, s.seq, s.heads, s.head_dim, group, block,
                 true);
      std::vector<float> back = on.read(q);
      double worst = 0;
      for (size_t i = 0; i < n; ++i) {
        size_t pair = (i % s.head_dim) < size_t(half) ? i + half : i - half;
        double bound = 12 * 0x1p-24 * (std::fabs(x[i]) + std::fabs(x[pair]));
        worst = std::max(worst, std::fabs(back[i] - x[i]) / bound);
      }
      std::printf("%-12s %-16s backward(forward(q)) = q: worst error %.2f of "
                  "its bound %s\n",
                  on.label().c_str(), s.label().c_str(), worst,
                  worst <= 1 ? "ok" : "MISMATCH");
      if (!(worst <= 1))
        on.fail();
    }
  });
  return t.finish();
}
