// Rotary position embedding, in place, forward and backward (seeds/001, after
// unsloth's kernel). q is [batch, seq, heads, head_dim], contiguous; cos and
// sin are [seq, head_dim / 2] tables. Position s rotates each pair
// (q[..., d], q[..., d + half]) by the angle whose cosine and sine are
// cos[s, d], sin[s, d]:
//   forward:  y1 = x1 cos - x2 sin,  y2 = x2 cos + x1 sin
//   backward: the inverse rotation (sin -> -sin), which is also the
//             gradient of the forward with respect to q.
// The grid is [batch * seq, cdiv(heads, GROUP)]: a program owns one token
// row and GROUP of its heads (a trace-time unrolled loop, tl.static_range),
// so it loads the row's cos/sin once and reuses them for every head.
#include "e2e/support.h"

#include "08-rope/rope.h"

namespace bl = blocc;
using namespace blocc::testing;

namespace {

// Tutorial 08's kernel (also blocc.kernels.rope).
using blocc::tutorials::rope;

struct Shape4 {
  int batch, seq, heads, head_dim;
};

int next_pow2(int v) {
  int p = 1;
  while (p < v)
    p *= 2;
  return p;
}

class Rope : public ::testing::TestWithParam<Shape4> {
protected:
  void SetUp() override {
    auto [batch, seq, heads, head_dim] = GetParam();
    half_ = head_dim / 2;
    q_ = random_floats(size_t(batch) * seq * heads * head_dim, -2, 2);
    cos_.resize(size_t(seq) * half_);
    sin_.resize(size_t(seq) * half_);
    // Angles as a model computes them: position * base^(-2d / head_dim).
    for (int s = 0; s < seq; ++s)
      for (int d = 0; d < half_; ++d) {
        double theta = s * std::pow(10000.0, -2.0 * d / head_dim);
        cos_[s * half_ + d] = float(std::cos(theta));
        sin_[s * half_ + d] = float(std::sin(theta));
      }
  }

  void launch(std::vector<float> &q, bool backward, int group) {
    auto [batch, seq, heads, head_dim] = GetParam();
    rope[{batch * seq, bl::cdiv(heads, group)}](
        q, cos_, sin_, seq, heads, head_dim, group, next_pow2(half_), backward);
  }

  /// Checks `got` against the rotation of `in` by (cos, sign * sin), in
  /// float64 from the same f32 tables.
  ::testing::AssertionResult rotated(const std::vector<float> &in,
                                     const std::vector<float> &got,
                                     double sign) {
    auto [batch, seq, heads, head_dim] = GetParam();
    for (int r = 0; r < batch * seq; ++r)
      for (int h = 0; h < heads; ++h)
        for (int d = 0; d < half_; ++d) {
          size_t i1 = (size_t(r) * heads + h) * head_dim + d, i2 = i1 + half_;
          double c = cos_[(r % seq) * half_ + d],
                 s = sign * sin_[(r % seq) * half_ + d];
          double x1 = in[i1], x2 = in[i2];
          double y1 = x1 * c - x2 * s, y2 = x2 * c + x1 * s;
          // Two f32 products and a sum: at most about 3 roundings of the
          // larger term's size (no relative bound: y may cancel to ~0).
          const double ulp = std::ldexp(1.0, -24);
          double tol1 = 4 * ulp * (std::abs(x1 * c) + std::abs(x2 * s));
          double tol2 = 4 * ulp * (std::abs(x2 * c) + std::abs(x1 * s));
          if (!(std::abs(got[i1] - y1) <= tol1) ||
              !(std::abs(got[i2] - y2) <= tol2))
            return ::testing::AssertionFailure()
                   << "row " << r << " head " << h << " pair " << d << ": got ("
                   << got[i1] << ", " << got[i2] << "), want (" << y1 << ", "
                   << y2 << ")";
        }
    return ::testing::AssertionSuccess();
  }

  int half_ = 0;
  std::vector<float> q_, cos_, sin_;
};

TEST_P(Rope, ForwardRotatesInPlace) {
  for (int group : {1, 4}) {
    SCOPED_TRACE("GROUP = " + std::to_string(group));
    auto q = q_;
    launch(q, /*backward=*/false, group);
    EXPECT_TRUE(rotated(q_, q, +1));
  }
}

TEST_P(Rope, BackwardIsTheInverseRotation) {
  auto q = q_;
  launch(q, /*backward=*/true, 2);
  EXPECT_TRUE(rotated(q_, q, -1));
}

TEST_P(Rope, ForwardThenBackwardRecoversTheInput) {
  auto q = q_;
  launch(q, false, 4);
  launch(q, true, 4);
  // x (cos^2 + sin^2) plus the roundings of both passes: cos^2 + sin^2 of
  // f32 tables is 1 within a few 2^-24, each pass adds about 3 roundings.
  for (size_t i = 0; i < q.size(); ++i) {
    size_t pair =
        (i % GetParam().head_dim) < size_t(half_) ? i + half_ : i - half_;
    double tol =
        12 * std::ldexp(1.0, -24) * (std::abs(q_[i]) + std::abs(q_[pair]));
    ASSERT_NEAR(q[i], q_[i], tol) << "element " << i;
  }
}

TEST_P(Rope, PaddedHeadLanesAreNotTouched) {
  // The rows of a larger buffer past the last head must keep their poison:
  // the masks on head and column keep the program inside its row.
  std::vector<float> q = q_;
  q.resize(q_.size() + 64, std::numeric_limits<float>::quiet_NaN());
  launch(q, false, 4);
  for (size_t i = q_.size(); i < q.size(); ++i)
    ASSERT_TRUE(std::isnan(q[i]))
        << "element " << i << " past the tensor was written";
  q.resize(q_.size());
  EXPECT_TRUE(rotated(q_, q, +1));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Rope,
    ::testing::Values(Shape4{1, 1, 1, 2},     // one pair
                      Shape4{1, 7, 3, 6},     // half = 3: lanes masked off
                      Shape4{2, 5, 5, 64},    // GROUP = 4 leaves one head alone
                      Shape4{3, 13, 2, 130},  // half = 65, BLOCK = 128
                      Shape4{2, 17, 8, 128}), // a model's shape, small
    [](const auto &info) {
      auto s = info.param;
      return "b" + std::to_string(s.batch) + "_s" + std::to_string(s.seq) +
             "_h" + std::to_string(s.heads) + "_d" + std::to_string(s.head_dim);
    });

} // namespace
