// Reductions and scans end to end: sum/max/min/prod/xor_sum along axis 0,
// 1, -1 and over the whole block, argmax/argmin with ties and NaN, reduce
// with user combine functions (one operand, and a value/index pair), and
// cumsum/cumprod/associative_scan forward and reversed. Inputs are fresh
// random values on tiles whose logical size is odd (masked loads give the
// reduction's neutral element); outputs are poisoned first. Integer results
// and sums of exactly representable floats are checked exactly, the rest
// against float64 with the rounding they accumulate.
#include "e2e/support.h"
#include "ir/parser.h"
#include "ir/printer.h"

#include <cstring>
#include <functional>

namespace bl = blocc;
using namespace blocc::testing;

namespace {

constexpr int kTile = 16; // every kernel here reads one 16 x 16 tile

// ------------------------------------------------------------ helpers
template <typename T> std::vector<T> poison(size_t n) {
  std::vector<T> v(n);
  std::memset(static_cast<void *>(v.data()), 0x5a, n * sizeof(T));
  return v;
}

/// An element of T from a small integer: floats hold k / 8 (f16 k / 4),
/// so that sums of a tile stay exactly representable.
template <typename T> T from_int(int64_t v) {
  if constexpr (std::is_same_v<T, bl::half>)
    return bl::half(static_cast<float>(v) / 4);
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v) / 8;
  else
    return static_cast<T>(v);
}

template <typename T> double as_double(T v) {
  if constexpr (std::is_same_v<T, bl::half>)
    return static_cast<float>(v);
  else
    return static_cast<double>(v);
}

template <typename T>
std::vector<T> random_elements(size_t n, int64_t lo, int64_t hi) {
  std::vector<T> v;
  for (int64_t x : random_ints<int64_t>(n, lo, hi))
    v.push_back(from_int<T>(x));
  return v;
}

/// Exact comparison of a result with float64 reference values.
template <typename T>
::testing::AssertionResult equal(const std::vector<T> &got,
                                 const std::vector<double> &want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << "size " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    double g = as_double(got[i]);
    if (!(g == want[i] || (std::isnan(g) && std::isnan(want[i]))))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << g << ", want " << want[i];
  }
  return ::testing::AssertionSuccess();
}

/// A row-major m x n matrix of doubles and its reductions.
struct Matrix {
  int m, n;
  std::vector<double> v;
  template <typename T>
  Matrix(int m_, int n_, const std::vector<T> &x) : m(m_), n(n_) {
    for (const T &e : x)
      v.push_back(as_double(e));
  }
  double at(int i, int j) const { return v[size_t(i) * n + j]; }

  template <typename F> std::vector<double> rows(double init, F f) const {
    std::vector<double> out(m, init);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        out[i] = f(out[i], at(i, j));
    return out;
  }
  template <typename F> std::vector<double> cols(double init, F f) const {
    std::vector<double> out(n, init);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        out[j] = f(out[j], at(i, j));
    return out;
  }
  template <typename F> double all(double init, F f) const {
    for (double e : v)
      init = f(init, e);
    return init;
  }
};

const std::pair<int, int> kShapes[] = {{1, 1},  {1, 16},  {5, 7},
                                       {16, 1}, {13, 11}, {16, 16}};

/// The 16 x 16 tile of a row-major m x n matrix that every kernel here
/// reads: its row and column indices, mask and element offsets, and the
/// lanes of a 1-D result.
struct Tile {
  bl::Tensor rows, cols, mask, offsets, lanes;
};

Tile tile_of(const bl::Tensor &m, const bl::Tensor &n) {
  Tile t;
  t.rows = bl::expand_dims(bl::arange(0, kTile), 1);
  t.cols = bl::expand_dims(bl::arange(0, kTile), 0);
  t.mask = (t.rows < m) & (t.cols < n);
  t.offsets = t.rows * n + t.cols;
  t.lanes = bl::arange(0, kTile);
  return t;
}

/// Values masked-off lanes read so that they win no max (min).
template <typename T> auto lowest() {
  if constexpr (std::is_integral_v<T>)
    return int64_t{std::numeric_limits<T>::min()};
  else
    return -INFINITY;
}
template <typename T> auto highest() {
  if constexpr (std::is_integral_v<T>)
    return int64_t{std::numeric_limits<T>::max()};
  else
    return INFINITY;
}

// ------------------------------------------------------------------ sum
template <typename T> struct SumOf { using type = T; };
template <> struct SumOf<int8_t> { using type = int32_t; };
template <> struct SumOf<int16_t> { using type = int32_t; };
template <> struct SumOf<uint8_t> { using type = uint32_t; };

/// Inputs of sums: full-range 8-bit values (16 of them overflow 8 bits,
/// not 32); f16 values small enough that a whole tile's sum, in quarters,
/// stays below 2^11 and so exact.
template <typename T> std::pair<int64_t, int64_t> sum_range() {
  if constexpr (std::is_same_v<T, uint8_t>)
    return {0, 255};
  else if constexpr (sizeof(T) == 1)
    return {-128, 127};
  else if constexpr (std::is_same_v<T, bl::half>)
    return {-8, 8};
  else
    return {-40, 40};
}

template <typename T> auto &sums() {
  using Acc = typename SumOf<T>::type;
  static auto k = bl::kernel(
      "sums", [](bl::Ptr<T> x, bl::Ptr<Acc> rows, bl::Ptr<Acc> rows_neg,
                 bl::Ptr<Acc> cols, bl::Ptr<Acc> all, bl::i32 m, bl::i32 n) {
        auto t = tile_of(m, n);
        auto tile = bl::load(x + t.offsets, t.mask);
        auto row_sums = bl::sum(tile, 1);
        // Triton's rule: integers narrower than 32 bits sum in 32 bits.
        bl::static_assert_(row_sums.dtype() == bl::dtype_of<Acc>(),
                           "sum accumulates in the expected type");
        bl::store(rows + t.lanes, row_sums, t.lanes < m);
        bl::store(rows_neg + t.lanes, bl::sum(tile, -1), t.lanes < m);
        bl::store(cols + t.lanes, bl::sum(tile, 0), t.lanes < n);
        bl::store(all, bl::sum(tile));
      });
  return k;
}

template <typename T> class SumTyped : public ::testing::Test {};
using SumTypes =
    ::testing::Types<float, bl::half, int32_t, int16_t, int8_t, uint8_t>;
TYPED_TEST_SUITE(SumTyped, SumTypes);

TYPED_TEST(SumTyped, AlongEachAxisAndWhole) {
  using T = TypeParam;
  using Acc = typename SumOf<T>::type;
  auto [lo, hi] = sum_range<T>();
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    auto x = random_elements<T>(size_t(m) * n, lo, hi);
    auto rows = poison<Acc>(m), rows_neg = poison<Acc>(m),
         cols = poison<Acc>(n), all = poison<Acc>(1);
    sums<T>()[{1}](x, rows, rows_neg, cols, all, m, n);
    Matrix ref(m, n, x);
    auto add = [](double a, double b) { return a + b; };
    EXPECT_TRUE(equal(rows, ref.rows(0, add)));
    EXPECT_TRUE(equal(rows_neg, ref.rows(0, add)));
    EXPECT_TRUE(equal(cols, ref.cols(0, add)));
    EXPECT_TRUE(equal(all, {ref.all(0, add)}));
  }
}

// bool sums count, in int32.
auto count_positive = bl::kernel(
    "count_positive", [](bl::Ptr<float> x, bl::Ptr<int32_t> rows,
                         bl::Ptr<int32_t> all, bl::i32 m, bl::i32 n) {
      auto t = tile_of(m, n);
      auto positive =
          bl::load(x + t.offsets, t.mask) > 0.f; // masked lanes read 0
      auto counts = bl::sum(positive, 1);
      bl::static_assert_(counts.dtype() == bl::int32, "bools count in int32");
      bl::store(rows + t.lanes, counts, t.lanes < m);
      bl::store(all, bl::sum(positive));
    });

TEST(Sum, OfBooleansCounts) {
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    auto x = random_floats(size_t(m) * n);
    auto rows = poison<int32_t>(m), all = poison<int32_t>(1);
    count_positive[{1}](x, rows, all, m, n);
    Matrix ref(m, n, x);
    auto count = [](double a, double b) { return a + (b > 0); };
    EXPECT_TRUE(equal(rows, ref.rows(0, count)));
    EXPECT_TRUE(equal(all, {ref.all(0, count)}));
  }
}

// Partial sums of a long vector, one per program, of random f32.
auto partial_sums =
    bl::kernel("partial_sums", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                  bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      bl::store(out + bl::program_id(0), bl::sum(bl::load(x + offs, offs < n)));
    });

TEST(Sum, PartialSumsOfRandomFloats) {
  for (int n : {1, 2, 127, 128, 129, 1031}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    auto x = random_floats(n);
    int programs = bl::cdiv(n, 128);
    auto out = poisoned(programs);
    partial_sums[{programs}](x, out, n, 128);
    std::vector<double> want(programs, 0);
    double magnitude = 0;
    for (int i = 0; i < n; ++i) {
      want[i / 128] += x[i];
      magnitude = std::max(magnitude, std::abs(double(x[i])));
    }
    // At most 127 f32 roundings of partial sums below 128 |x|max.
    EXPECT_TRUE(all_close(out, want, 0, 128 * 128 * magnitude * 0x1p-24));
  }
}

// ------------------------------------------------------------ max / min
template <typename T> auto &extrema() {
  static auto k =
      bl::kernel("extrema", [](bl::Ptr<T> x, bl::Ptr<T> max_rows,
                               bl::Ptr<T> max_cols, bl::Ptr<T> max_all,
                               bl::Ptr<T> min_rows, bl::Ptr<T> min_cols,
                               bl::Ptr<T> min_all, bl::i32 m, bl::i32 n) {
        auto t = tile_of(m, n);
        // Masked lanes read a value that can win nothing.
        auto for_max = bl::load(x + t.offsets, t.mask, lowest<T>());
        auto for_min = bl::load(x + t.offsets, t.mask, highest<T>());
        bl::store(max_rows + t.lanes, bl::max(for_max, 1), t.lanes < m);
        bl::store(max_cols + t.lanes, bl::max(for_max, 0), t.lanes < n);
        bl::store(max_all, bl::max(for_max));
        bl::store(min_rows + t.lanes, bl::min(for_min, -1), t.lanes < m);
        bl::store(min_cols + t.lanes, bl::min(for_min, -2), t.lanes < n);
        bl::store(min_all, bl::min(for_min, std::nullopt));
      });
  return k;
}

template <typename T> class ReduceTyped : public ::testing::Test {};
using ReduceTypes = ::testing::Types<float, bl::half, int32_t, int8_t>;
TYPED_TEST_SUITE(ReduceTyped, ReduceTypes);

TYPED_TEST(ReduceTyped, MaxAndMinAlongEachAxisAndWhole) {
  using T = TypeParam;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    auto x = random_elements<T>(size_t(m) * n, -100, 100);
    auto max_rows = poison<T>(m), max_cols = poison<T>(n),
         max_all = poison<T>(1), min_rows = poison<T>(m),
         min_cols = poison<T>(n), min_all = poison<T>(1);
    extrema<T>()[{1}](x, max_rows, max_cols, max_all, min_rows, min_cols,
                      min_all, m, n);
    Matrix ref(m, n, x);
    auto max = [](double a, double b) { return std::max(a, b); };
    auto min = [](double a, double b) { return std::min(a, b); };
    EXPECT_TRUE(equal(max_rows, ref.rows(-INFINITY, max)));
    EXPECT_TRUE(equal(max_cols, ref.cols(-INFINITY, max)));
    EXPECT_TRUE(equal(max_all, {ref.all(-INFINITY, max)}));
    EXPECT_TRUE(equal(min_rows, ref.rows(INFINITY, min)));
    EXPECT_TRUE(equal(min_cols, ref.cols(INFINITY, min)));
    EXPECT_TRUE(equal(min_all, {ref.all(INFINITY, min)}));
  }
}

// ------------------------------------------------------ prod / xor_sum
auto products =
    bl::kernel("products", [](bl::Ptr<float> x, bl::Ptr<int32_t> ix,
                              bl::Ptr<float> rows, bl::Ptr<int32_t> icols,
                              bl::Ptr<int32_t> iall, bl::i32 m, bl::i32 n) {
      auto t = tile_of(m, n);
      auto floats = bl::load(x + t.offsets, t.mask, 1.f);
      bl::store(rows + t.lanes, bl::prod(floats, 1), t.lanes < m);
      auto ints = bl::load(ix + t.offsets, t.mask, 1);
      bl::store(icols + t.lanes, bl::prod(ints, 0), t.lanes < n);
      bl::store(iall, bl::prod(ints));
    });

TEST(Prod, FloatsAndIntegers) {
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    auto x = random_floats(size_t(m) * n, 0.5f, 1.5f);
    // Nonzero factors with |product| <= 3^16 along a column: fits int32.
    auto ix = random_ints<int32_t>(size_t(m) * n, -3, 3);
    for (int32_t &v : ix)
      v = v == 0 ? 2 : v;
    auto rows = poisoned(m);
    auto icols = poison<int32_t>(n), iall = poison<int32_t>(1);
    products[{1}](x, ix, rows, icols, iall, m, n);
    auto mul = [](double a, double b) { return a * b; };
    // 15 f32 roundings of a product.
    EXPECT_TRUE(all_close(rows, Matrix(m, n, x).rows(1, mul), 16 * 0x1p-24));
    EXPECT_TRUE(equal(icols, Matrix(m, n, ix).cols(1, mul)));
    // The whole tile's product overflows: int32 wraps around.
    uint32_t want = 1;
    for (int32_t v : ix)
      want *= static_cast<uint32_t>(v);
    EXPECT_EQ(iall[0], static_cast<int32_t>(want));
  }
}

template <typename T> auto &xor_sums() {
  static auto k =
      bl::kernel("xor_sums", [](bl::Ptr<T> x, bl::Ptr<T> rows, bl::Ptr<T> cols,
                                bl::Ptr<T> all, bl::i32 m, bl::i32 n) {
        auto t = tile_of(m, n);
        auto tile = bl::load(x + t.offsets, t.mask);
        bl::store(rows + t.lanes, bl::xor_sum(tile, 1), t.lanes < m);
        bl::store(cols + t.lanes, bl::xor_sum(tile, 0), t.lanes < n);
        bl::store(all, bl::xor_sum(tile));
      });
  return k;
}

template <typename T> void check_xor_sums(int64_t lo, int64_t hi) {
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    auto x = random_ints<T>(size_t(m) * n, lo, hi);
    auto rows = poison<T>(m), cols = poison<T>(n), all = poison<T>(1);
    xor_sums<T>()[{1}](x, rows, cols, all, m, n);
    std::vector<T> want_rows(m, 0), want_cols(n, 0);
    T want_all = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        T v = x[size_t(i) * n + j];
        want_rows[i] ^= v;
        want_cols[j] ^= v;
        want_all ^= v;
      }
    EXPECT_EQ(rows, want_rows);
    EXPECT_EQ(cols, want_cols);
    EXPECT_EQ(all[0], want_all);
  }
}

TEST(XorSum, Int32AndUint8) {
  check_xor_sums<int32_t>(INT32_MIN, INT32_MAX);
  check_xor_sums<uint8_t>(0, 255);
}

// ------------------------------------------------------- argmax / argmin
template <typename T> auto &arg_extrema() {
  static auto k = bl::kernel(
      "arg_extrema",
      [](bl::Ptr<T> x, bl::Ptr<int32_t> argmax_rows,
         bl::Ptr<int32_t> argmax_cols, bl::Ptr<int32_t> argmin_rows,
         bl::Ptr<int32_t> argmin_cols, bl::i32 m, bl::i32 n) {
        auto t = tile_of(m, n);
        // Masked lanes read a value that loses (or ties at a larger index).
        auto for_max = bl::load(x + t.offsets, t.mask, lowest<T>());
        auto for_min = bl::load(x + t.offsets, t.mask, highest<T>());
        auto rows_max = bl::argmax(for_max, 1);
        bl::static_assert_(rows_max.dtype() == bl::int32, "int32 indices");
        bl::store(argmax_rows + t.lanes, rows_max, t.lanes < m);
        bl::store(argmax_cols + t.lanes, bl::argmax(for_max, 0), t.lanes < n);
        bl::store(argmin_rows + t.lanes, bl::argmin(for_min, -1), t.lanes < m);
        bl::store(argmin_cols + t.lanes, bl::argmin(for_min, -2), t.lanes < n);
      });
  return k;
}

/// The first index of the best element of each line (rows when by_row).
template <typename Better>
std::vector<int32_t> first_best(const Matrix &x, bool by_row, Better better) {
  int lines = by_row ? x.m : x.n, length = by_row ? x.n : x.m;
  std::vector<int32_t> out;
  for (int l = 0; l < lines; ++l) {
    int best = 0;
    for (int k = 1; k < length; ++k) {
      double v = by_row ? x.at(l, k) : x.at(k, l);
      double b = by_row ? x.at(l, best) : x.at(best, l);
      if (better(v, b))
        best = k;
    }
    out.push_back(best);
  }
  return out;
}

TYPED_TEST(ReduceTyped, ArgmaxAndArgminPickTheFirstOfTies) {
  using T = TypeParam;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    // Four values only: most lines hold ties.
    auto x = random_elements<T>(size_t(m) * n, -2, 1);
    auto amax_r = poison<int32_t>(m), amax_c = poison<int32_t>(n),
         amin_r = poison<int32_t>(m), amin_c = poison<int32_t>(n);
    arg_extrema<T>()[{1}](x, amax_r, amax_c, amin_r, amin_c, m, n);
    Matrix ref(m, n, x);
    auto greater = [](double a, double b) { return a > b; };
    auto less = [](double a, double b) { return a < b; };
    EXPECT_EQ(amax_r, first_best(ref, true, greater));
    EXPECT_EQ(amax_c, first_best(ref, false, greater));
    EXPECT_EQ(amin_r, first_best(ref, true, less));
    EXPECT_EQ(amin_c, first_best(ref, false, less));
  }
}

// NaN loses to every number (as in bl::max, which ignores NaN), so that
// x[argmax(x)] == max(x); a line of NaN only gives index 0.
auto nan_lines = bl::kernel(
    "nan_lines", [](bl::Ptr<float> x, bl::Ptr<int32_t> argmax_rows,
                    bl::Ptr<int32_t> argmin_cols, bl::Ptr<float> max_rows) {
      auto r = bl::expand_dims(bl::arange(0, 8), 1);
      auto c = bl::expand_dims(bl::arange(0, 8), 0);
      auto tile = bl::load(x + r * 8 + c);
      bl::store(argmax_rows + bl::arange(0, 8), bl::argmax(tile, 1));
      bl::store(argmin_cols + bl::arange(0, 8), bl::argmin(tile, 0));
      bl::store(max_rows + bl::arange(0, 8), bl::max(tile, 1));
    });

TEST(Argmax, NaNLosesToEveryNumber) {
  auto x = random_floats(64);
  for (int k = 0; k < 64; k += 5)
    x[k] = NAN;
  for (int j = 0; j < 8; ++j)
    x[3 * 8 + j] = NAN; // row 3: all NaN
  for (int i = 0; i < 8; ++i)
    x[i * 8 + 6] = NAN; // column 6: all NaN
  x[5 * 8 + 2] = -INFINITY;
  auto argmax_rows = poison<int32_t>(8), argmin_cols = poison<int32_t>(8);
  auto max_rows = poisoned(8);
  nan_lines[{1}](x, argmax_rows, argmin_cols, max_rows);
  Matrix ref(8, 8, x);
  // `better` with NaN never better, and nothing better than a NaN.
  auto greater = [](double a, double b) {
    return !std::isnan(a) && (std::isnan(b) || a > b);
  };
  auto less = [](double a, double b) {
    return !std::isnan(a) && (std::isnan(b) || a < b);
  };
  EXPECT_EQ(argmax_rows, first_best(ref, true, greater));
  EXPECT_EQ(argmin_cols, first_best(ref, false, less));
  EXPECT_EQ(argmax_rows[3], 0);
  EXPECT_EQ(argmin_cols[6], 0);
  for (int i = 0; i < 8; ++i) {
    float at = x[i * 8 + argmax_rows[i]];
    EXPECT_TRUE(at == max_rows[i] ||
                (std::isnan(at) && std::isnan(max_rows[i])))
        << "row " << i;
  }
}

// ------------------------------------------------------ custom combines
// (a + 1)(b + 1) - 1 is associative: the reduction is prod(x + 1) - 1.
// The pair reduction is a hand-written argmax (value, index) with ties to
// the smaller index.
auto custom_reduce = bl::kernel(
    "custom_reduce", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> shifted_rows,
                        bl::Ptr<int32_t> shifted_all, bl::Ptr<int32_t> best,
                        bl::Ptr<int32_t> best_index, bl::i32 m, bl::i32 n) {
      auto t = tile_of(m, n);
      auto tile = bl::load(x + t.offsets, t.mask); // 0 is the neutral element
      auto shifted = [](bl::Tensor a, bl::Tensor b) { return a * b + a + b; };
      bl::store(shifted_rows + t.lanes, bl::reduce(tile, 1, shifted),
                t.lanes < m);
      bl::store(shifted_all, bl::reduce(tile, std::nullopt, shifted));

      auto values = bl::load(x + t.offsets, t.mask, INT32_MIN);
      auto index = bl::broadcast_to(t.cols, {kTile, kTile});
      auto pair = bl::reduce(
          {values, index}, 1,
          [](const std::vector<bl::Tensor> &l,
             const std::vector<bl::Tensor> &r) {
            auto left = (l[0] > r[0]) | ((l[0] == r[0]) & (l[1] < r[1]));
            return std::vector<bl::Tensor>{bl::where(left, l[0], r[0]),
                                           bl::where(left, l[1], r[1])};
          });
      bl::store(best + t.lanes, pair[0], t.lanes < m);
      bl::store(best_index + t.lanes, pair[1], t.lanes < m);
    });

TEST(Reduce, CustomCombineFunctions) {
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    // Factors x + 1 in 0..3: 3^16 fits int32.
    auto x = random_ints<int32_t>(size_t(m) * n, -1, 2);
    auto shifted_rows = poison<int32_t>(m), shifted_all = poison<int32_t>(1),
         best = poison<int32_t>(m), best_index = poison<int32_t>(m);
    custom_reduce[{1}](x, shifted_rows, shifted_all, best, best_index, m, n);
    Matrix ref(m, n, x);
    auto times_shifted = [](double a, double b) { return a * (b + 1); };
    auto rows = ref.rows(1, times_shifted);
    for (double &v : rows)
      v -= 1;
    EXPECT_TRUE(equal(shifted_rows, rows));
    EXPECT_TRUE(equal(shifted_all, {ref.all(1, times_shifted) - 1}));
    EXPECT_TRUE(equal(best, ref.rows(-INFINITY, [](double a, double b) {
      return std::max(a, b);
    })));
    EXPECT_EQ(best_index, first_best(ref, true, std::greater<double>()));
  }
}

// ------------------------------------------------- inside a bl::range loop
// Row statistics of an m x n matrix in column chunks, as softmax computes
// them: a running max and sum, and a max or min (by the sign of a runtime
// parameter the combine function captures) through a custom combine.
auto chunked_rows = bl::kernel(
    "chunked_rows",
    [](bl::Ptr<float> x, bl::Ptr<float> row_max, bl::Ptr<float> row_sum,
       bl::Ptr<float> row_extreme, bl::i32 m, bl::i32 n, bl::f32 sign) {
      auto r = bl::expand_dims(bl::arange(0, 8), 1);
      auto max = bl::full({8}, -INFINITY, bl::float32);
      auto sum = bl::zeros({8}, bl::float32);
      auto extreme = bl::full({8}, -INFINITY * sign, bl::float32);
      for (auto start : bl::range(0, n, 16)) {
        auto c = start + bl::expand_dims(bl::arange(0, 16), 0);
        auto mask = (r < m) & (c < n);
        auto tile = bl::load(x + r * n + c, mask, -INFINITY * sign);
        max = bl::maximum(max, bl::max(bl::where(mask, tile, -INFINITY), 1));
        sum += bl::sum(bl::where(mask, tile, 0.f), 1);
        auto by_sign = [&](bl::Tensor a, bl::Tensor b) {
          return bl::where(a * sign > b * sign, a, b);
        };
        auto chunk = bl::reduce(tile, 1, by_sign);
        extreme = bl::where(extreme * sign > chunk * sign, extreme, chunk);
      }
      auto rows = bl::arange(0, 8);
      bl::store(row_max + rows, max, rows < m);
      bl::store(row_sum + rows, sum, rows < m);
      bl::store(row_extreme + rows, extreme, rows < m);
    });

TEST(Reduce, InsideALoopOverColumnChunks) {
  for (auto [m, n] : {std::pair{1, 1}, {3, 16}, {8, 37}, {5, 100}}) {
    for (float sign : {1.f, -1.f}) {
      SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n) + ", sign " +
                   std::to_string(sign));
      auto x = random_floats(size_t(m) * n);
      auto row_max = poisoned(m), row_sum = poisoned(m),
           row_extreme = poisoned(m);
      chunked_rows[{1}](x, row_max, row_sum, row_extreme, m, n, sign);
      Matrix ref(m, n, x);
      auto max = [](double a, double b) { return std::max(a, b); };
      auto min = [](double a, double b) { return std::min(a, b); };
      EXPECT_TRUE(equal(row_max, ref.rows(-INFINITY, max)));
      EXPECT_TRUE(equal(row_extreme, sign > 0 ? ref.rows(-INFINITY, max)
                                              : ref.rows(INFINITY, min)));
      // One f32 rounding per element added.
      EXPECT_TRUE(all_close(row_sum, ref.rows(0, std::plus<double>()), 0,
                            n * 0x1p-24 * n));
    }
  }
}

// ---------------------------------------------------------------- scans
template <typename T> auto &cumulative_sums() {
  using Acc = typename SumOf<T>::type;
  static auto k = bl::kernel(
      "cumulative_sums",
      [](bl::Ptr<T> x, bl::Ptr<Acc> along_rows, bl::Ptr<Acc> down_reversed,
         bl::Ptr<Acc> along_rows_reversed, bl::i32 m, bl::i32 n) {
        auto t = tile_of(m, n);
        auto tile = bl::load(x + t.offsets, t.mask);
        auto out = t.offsets;
        auto forward = bl::cumsum(tile, 1);
        bl::static_assert_(forward.dtype() == bl::dtype_of<Acc>(),
                           "cumsum accumulates like sum");
        bl::store(along_rows + out, forward, t.mask);
        bl::store(down_reversed + out, bl::cumsum(tile, 0, true), t.mask);
        bl::store(along_rows_reversed + out,
                  bl::cumsum(tile, -1, /*reverse=*/true), t.mask);
      });
  return k;
}

template <typename T> class ScanTyped : public ::testing::Test {};
using ScanTypes = ::testing::Types<float, bl::half, int32_t, int8_t>;
TYPED_TEST_SUITE(ScanTyped, ScanTypes);

TYPED_TEST(ScanTyped, CumsumForwardAndReversed) {
  using T = TypeParam;
  using Acc = typename SumOf<T>::type;
  auto [lo, hi] = sum_range<T>();
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    auto x = random_elements<T>(size_t(m) * n, lo, hi);
    size_t size = size_t(m) * n;
    auto along = poison<Acc>(size), down = poison<Acc>(size),
         along_rev = poison<Acc>(size);
    cumulative_sums<T>()[{1}](x, along, down, along_rev, m, n);
    Matrix ref(m, n, x);
    std::vector<double> want_along(size), want_down(size), want_rev(size);
    for (int i = 0; i < m; ++i) {
      double acc = 0;
      for (int j = 0; j < n; ++j)
        want_along[i * n + j] = acc += ref.at(i, j);
      acc = 0;
      for (int j = n - 1; j >= 0; --j)
        want_rev[i * n + j] = acc += ref.at(i, j);
    }
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int i = m - 1; i >= 0; --i)
        want_down[i * n + j] = acc += ref.at(i, j);
    }
    EXPECT_TRUE(equal(along, want_along));
    EXPECT_TRUE(equal(down, want_down));
    EXPECT_TRUE(equal(along_rev, want_rev));
  }
}

// cumprod of floats near 1 and a running maximum through associative_scan,
// forward and reversed, on a 1-D block of odd logical length.
auto scans_1d = bl::kernel("scans_1d", [](bl::Ptr<float> x, bl::Ptr<int32_t> ix,
                                          bl::Ptr<float> prod_fwd,
                                          bl::Ptr<float> prod_rev,
                                          bl::Ptr<int32_t> max_fwd,
                                          bl::Ptr<int32_t> max_rev, bl::i32 n) {
  auto offs = bl::arange(0, 64);
  auto mask = offs < n;
  auto v = bl::load(x + offs, mask, 1.f);
  bl::store(prod_fwd + offs, bl::cumprod(v), mask);
  bl::store(prod_rev + offs, bl::cumprod(v, 0, /*reverse=*/true), mask);
  auto iv = bl::load(ix + offs, mask, INT32_MIN);
  auto running_max = [](bl::Tensor a, bl::Tensor b) {
    return bl::maximum(a, b);
  };
  bl::store(max_fwd + offs, bl::associative_scan(iv, 0, running_max), mask);
  bl::store(max_rev + offs,
            bl::associative_scan(iv, -1, running_max, /*reverse=*/true), mask);
});

TEST(Scan, CumprodAndRunningMaximum) {
  for (int n : {1, 2, 31, 64}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    auto x = random_floats(n, 0.9f, 1.1f);
    auto ix = random_ints<int32_t>(n, -1000, 1000);
    auto prod_fwd = poisoned(n), prod_rev = poisoned(n);
    auto max_fwd = poison<int32_t>(n), max_rev = poison<int32_t>(n);
    scans_1d[{1}](x, ix, prod_fwd, prod_rev, max_fwd, max_rev, n);
    std::vector<double> want_fwd(n), want_rev(n);
    std::vector<int32_t> want_max_fwd(n), want_max_rev(n);
    double p = 1;
    int32_t best = INT32_MIN;
    for (int i = 0; i < n; ++i) {
      want_fwd[i] = p *= x[i];
      want_max_fwd[i] = best = std::max(best, ix[i]);
    }
    p = 1;
    best = INT32_MIN;
    for (int i = n - 1; i >= 0; --i) {
      want_rev[i] = p *= x[i];
      want_max_rev[i] = best = std::max(best, ix[i]);
    }
    // Up to 63 f32 roundings of a product.
    EXPECT_TRUE(all_close(prod_fwd, want_fwd, 64 * 0x1p-24, 0));
    EXPECT_TRUE(all_close(prod_rev, want_rev, 64 * 0x1p-24, 0));
    EXPECT_EQ(max_fwd, want_max_fwd);
    EXPECT_EQ(max_rev, want_max_rev);
  }
}

// --------------------------------------------------- rank 3 and scalars
// A 2x4x8 block reduced along its last axis and whole; a scalar's sum is
// the scalar.
auto rank3 = bl::kernel("rank3", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> sums,
                                    bl::Ptr<int32_t> maximum,
                                    bl::Ptr<int32_t> scalar_sum) {
  auto i = bl::reshape(bl::arange(0, 2), {2, 1, 1});
  auto j = bl::reshape(bl::arange(0, 4), {1, 4, 1});
  auto k = bl::reshape(bl::arange(0, 8), {1, 1, 8});
  auto cube = bl::load(x + i * 32 + j * 8 + k);
  auto plane = bl::sum(cube, 2); // [2, 4]
  bl::store(sums + bl::reshape(i, {2, 1}) * 4 + bl::reshape(j, {1, 4}), plane);
  bl::store(maximum, bl::max(cube));
  bl::store(scalar_sum, bl::sum(bl::load(x + 5)));
});

TEST(Reduce, RankThreeAndScalar) {
  auto x = random_ints<int32_t>(64, -1000, 1000);
  auto sums = poison<int32_t>(8), maximum = poison<int32_t>(1),
       scalar_sum = poison<int32_t>(1);
  rank3[{1}](x, sums, maximum, scalar_sum);
  std::vector<int32_t> want(8, 0);
  for (int p = 0; p < 8; ++p)
    for (int k = 0; k < 8; ++k)
      want[p] += x[p * 8 + k];
  EXPECT_EQ(sums, want);
  EXPECT_EQ(maximum[0], *std::max_element(x.begin(), x.end()));
  EXPECT_EQ(scalar_sum[0], x[5]);
}

// ------------------------------------------------------- textual form
// Combine regions and scan attributes survive print -> parse -> print.
TEST(Reduce, TracedIrParsesBackIdentically) {
  float *f = nullptr;
  int32_t *i = nullptr;
  for (const std::string &text :
       {arg_extrema<float>().ir_for(f, i, i, i, i, 5, 7),
        scans_1d.ir_for(f, i, f, f, i, i, 31),
        custom_reduce.ir_for(i, i, i, i, i, 5, 7)}) {
    auto parsed = blocc::ir::parse_function(text);
    EXPECT_EQ(blocc::ir::print(*parsed), text);
    bool has_region = text.find(" = reduce ") != std::string::npos ||
                      text.find(" = scan ") != std::string::npos;
    EXPECT_TRUE(has_region) << text;
  }
}

} // namespace
