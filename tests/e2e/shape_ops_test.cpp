// Shape operations end to end: expand_dims and broadcasting building 2-D
// tiles, broadcast_to, reshape, permute and trans (on data and on masks),
// join/split (interleave and de-interleave), cat, and the scalar forms.
// They only move elements, so results are compared bit for bit with a host
// rearrangement of the inputs; outputs are poisoned first, and logical
// sizes that are not multiples of the block are masked.
#include "e2e/support.h"

#include <cstring>

namespace bl = blocc;
using namespace blocc::testing;

namespace {

// ------------------------------------------------------------ helpers
template <typename T> std::vector<T> poison(size_t n) {
  std::vector<T> v(n);
  std::memset(static_cast<void *>(v.data()), 0x5a, n * sizeof(T));
  return v;
}

template <typename T> T from_int(int64_t v) {
  if constexpr (std::is_same_v<T, bl::half>)
    return bl::half(static_cast<float>(v) / 4);
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v) / 8;
  else
    return static_cast<T>(v);
}

/// Random elements, exactly representable in T, never the poison pattern.
template <typename T> std::vector<T> random_elements(size_t n) {
  int64_t range = sizeof(T) == 1 ? 127 : 1000;
  std::vector<T> v;
  for (int64_t x : random_ints<int64_t>(n, -range, range))
    v.push_back(from_int<T>(x));
  return v;
}

template <typename T> double as_double(T v) {
  if constexpr (std::is_same_v<T, bl::half>)
    return static_cast<float>(v);
  else
    return static_cast<double>(v);
}

/// Bit-for-bit equality, reporting the first difference.
template <typename T>
::testing::AssertionResult same_bits(const std::vector<T> &got,
                                     const std::vector<T> &want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << "size " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0)
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << as_double(got[i]) << ", want "
             << as_double(want[i]);
  return ::testing::AssertionSuccess();
}

// ------------------------------------------- expand_dims + broadcasting
// out[i][j] = 10 x[i] + y[j], the 2-D tile built from two 1-D blocks with
// expand_dims at positive and negative axes.
auto outer_sum = bl::kernel("outer_sum", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                            bl::Ptr<float> out, bl::i32 m,
                                            bl::i32 n, bl::Const<int> B) {
  auto rows = bl::program_id(0) * B + bl::arange(0, B);
  auto cols = bl::program_id(1) * B + bl::arange(0, B);
  auto xv = bl::load(x + rows, rows < m);
  auto yv = bl::load(y + cols, cols < n);
  auto r = bl::expand_dims(rows, 1);  // [B, 1]
  auto c = bl::expand_dims(cols, -2); // [1, B]
  auto mask = (r < m) & (c < n);
  auto tile = bl::expand_dims(xv, -1) * 10.f + bl::expand_dims(yv, 0);
  bl::store(out + r * n + c, tile, mask);
});

TEST(ExpandDims, OuterSumOfTwoVectors) {
  for (auto [m, n] : {std::pair{1, 1}, {5, 7}, {16, 3}, {17, 31}}) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    auto x = random_floats(m), y = random_floats(n);
    auto out = poisoned(size_t(m) * n);
    outer_sum[{bl::cdiv(m, 8), bl::cdiv(n, 8)}](x, y, out, m, n, 8);
    std::vector<double> want;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        want.push_back(10.0 * x[i] + y[j]);
    // Two f32 roundings (10 x, then the sum).
    EXPECT_TRUE(all_close(out, want, 3e-7, 1e-7));
  }
}

// ------------------------------------------------------- broadcast_to
// out[i][j] = y[j] + 100 x[i] + 10000 s, from a row, a column and a scalar
// broadcast_to one shape (the row gains a leading dimension).
auto broadcast_sum = bl::kernel(
    "broadcast_sum", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> y,
                        bl::Ptr<int32_t> s, bl::Ptr<int32_t> out, bl::i32 m,
                        bl::i32 n, bl::Const<int> BM, bl::Const<int> BN) {
      auto rows = bl::arange(0, BM);
      auto cols = bl::arange(0, BN);
      auto row = bl::broadcast_to(bl::load(y + cols, cols < n), {BM, BN});
      auto column = bl::broadcast_to(
          bl::expand_dims(bl::load(x + rows, rows < m), 1), {BM, BN});
      auto scalar = bl::broadcast_to(bl::load(s), {BM, BN});
      auto r = bl::broadcast_to(bl::expand_dims(rows, 1), {BM, BN});
      auto c = bl::broadcast_to(cols, {BM, BN});
      bl::store(out + r * n + c, row + column * 100 + scalar * 10000,
                (r < m) & (c < n));
    });

TEST(BroadcastTo, RowColumnAndScalarMeetInOneTile) {
  for (auto [m, n] : {std::pair{1, 1}, {3, 13}, {8, 16}}) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    auto x = random_ints<int32_t>(m, -50, 50),
         y = random_ints<int32_t>(n, -50, 50),
         s = random_ints<int32_t>(1, -50, 50);
    auto out = poison<int32_t>(size_t(m) * n);
    broadcast_sum[{1}](x, y, s, out, m, n, 8, 16);
    std::vector<int32_t> want;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        want.push_back(y[j] + 100 * x[i] + 10000 * s[0]);
    EXPECT_EQ(out, want);
  }
}

// -------------------------------------------------- reshape + permute
// A block of 32 (the first n real, the rest masked to 0) is viewed as 4x8
// and transposed, and as 2x4x4 and permuted; both are flattened back.
template <typename T> auto &reshape_permute() {
  static auto k =
      bl::kernel("reshape_permute", [](bl::Ptr<T> x, bl::Ptr<T> transposed,
                                       bl::Ptr<T> permuted, bl::i32 n) {
        auto offs = bl::arange(0, 32);
        auto v = bl::load(x + offs, offs < n);
        auto t = bl::trans(bl::reshape(v, {4, 8})); // [8, 4]
        bl::store(transposed + offs, bl::reshape(t, {32}));
        auto cube = bl::reshape(v, {2, 4, 4});
        auto p = bl::permute(cube, {2, 0, 1}); // [4, 2, 4]
        bl::store(permuted + offs, bl::reshape(p, {32}));
      });
  return k;
}

template <typename T> class ShapeOpsTyped : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, bl::half, int32_t, int8_t>;
TYPED_TEST_SUITE(ShapeOpsTyped, ElementTypes);

TYPED_TEST(ShapeOpsTyped, ReshapeTransAndPermuteKeepRowMajorOrder) {
  using T = TypeParam;
  for (int n : {1, 13, 32}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    auto x = random_elements<T>(n);
    auto transposed = poison<T>(32), permuted = poison<T>(32);
    reshape_permute<T>()[{1}](x, transposed, permuted, n);
    std::vector<T> padded = x;
    padded.resize(32, from_int<T>(0));
    std::vector<T> want_t(32), want_p(32);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 8; ++j)
        want_t[j * 4 + i] = padded[i * 8 + j];
    // p[c][a][b] = cube[a][b][c] over cube dims [2, 4, 4].
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 4; ++b)
        for (int c = 0; c < 4; ++c)
          want_p[c * 8 + a * 4 + b] = padded[a * 16 + b * 4 + c];
    EXPECT_TRUE(same_bits(transposed, want_t));
    EXPECT_TRUE(same_bits(permuted, want_p));
  }
}

// ------------------------------------------------------- matrix trans
// out (n x m) = x (m x n) transposed, tile by tile; the mask is transposed
// with the data.
template <typename T> auto &transpose() {
  static auto k =
      bl::kernel("transpose", [](bl::Ptr<T> x, bl::Ptr<T> out, bl::i32 m,
                                 bl::i32 n, bl::Const<int> B) {
        auto r = bl::expand_dims(bl::program_id(0) * B + bl::arange(0, B), 1);
        auto c = bl::expand_dims(bl::program_id(1) * B + bl::arange(0, B), 0);
        auto mask = (r < m) & (c < n);
        auto tile = bl::load(x + r * n + c, mask);
        bl::store(out + bl::trans(c * m + r), bl::trans(tile), bl::trans(mask));
      });
  return k;
}

TYPED_TEST(ShapeOpsTyped, TransposeOfOddSizedMatrices) {
  using T = TypeParam;
  for (auto [m, n] : {std::pair{1, 1}, {5, 7}, {8, 3}, {13, 17}}) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    auto x = random_elements<T>(size_t(m) * n);
    auto out = poison<T>(size_t(m) * n);
    transpose<T>()[{bl::cdiv(m, 8), bl::cdiv(n, 8)}](x, out, m, n, 8);
    std::vector<T> want(size_t(m) * n);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        want[j * m + i] = x[i * n + j];
    EXPECT_TRUE(same_bits(out, want));
  }
}

// A 3-D block permuted with trans(x, order), the spelled-out permute.
auto permute_3d =
    bl::kernel("permute_3d", [](bl::Ptr<float> x, bl::Ptr<float> out) {
      auto i = bl::reshape(bl::arange(0, 2), {2, 1, 1});
      auto j = bl::reshape(bl::arange(0, 4), {1, 4, 1});
      auto k = bl::reshape(bl::arange(0, 8), {1, 1, 8});
      auto cube = bl::load(x + i * 32 + j * 8 + k); // [2, 4, 8]
      auto p = bl::trans(cube, {1, 2, 0});          // [4, 8, 2]
      auto pi = bl::trans(i, {1, 2, 0}), pj = bl::trans(j, {1, 2, 0}),
           pk = bl::trans(k, {1, 2, 0});
      bl::store(out + pj * 16 + pk * 2 + pi, p);
    });

TEST(Permute, ThreeDimensionalOrder) {
  auto x = random_floats(64);
  auto out = poisoned(64);
  permute_3d[{1}](x, out);
  std::vector<float> want(64);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 8; ++k)
        want[j * 16 + k * 2 + i] = x[i * 32 + j * 8 + k];
  EXPECT_TRUE(same_bits(out, want));
}

// ----------------------------------------------------------- join/split
// interleave: out[2i] = a[i], out[2i + 1] = b[i]; deinterleave undoes it.
template <typename T> auto &interleave() {
  static auto k = bl::kernel("interleave", [](bl::Ptr<T> a, bl::Ptr<T> b,
                                              bl::Ptr<T> out, bl::i32 n,
                                              bl::Const<int> B) {
    auto offs = bl::program_id(0) * B + bl::arange(0, B);
    auto mask = offs < n;
    auto pairs =
        bl::join(bl::load(a + offs, mask), bl::load(b + offs, mask)); // [B, 2]
    auto where = bl::join(offs * 2, offs * 2 + 1);
    bl::store(out + bl::reshape(where, {2 * B}), bl::reshape(pairs, {2 * B}),
              bl::reshape(bl::join(mask, mask), {2 * B}));
  });
  return k;
}

template <typename T> auto &deinterleave() {
  static auto k =
      bl::kernel("deinterleave", [](bl::Ptr<T> in, bl::Ptr<T> a, bl::Ptr<T> b,
                                    bl::i32 n, bl::Const<int> B) {
        auto flat = bl::program_id(0) * 2 * B + bl::arange(0, 2 * B);
        auto v = bl::load(in + flat, flat < 2 * n);
        auto [even, odd] = bl::split(bl::reshape(v, {B, 2}));
        auto offs = bl::program_id(0) * B + bl::arange(0, B);
        bl::store(a + offs, even, offs < n);
        bl::store(b + offs, odd, offs < n);
      });
  return k;
}

TYPED_TEST(ShapeOpsTyped, JoinInterleavesAndSplitUndoesIt) {
  using T = TypeParam;
  for (int n : {1, 2, 7, 16, 37}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    auto a = random_elements<T>(n), b = random_elements<T>(n);
    auto out = poison<T>(2 * size_t(n));
    interleave<T>()[{bl::cdiv(n, 16)}](a, b, out, n, 16);
    std::vector<T> want;
    for (int i = 0; i < n; ++i) {
      want.push_back(a[i]);
      want.push_back(b[i]);
    }
    EXPECT_TRUE(same_bits(out, want));

    auto back_a = poison<T>(n), back_b = poison<T>(n);
    deinterleave<T>()[{bl::cdiv(n, 16)}](want, back_a, back_b, n, 16);
    EXPECT_TRUE(same_bits(back_a, a));
    EXPECT_TRUE(same_bits(back_b, b));
  }
}

// join broadcasts: a column [B, 1] with a row [1, 4], and a block with a
// C++ number, which takes the block's type.
auto join_broadcast =
    bl::kernel("join_broadcast", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out,
                                    bl::Ptr<int32_t> out2) {
      auto col = bl::expand_dims(bl::load(x + bl::arange(0, 8)), 1); // [8, 1]
      auto row = bl::expand_dims(bl::arange(0, 4), 0) * 1000;        // [1, 4]
      auto pairs = bl::join(col, row); // [8, 4, 2]
      bl::store(out + bl::arange(0, 64), bl::reshape(pairs, {64}));
      auto with_seven = bl::join(bl::load(x + bl::arange(0, 8)), 7); // [8, 2]
      bl::store(out2 + bl::arange(0, 16), bl::reshape(with_seven, {16}));
    });

TEST(Join, BroadcastsOperandsToOneShape) {
  auto x = random_ints<int32_t>(8, -100, 100);
  auto out = poison<int32_t>(64), out2 = poison<int32_t>(16);
  join_broadcast[{1}](x, out, out2);
  std::vector<int32_t> want, want2;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) {
      want.push_back(x[i]);
      want.push_back(j * 1000);
    }
    want2.push_back(x[i]);
    want2.push_back(7);
  }
  EXPECT_EQ(out, want);
  EXPECT_EQ(out2, want2);
}

// ------------------------------------------------------------------ cat
// 1-D: a's elements, then b's; 2-D: a's rows, then b's rows.
template <typename T> auto &concatenate() {
  static auto k =
      bl::kernel("concatenate", [](bl::Ptr<T> a, bl::Ptr<T> b, bl::Ptr<T> out,
                                   bl::Ptr<T> out2d, bl::i32 n) {
        auto offs = bl::arange(0, 16);
        auto both = bl::cat(bl::load(a + offs, offs < n),
                            bl::load(b + offs, offs < n)); // [32]
        auto idx = bl::arange(0, 32);
        bl::store(out + idx, both, (idx % 16) < n);
        auto r = bl::expand_dims(bl::arange(0, 4), 1);
        auto c = bl::expand_dims(bl::arange(0, 4), 0);
        auto rows = bl::cat(bl::load(a + r * 4 + c),
                            bl::load(b + r * 4 + c)); // [8, 4]
        auto r8 = bl::expand_dims(bl::arange(0, 8), 1);
        bl::store(out2d + r8 * 4 + c, rows);
      });
  return k;
}

TYPED_TEST(ShapeOpsTyped, CatKeepsOperandOrder) {
  using T = TypeParam;
  for (int n : {1, 11, 16}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    // 16 elements for the 2-D part; only the first n are read by the 1-D.
    auto a = random_elements<T>(16), b = random_elements<T>(16);
    auto out = poison<T>(32), out2d = poison<T>(32);
    concatenate<T>()[{1}](a, b, out, out2d, n);
    std::vector<T> want = poison<T>(32), want2d;
    for (int i = 0; i < n; ++i) {
      want[i] = a[i];
      want[16 + i] = b[i];
    }
    want2d = a;
    want2d.insert(want2d.end(), b.begin(), b.end());
    EXPECT_TRUE(same_bits(out, want));
    EXPECT_TRUE(same_bits(out2d, want2d));
  }
}

// --------------------------------------------------------------- scalars
// join of two scalars is a block of two; split of it gives scalars back;
// expand_dims, reshape and broadcast_to turn a scalar into blocks.
auto scalar_shapes =
    bl::kernel("scalar_shapes", [](bl::Ptr<float> x, bl::Ptr<float> out) {
      auto s0 = bl::load(x), s1 = bl::load(x + 1);
      auto pair = bl::join(s1, s0); // [2]: x1, x0
      bl::store(out + bl::arange(0, 2), pair);
      auto [first, second] = bl::split(pair);
      bl::store(out + 2, first - second);
      bl::store(out + 3 + bl::arange(0, 1), bl::expand_dims(s0, 0));
      auto square = bl::reshape(s1, {1, 1});
      bl::store(out + 4 + bl::expand_dims(bl::arange(0, 1), 0), square);
      bl::store(out + 5 + bl::arange(0, 4), bl::broadcast_to(s0, {4}));
      bl::store(out + 9, bl::broadcast_to(s1, {}));
    });

TEST(ScalarShapes, JoinSplitExpandReshapeBroadcast) {
  auto x = random_floats(2);
  auto out = poisoned(10);
  scalar_shapes[{1}](x, out);
  std::vector<float> want{x[1], x[0], x[1] - x[0], x[0], x[1],
                          x[0], x[0], x[0],        x[0], x[1]};
  EXPECT_TRUE(same_bits(out, want));
}

} // namespace
