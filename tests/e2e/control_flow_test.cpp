// Structured control flow end to end: bl::range loops with carried variables
// (several at once, one rebound to another, scalars, pointers), nested and
// zero-trip loops, bl::if_ on conditions known only at run time (with block
// results the GPU holds in two layouts), and the bl::for_range callable
// form. Integer kernels are checked exactly; float kernels against float64
// with the rounding they accumulate.
#include "branches_kernel.h"
#include "e2e/support.h"

#include <bit>

namespace bl = blocc;
using namespace blocc::testing;

namespace {

constexpr int kBlock = 64;

// ------------------------------------------------------------ Fibonacci
// a, b = b, a + b on whole blocks, `steps` times (a runtime trip count).
// `a = b` rebinds one carried variable to another's loop argument.
auto fibonacci =
    bl::kernel("fibonacci", [](bl::Ptr<int32_t> a0, bl::Ptr<int32_t> b0,
                               bl::Ptr<int32_t> out_a, bl::Ptr<int32_t> out_b,
                               bl::i32 n, bl::i32 steps, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto a = bl::load(a0 + offs, mask);
      auto b = bl::load(b0 + offs, mask);
      for ([[maybe_unused]] auto i : bl::range(0, steps)) {
        auto next = a + b;
        a = b;
        b = next;
      }
      bl::store(out_a + offs, a, mask);
      bl::store(out_b + offs, b, mask);
    });

// A pure swap: both carried variables yield the other's loop argument.
auto swap_loop =
    bl::kernel("swap_loop", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> y,
                               bl::Ptr<int32_t> out_x, bl::Ptr<int32_t> out_y,
                               bl::i32 n, bl::i32 steps, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto a = bl::load(x + offs, mask);
      auto b = bl::load(y + offs, mask);
      for ([[maybe_unused]] auto i : bl::range(0, steps)) {
        auto t = a;
        a = b;
        b = t;
      }
      bl::store(out_x + offs, a, mask);
      bl::store(out_y + offs, b, mask);
    });

struct FibCase {
  int n, steps;
};

class Fibonacci : public ::testing::TestWithParam<FibCase> {};

TEST_P(Fibonacci, BlocksFollowTheRecurrence) {
  auto [n, steps] = GetParam();
  auto a0 = random_ints<int32_t>(n, -100, 100),
       b0 = random_ints<int32_t>(n, -100, 100);
  std::vector<int32_t> out_a(n, INT32_MIN), out_b(n, INT32_MIN); // poison
  fibonacci[{bl::cdiv(n, kBlock)}](a0, b0, out_a, out_b, n, steps, kBlock);
  for (int i = 0; i < n; ++i) {
    int64_t a = a0[i], b = b0[i];
    for (int s = 0; s < steps; ++s) {
      int64_t next = a + b;
      a = b;
      b = next;
    }
    ASSERT_EQ(out_a[i], a) << "element " << i;
    ASSERT_EQ(out_b[i], b) << "element " << i;
  }
}

// |F(21)| * 200 < 2^31: the recurrence stays exact in int32.
INSTANTIATE_TEST_SUITE_P(Steps, Fibonacci,
                         ::testing::Values(FibCase{1, 0}, FibCase{1, 1},
                                           FibCase{7, 2}, FibCase{63, 5},
                                           FibCase{65, 13}, FibCase{1000, 20}));

TEST(SwapLoop, OddTripCountsSwapEvenOnesDoNot) {
  const int n = 101;
  auto x = random_ints<int32_t>(n, -1000, 1000),
       y = random_ints<int32_t>(n, -1000, 1000);
  for (int steps : {0, 1, 2, 7}) {
    std::vector<int32_t> ox(n, INT32_MIN), oy(n, INT32_MIN);
    swap_loop[{bl::cdiv(n, kBlock)}](x, y, ox, oy, n, steps, kBlock);
    EXPECT_EQ(ox, steps % 2 ? y : x) << "steps = " << steps;
    EXPECT_EQ(oy, steps % 2 ? x : y) << "steps = " << steps;
  }
}

// ------------------------------------------------ several carried values
// Column statistics of a rows x cols matrix: each program owns BLOCK
// columns and walks the rows, carrying a pointer block, three accumulators
// of different kinds and a scalar counter.
auto column_stats =
    bl::kernel("column_stats",
               [](bl::Ptr<float> x, bl::Ptr<float> sums, bl::Ptr<float> maxima,
                  bl::Ptr<float> weighted, bl::Ptr<int32_t> counts,
                  bl::i32 rows, bl::i32 cols, bl::Const<int> BLOCK) {
                 auto pid = bl::program_id(0);
                 auto offs = pid * BLOCK + bl::arange(0, BLOCK);
                 auto mask = offs < cols;
                 auto ptrs = x + offs;
                 auto sum = bl::zeros({BLOCK}, bl::float32);
                 auto max = bl::full({BLOCK}, -INFINITY, bl::float32);
                 auto weighted_sum = bl::zeros({BLOCK}, bl::float32);
                 auto count = bl::scalar(0, bl::int32);
                 for (auto r : bl::range(0, rows)) {
                   auto v = bl::load(ptrs, mask);
                   sum += v;
                   max = bl::maximum(max, v);
                   weighted_sum += v * bl::cast(r, bl::float32);
                   count += 1;
                   ptrs += cols; // the next row
                 }
                 bl::store(sums + offs, sum, mask);
                 bl::store(maxima + offs, max, mask);
                 bl::store(weighted + offs, weighted_sum, mask);
                 bl::store(counts + pid, count);
               });

TEST(CarriedValues, ColumnStatisticsOverRows) {
  for (auto [rows, cols] :
       {std::pair{1, 1}, {3, 7}, {17, 64}, {31, 129}, {0, 5}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
    auto x = random_floats(size_t(rows) * cols);
    int programs = bl::cdiv(cols, kBlock);
    auto sums = poisoned(cols), maxima = poisoned(cols),
         weighted = poisoned(cols);
    std::vector<int32_t> counts(programs, -1);
    column_stats[{programs}](x, sums, maxima, weighted, counts, rows, cols,
                             kBlock);
    std::vector<double> want_sum(cols, 0), want_max(cols, -INFINITY),
        want_w(cols, 0);
    std::vector<double> magnitude(cols, 0), weighted_magnitude(cols, 0);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        double v = x[size_t(r) * cols + c];
        want_sum[c] += v;
        want_max[c] = std::max(want_max[c], v);
        want_w[c] += v * r;
        magnitude[c] += std::abs(v);
        weighted_magnitude[c] += std::abs(v) * r;
      }
    for (int c = 0; c < cols; ++c) {
      // A sequential f32 sum of `rows` terms: each addition rounds by at
      // most 2^-24 of the running magnitude.
      double eps = std::ldexp(1.0, -24) * (rows + 1);
      EXPECT_NEAR(sums[c], want_sum[c], eps * magnitude[c]) << "column " << c;
      EXPECT_NEAR(weighted[c], want_w[c], 2 * eps * weighted_magnitude[c])
          << "column " << c;
      EXPECT_EQ(maxima[c], want_max[c]) << "column " << c; // max is exact
    }
    for (int32_t count : counts)
      EXPECT_EQ(count, rows);
  }
}

// ----------------------------------------------------------- nested loops
// A triangular double loop whose inner trip count is the outer induction
// variable, with one accumulator carried through both levels and one that
// the outer body resets before each inner loop. Integers: exact.
auto triangle =
    bl::kernel("triangle", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out,
                              bl::Ptr<int32_t> inner_out, bl::i32 n,
                              bl::i32 outer, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto v = bl::load(x + offs, mask);
      auto total = bl::zeros({BLOCK}, bl::int32);
      auto last_inner = bl::zeros({BLOCK}, bl::int32);
      for (auto i : bl::range(0, outer)) {
        auto inner = bl::zeros({BLOCK}, bl::int32);
        for (auto j : bl::range(0, i + 1)) {
          inner += v * j + i;
          total += 1;
        }
        total += inner * 2;
        last_inner = inner;
      }
      bl::store(out + offs, total, mask);
      bl::store(inner_out + offs, last_inner, mask);
    });

TEST(NestedLoops, TriangularTripCounts) {
  const int n = 77;
  auto x = random_ints<int32_t>(n, -50, 50);
  for (int outer : {0, 1, 2, 9}) {
    std::vector<int32_t> out(n, INT32_MIN), inner_out(n, INT32_MIN);
    triangle[{bl::cdiv(n, kBlock)}](x, out, inner_out, n, outer, kBlock);
    for (int e = 0; e < n; ++e) {
      int64_t total = 0, last = 0;
      for (int i = 0; i < outer; ++i) {
        int64_t inner = 0;
        for (int j = 0; j <= i; ++j) {
          inner += int64_t(x[e]) * j + i;
          total += 1;
        }
        total += inner * 2;
        last = inner;
      }
      ASSERT_EQ(out[e], total) << "outer = " << outer << ", element " << e;
      ASSERT_EQ(inner_out[e], last) << "outer = " << outer << ", element " << e;
    }
  }
}

// ------------------------------------------- loops that store in the body
// Walks a long row in column blocks (layer norm's second pass, without the
// statistics): stores inside the loop, a step that does not divide the
// length, and a lower bound that is not zero.
auto scale_columns = bl::kernel(
    "scale_columns", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 start,
                        bl::i32 n, bl::Const<int> BLOCK) {
      for (auto off : bl::range(start, n, BLOCK)) {
        auto cols = off + bl::arange(0, BLOCK);
        auto mask = cols < n;
        bl::store(out + cols, bl::load(x + cols, mask) * 3.0f, mask);
      }
    });

TEST(LoopBodies, StoreEveryBlockOfARowOnce) {
  for (auto [start, n] :
       {std::pair{0, 1}, {0, 63}, {0, 64}, {0, 65}, {5, 200}, {7, 7}, {9, 3}}) {
    SCOPED_TRACE("start " + std::to_string(start) + ", n " + std::to_string(n));
    auto x = random_floats(std::max(n, 1));
    auto out = poisoned(x.size());
    scale_columns[{1}](x, out, start, n, kBlock);
    for (int i = 0; i < int(x.size()); ++i) {
      if (i < start || i >= n)
        ASSERT_TRUE(std::isnan(out[i]))
            << "element " << i << " outside [start, n) written";
      else
        ASSERT_EQ(out[i], x[i] * 3.0f)
            << "element " << i; // one rounding, same as host
    }
  }
}

// A loop that asks for warp specialization (bl::LoopOptions) carries the
// request in its IR; a loop that cannot have a producer warpgroup (it
// stores, and feeds no dot) runs as written on every backend.
auto scale_columns_specialized = bl::kernel(
    "scale_columns_specialized",
    [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n, bl::Const<int> BLOCK) {
      for (auto off : bl::range(0, n, BLOCK, {.warp_specialize = true})) {
        auto cols = off + bl::arange(0, BLOCK);
        auto mask = cols < n;
        bl::store(out + cols, bl::load(x + cols, mask) * 3.0f, mask);
      }
    });

TEST(LoopOptions, AWarpSpecializedLoopThatCannotBeOneRunsAsWritten) {
  std::string ir = scale_columns_specialized.ir_for(
      static_cast<float *>(nullptr), static_cast<float *>(nullptr), 200,
      kBlock);
  EXPECT_NE(ir.find("warp_specialize = 1"), std::string::npos) << ir;
  auto x = random_floats(200);
  auto out = poisoned(x.size());
  scale_columns_specialized[{1}](x, out, 200, kBlock);
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(out[i], x[i] * 3.0f) << "element " << i;
}

// ------------------------------------------------------ zero-trip loops
// A loop that runs zero times leaves every carried value as it was before
// the loop and executes none of its stores.
auto zero_trip = bl::kernel(
    "zero_trip", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::Ptr<float> side,
                    bl::i32 n, bl::i32 lb, bl::i32 ub, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto acc = bl::load(x + offs, mask);
      auto k = bl::scalar(7, bl::int32);
      for (auto i : bl::range(lb, ub, 2)) {
        acc = acc * 2.0f + 1.0f;
        k = k + i;
        bl::store(side + offs, acc, mask);
      }
      bl::store(out + offs, acc + bl::cast(k, bl::float32), mask);
    });

TEST(ZeroTrip, CarriedValuesKeepTheirInitialValues) {
  const int n = 45;
  auto x = random_floats(n);
  for (auto [lb, ub] : {std::pair{0, 0}, {5, 5}, {9, 3}, {-1, -4}}) {
    SCOPED_TRACE("range(" + std::to_string(lb) + ", " + std::to_string(ub) +
                 ", 2)");
    auto out = poisoned(n), side = poisoned(n);
    zero_trip[{1}](x, out, side, n, lb, ub, kBlock);
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(out[i], x[i] + 7.0f) << "element " << i;
      ASSERT_TRUE(std::isnan(side[i]))
          << "the body's store ran at element " << i;
    }
  }
}

TEST(ZeroTrip, OneAndSeveralTripsForContrast) {
  const int n = 45;
  auto x = random_floats(n);
  for (auto [lb, ub] : {std::pair{0, 1}, {3, 10}, {-4, 1}}) {
    SCOPED_TRACE("range(" + std::to_string(lb) + ", " + std::to_string(ub) +
                 ", 2)");
    auto out = poisoned(n), side = poisoned(n);
    zero_trip[{1}](x, out, side, n, lb, ub, kBlock);
    for (int e = 0; e < n; ++e) {
      float acc = x[e]; // the same f32 operations, in the same order
      int k = 7;
      for (int i = lb; i < ub; i += 2) {
        acc = acc * 2.0f + 1.0f;
        k += i;
      }
      ASSERT_EQ(side[e], acc) << "element " << e;
      ASSERT_EQ(out[e], acc + float(k)) << "element " << e;
    }
  }
}

// ------------------------------------------------------------- bl::if_
// The kernel: tests/branches_kernel.h.
using blocc::testing::branches;

TEST(RuntimeBranches, FollowTheirConditions) {
  const int n = 150; // three programs, the last one partial
  const int programs = bl::cdiv(n, kBlock);
  auto x = random_floats(n);
  for (int mode : {0, 1, 2}) {
    for (int steps : {0, 1, 5}) {
      SCOPED_TRACE("mode " + std::to_string(mode) + ", steps " +
                   std::to_string(steps));
      auto flags = random_floats(programs, 0, 1);
      flags[0] = 0.9f; // at least one program of each kind
      flags[1] = 0.1f;
      auto out = poisoned(n);
      std::vector<int32_t> taken(programs, -1);
      branches[{programs}](x, flags, out, taken, n, mode, steps, kBlock);
      for (int p = 0; p < programs; ++p) {
        int count = 0;
        for (int e = p * kBlock; e < std::min(n, (p + 1) * kBlock); ++e) {
          float y = x[e];
          count = 0;
          if (mode == 1) {
            y = y * 2.0f;
            count += 1;
          } else {
            y = y - 1.0f;
            if (mode == 2)
              count += 10;
          }
          if (flags[p] > 0.5f) {
            y = -y;
            count += 100;
          }
          for (int i = 0; i < steps; ++i) {
            if (i % 3 == 0) {
              y = y + 1.0f;
            } else {
              y = y * 0.5f;
              count += 1000;
            }
          }
          // The same f32 operations in the same order: bit-identical.
          ASSERT_EQ(out[e], y) << "element " << e;
        }
        EXPECT_EQ(taken[p], count) << "program " << p;
      }
    }
  }
}

// An if_ with two block results, one of them stored as a row and broadcast
// over a two-row tile: on the GPU it has two layouts, so it is converted
// right where the branches merge, after the phis of both results.
auto two_layout_results =
    bl::kernel("two_layout_results",
               [](bl::Ptr<float> x, bl::Ptr<float> row, bl::Ptr<float> tile,
                  bl::Ptr<int32_t> index, bl::i32 n, bl::Const<int> BLOCK) {
                 auto pid = bl::program_id(0);
                 auto cols = bl::arange(0, BLOCK);
                 auto offs = pid * BLOCK + cols;
                 auto mask = offs < n;
                 auto y = bl::load(x + offs, mask, 0.0f);
                 auto k = offs;
                 bl::if_(
                     pid % 2 == 0,
                     [&] {
                       y = y * 2.0f;
                       k = k + n;
                     },
                     [&] {
                       y = -y;
                       k = k - 1;
                     });
                 bl::store(row + offs, y, mask);
                 auto rows = bl::expand_dims(bl::arange(0, 2), 1);
                 bl::store(tile + pid * (2 * BLOCK) + rows * BLOCK +
                               bl::expand_dims(cols, 0),
                           bl::broadcast_to(bl::expand_dims(y, 0), {2, BLOCK}));
                 bl::store(index + offs, k, mask);
               });

TEST(RuntimeBranches, BlockResultsUsedInTwoLayouts) {
  const int n = 3 * kBlock + 7; // four programs, the last one partial
  const int programs = bl::cdiv(n, kBlock);
  auto x = random_floats(n);
  auto row = poisoned(n);
  auto tile = poisoned(programs * 2 * kBlock);
  std::vector<int32_t> index(n, -7);
  two_layout_results[{programs}](x, row, tile, index, n, kBlock);
  for (int p = 0; p < programs; ++p) {
    for (int c = 0; c < kBlock; ++c) {
      int e = p * kBlock + c;
      // Masked-off lanes load 0, which both branches keep 0 (as -0 too).
      float v = e < n ? x[e] : 0.0f;
      float y = p % 2 == 0 ? v * 2.0f : -v;
      for (int r = 0; r < 2; ++r)
        ASSERT_EQ(tile[(p * 2 + r) * kBlock + c], y)
            << "program " << p << ", row " << r << ", column " << c;
      if (e >= n)
        continue;
      ASSERT_EQ(row[e], y) << "element " << e;
      ASSERT_EQ(index[e], p % 2 == 0 ? e + n : e - 1) << "element " << e;
    }
  }
}

// --------------------------------------------- range-for and for_range
// Horner's rule p(x) = sum_i c_i x^(degree - i) with coefficients loaded as
// scalars inside the loop, written both ways; both must give the same.
auto horner_range =
    bl::kernel("horner_range",
               [](bl::Ptr<float> x, bl::Ptr<float> coef, bl::Ptr<float> out,
                  bl::i32 n, bl::i32 terms, bl::Const<int> BLOCK) {
                 auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
                 auto mask = offs < n;
                 auto v = bl::load(x + offs, mask);
                 auto acc = bl::zeros({BLOCK}, bl::float32);
                 for (auto i : bl::range(terms)) {
                   acc = acc * v + bl::load(coef + i);
                 }
                 bl::store(out + offs, acc, mask);
               });

auto horner_callable =
    bl::kernel("horner_callable", [](bl::Ptr<float> x, bl::Ptr<float> coef,
                                     bl::Ptr<float> out, bl::i32 n,
                                     bl::i32 terms, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto v = bl::load(x + offs, mask);
      auto acc = bl::zeros({BLOCK}, bl::float32);
      bl::for_range(0, terms, 1,
                    [&](bl::Tensor i) { acc = acc * v + bl::load(coef + i); });
      bl::store(out + offs, acc, mask);
    });

TEST(LoopForms, RangeForAndForRangeAgree) {
  const int n = 203;
  auto x = random_floats(n);
  for (int terms : {0, 1, 6}) {
    SCOPED_TRACE("terms = " + std::to_string(terms));
    auto coef = random_floats(std::max(terms, 1));
    auto a = poisoned(n), b = poisoned(n);
    horner_range[{bl::cdiv(n, kBlock)}](x, coef, a, n, terms, kBlock);
    horner_callable[{bl::cdiv(n, kBlock)}](x, coef, b, n, terms, kBlock);
    std::vector<double> want(n);
    for (int e = 0; e < n; ++e) {
      double acc = 0, bound = 0;
      for (int i = 0; i < terms; ++i) {
        acc = acc * x[e] + coef[i];
        bound = bound * std::abs(x[e]) + std::abs(coef[i]);
      }
      want[e] = acc;
      // Horner in f32: two roundings per step, each at most 2^-24 of the
      // running magnitude, and |x| <= 1 keeps them from growing.
      EXPECT_NEAR(a[e], acc, 2 * terms * std::ldexp(1.0, -24) * bound)
          << "element " << e;
    }
    for (int e = 0; e < n; ++e)
      ASSERT_EQ(std::bit_cast<uint32_t>(a[e]), std::bit_cast<uint32_t>(b[e]))
          << "the two loop forms differ at element " << e;
  }
}

// A plain C++ loop is unrolled at trace time (tl.static_range) and can be
// mixed with a traced one.
auto static_and_traced = bl::kernel(
    "static_and_traced", [](bl::Ptr<int32_t> out, bl::i32 steps,
                            bl::Const<int> BLOCK, bl::Const<int> UNROLL) {
      auto lanes = bl::arange(0, BLOCK);
      auto acc = bl::zeros({BLOCK}, bl::int32);
      for (auto i : bl::range(0, steps)) {
        for (int u = 0; u < UNROLL; ++u) // traced UNROLL times
          acc += lanes * u + i;
      }
      bl::store(out + lanes, acc);
    });

TEST(LoopForms, StaticLoopInsideATracedLoop) {
  for (int steps : {0, 3}) {
    std::vector<int32_t> out(16, INT32_MIN);
    static_and_traced[{1}](out, steps, 16, 4);
    for (int l = 0; l < 16; ++l) {
      int64_t want = 0;
      for (int i = 0; i < steps; ++i)
        for (int u = 0; u < 4; ++u)
          want += int64_t(l) * u + i;
      ASSERT_EQ(out[l], want) << "lane " << l << ", steps " << steps;
    }
  }
}

// ------------------------------------------------ more carried patterns
// Loop bounds of a 64-bit type and a runtime step (the induction variable
// takes the bounds' type), a scalar pointer walked by the loop, a swap done
// inside a bl::if_ inside the loop (each branch yields the other variable's
// loop argument), and a variable rebound and then restored within one
// iteration (it must stay loop-invariant).
auto walkers =
    bl::kernel("walkers", [](bl::Ptr<int32_t> x, bl::Ptr<int64_t> out,
                             bl::i64 n, bl::i32 step, bl::Const<int> BLOCK) {
      auto lanes = bl::arange(0, BLOCK);
      auto p = x;                            // scalar pointer
      auto total = bl::scalar(0, bl::int64); // sum of x[0], x[step], ...
      auto index_sum = bl::scalar(0, bl::int64);
      auto left = lanes;
      auto right = lanes * 100;
      auto invariant = lanes + 7;
      for (auto i : bl::range(0, n, step)) {
        total += bl::load(p).to(bl::int64);
        p += step;
        index_sum += i;
        bl::if_((i / step) % 2 == 0, [&] {
          auto t = left;
          left = right;
          right = t;
        });
        auto saved = invariant;
        invariant = invariant * 3;
        invariant = saved;
      }
      bl::store(out + 0, total);
      bl::store(out + 1, index_sum);
      bl::store(out + 2 + lanes, left.to(bl::int64));
      bl::store(out + 2 + BLOCK + lanes, right.to(bl::int64));
      bl::store(out + 2 + 2 * BLOCK + lanes, invariant.to(bl::int64));
    });

TEST(CarriedValues, WideBoundsPointersAndSwapsInBranches) {
  const int block = 8;
  for (auto [n, step] : {std::pair{0, 1}, {1, 1}, {10, 3}, {17, 2}, {40, 7}}) {
    SCOPED_TRACE("n " + std::to_string(n) + ", step " + std::to_string(step));
    auto x = random_ints<int32_t>(std::max(n, 1), -1000, 1000);
    std::vector<int64_t> out(2 + 3 * block, INT64_MIN);
    walkers[{1}](x, out, int64_t(n), step, block);
    int64_t total = 0, index_sum = 0;
    int swaps = 0;
    for (int64_t i = 0; i < n; i += step) {
      total += x[i];
      index_sum += i;
      swaps += (i / step) % 2 == 0;
    }
    EXPECT_EQ(out[0], total);
    EXPECT_EQ(out[1], index_sum);
    for (int l = 0; l < block; ++l) {
      int64_t left = swaps % 2 ? l * 100 : l, right = swaps % 2 ? l : l * 100;
      EXPECT_EQ(out[2 + l], left) << "lane " << l;
      EXPECT_EQ(out[2 + block + l], right) << "lane " << l;
      EXPECT_EQ(out[2 + 2 * block + l], l + 7) << "lane " << l;
    }
  }
}

} // namespace
