// Loops, branches, reductions, scans, dot and atomics on the CPU backend
// against the interpreter. Integer results and the float results both
// backends compute in the same order (loop-carried arithmetic, scans,
// reductions along outer axes, dot) must agree bit for bit; float sums along
// the innermost axis, which the CPU backend combines as a tree, within the
// rounding a tree of that depth allows.
#include "cpu/support.h"

namespace bl = blocc;
using namespace blocc::cpu_testing;

namespace {

// ---------------------------------------------------------- control flow
// A carried block and a carried scalar over a runtime trip count (zero and
// negative-step ranges included), a swap of two carried blocks, and a
// runtime branch whose result is a block.
auto loops = bl::kernel("loops", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                    bl::Ptr<int32_t> steps_out, bl::i32 n,
                                    bl::i32 lb, bl::i32 ub, bl::i32 step) {
  auto offs = bl::program_id(0) * 32 + bl::arange(0, 32);
  auto mask = offs < n;
  auto acc = bl::load(x + offs, mask);
  auto other = acc * 0.5f;
  auto count = bl::scalar(0, bl::int32);
  for (auto i : bl::range(lb, ub, step)) {
    acc = acc * 0.75f + bl::cast(i, bl::float32);
    auto t = acc;
    acc = other;
    other = t;
    count = count + 1;
  }
  auto result = acc + other;
  bl::if_(
      count % 2 == 0, [&] { result = result * 2; },
      [&] { result = result - 1; });
  bl::store(out + offs, result, mask);
  bl::store(steps_out + bl::program_id(0), count);
});

struct LoopCase {
  int lb, ub, step;
};

class CpuLoops : public ::testing::TestWithParam<LoopCase> {};

TEST_P(CpuLoops, CarriedBlocksScalarsAndBranches) {
  BLOCC_SEED_TRACE();
  auto [lb, ub, step] = GetParam();
  int n = 70;
  auto x = random_values<float>(n, -1, 1);
  auto cpu = poisoned<float>(n), interpreter = poisoned<float>(n);
  auto steps_cpu = poisoned<int32_t>(3),
       steps_interpreter = poisoned<int32_t>(3);
  loops[{3}].with(kCpu)(x, cpu, steps_cpu, n, lb, ub, step);
  loops[{3}].with(kInterpreter)(x, interpreter, steps_interpreter, n, lb, ub,
                                step);
  EXPECT_TRUE(same(cpu, interpreter));
  EXPECT_TRUE(same(steps_cpu, steps_interpreter));
  int trips = 0;
  for (int64_t i = lb; step > 0 ? i < ub : i > ub; i += step)
    ++trips;
  EXPECT_EQ(steps_cpu[0], trips);
}

INSTANTIATE_TEST_SUITE_P(
    Ranges, CpuLoops,
    ::testing::Values(LoopCase{0, 5, 1}, LoopCase{0, 0, 1}, LoopCase{3, 1, 1},
                      LoopCase{10, -3, -4}, LoopCase{-7, 30, 6},
                      LoopCase{2147483600, 2147483647, 20}));

// ------------------------------------------------------------ reductions
template <typename T> auto make_reductions(const char *name) {
  return bl::kernel(name, [](bl::Ptr<T> x, bl::Ptr<T> rows, bl::Ptr<T> cols,
                             bl::Ptr<T> maxima, bl::Ptr<int32_t> where,
                             bl::Ptr<T> scanned, bl::i32 m, bl::i32 n) {
    auto i = bl::arange(0, 16), j = bl::arange(0, 32);
    auto i2 = bl::expand_dims(i, 1), j2 = bl::expand_dims(j, 0);
    auto mask = i2 < m && j2 < n;
    auto v = bl::load(x + i2 * n + j2, mask);
    bl::store(rows + i, bl::sum(v, 1)); // innermost axis
    bl::store(cols + j, bl::sum(v, 0)); // outer axis
    bl::store(maxima + i, bl::max(v, 1) - bl::min(v, 1));
    bl::store(where + j, bl::argmax(v, 0) * 100 + bl::argmin(v, 0));
    bl::store(scanned + i2 * 32 + j2,
              bl::cumsum(v, 1) + bl::cumsum(v, 0, true));
  });
}

template <typename T> class CpuReductions : public ::testing::Test {};
using ReductionTypes = ::testing::Types<int32_t, int64_t, uint8_t, float>;
TYPED_TEST_SUITE(CpuReductions, ReductionTypes);

TYPED_TEST(CpuReductions, MatchTheInterpreter) {
  using T = TypeParam;
  BLOCC_SEED_TRACE();
  static auto k = make_reductions<T>("reductions");
  int m = 13, n = 29;
  auto x = std::is_floating_point_v<T> ? random_values<T>(m * n, -1, 1)
                                       : random_values<T>(m * n, 0, 7);
  auto run = [&](const bl::LaunchOptions &on) {
    auto rows = poisoned<T>(16), cols = poisoned<T>(32),
         maxima = poisoned<T>(16), scanned = poisoned<T>(512);
    auto where = poisoned<int32_t>(32);
    k[{1}].with(on)(x, rows, cols, maxima, where, scanned, m, n);
    return std::make_tuple(rows, cols, maxima, where, scanned);
  };
  auto cpu = run(kCpu), interpreter = run(kInterpreter);
  if constexpr (std::is_floating_point_v<T>) {
    // Sums over 32 elements of magnitude <= 1 in another order: each of
    // the 31 additions rounds a partial sum of magnitude <= 32 by at most
    // half an ulp (6e-8 relative).
    EXPECT_TRUE(
        close(std::get<0>(cpu), std::get<0>(interpreter), 0, 31 * 32 * 6e-8));
  } else {
    EXPECT_TRUE(same(std::get<0>(cpu), std::get<0>(interpreter)));
  }
  EXPECT_TRUE(same(std::get<1>(cpu), std::get<1>(interpreter)));
  EXPECT_TRUE(same(std::get<2>(cpu), std::get<2>(interpreter)));
  EXPECT_TRUE(same(std::get<3>(cpu), std::get<3>(interpreter)));
  EXPECT_TRUE(same(std::get<4>(cpu), std::get<4>(interpreter)));
  // Independently of the interpreter: row sums in float64.
  for (int r = 0; r < m; ++r) {
    double want = 0;
    for (int c = 0; c < n; ++c)
      want += static_cast<double>(x[r * n + c]);
    if constexpr (std::is_floating_point_v<T>)
      EXPECT_NEAR(std::get<0>(cpu)[r], want, 32 * 6e-8) << r;
    else
      EXPECT_EQ(std::get<0>(cpu)[r], static_cast<T>(want)) << r;
  }
}

// ------------------------------------------------------------------- dot
template <typename In, typename Acc> auto make_matmul(const char *name) {
  return bl::kernel(name, [](bl::Ptr<In> a, bl::Ptr<In> b, bl::Ptr<Acc> c,
                             bl::i32 m, bl::i32 n, bl::i32 k, bl::Const<int> BM,
                             bl::Const<int> BN, bl::Const<int> BK) {
    auto rows = bl::program_id(0) * BM + bl::arange(0, BM);
    auto cols = bl::program_id(1) * BN + bl::arange(0, BN);
    auto acc = bl::zeros({BM, BN}, bl::dtype_of<Acc>());
    for (auto k0 : bl::range(0, k, BK)) {
      auto ks = k0 + bl::arange(0, BK);
      auto ta =
          bl::load(a + bl::expand_dims(rows, 1) * k + bl::expand_dims(ks, 0),
                   bl::expand_dims(rows < m, 1) && bl::expand_dims(ks < k, 0));
      auto tb =
          bl::load(b + bl::expand_dims(ks, 1) * n + bl::expand_dims(cols, 0),
                   bl::expand_dims(ks < k, 1) && bl::expand_dims(cols < n, 0));
      acc = bl::dot(ta, tb, acc);
    }
    bl::store(c + bl::expand_dims(rows, 1) * n + bl::expand_dims(cols, 0), acc,
              bl::expand_dims(rows < m, 1) && bl::expand_dims(cols < n, 0));
  });
}

template <typename In, typename Acc>
void check_matmul(int m, int n, int k, int bm, int bn, int bk, double lo,
                  double hi) {
  static auto matmul = make_matmul<In, Acc>("matmul");
  auto a = random_values<In>(m * k, lo, hi),
       b = random_values<In>(k * n, lo, hi);
  auto cpu = poisoned<Acc>(m * n), interpreter = poisoned<Acc>(m * n);
  bl::Grid grid{bl::cdiv(m, bm), bl::cdiv(n, bn)};
  matmul[grid].with(kCpu)(a, b, cpu, m, n, k, bm, bn, bk);
  matmul[grid].with(kInterpreter)(a, b, interpreter, m, n, k, bm, bn, bk);
  // One fma per k in increasing k on both: bit for bit.
  EXPECT_TRUE(same(cpu, interpreter));
}

TEST(CpuDot, F32TilesMatchTheInterpreter) {
  BLOCC_SEED_TRACE();
  check_matmul<float, float>(70, 45, 50, 32, 32, 16, -1, 1);
  check_matmul<float, float>(16, 16, 16, 16, 16, 16, -1, 1);
}

TEST(CpuDot, F16InputsF32Accumulator) {
  BLOCC_SEED_TRACE();
  check_matmul<bl::half, float>(33, 65, 40, 16, 64, 32, -1, 1);
}

TEST(CpuDot, Int8InputsInt32Accumulator) {
  BLOCC_SEED_TRACE();
  check_matmul<int8_t, int32_t>(20, 37, 64, 16, 16, 32, -128, 127);
}

// --------------------------------------------------------------- atomics
// Every program adds into a few counters and keeps a running maximum;
// integer results do not depend on the order programs run in.
auto histogram = bl::kernel(
    "histogram", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> bins,
                    bl::Ptr<int32_t> top, bl::Ptr<float> total, bl::i32 n) {
      auto offs = bl::program_id(0) * 64 + bl::arange(0, 64);
      auto mask = offs < n;
      auto v = bl::load(x + offs, mask);
      bl::atomic_add(bins + v % 8, 1, mask);
      bl::atomic_max(top + bl::zeros({64}, bl::int32), v, mask);
      bl::atomic_add(total + bl::zeros({64}, bl::int32),
                     bl::cast(v % 2, bl::float32), mask);
    });

TEST(CpuAtomics, CountersAcrossParallelPrograms) {
  BLOCC_SEED_TRACE();
  int n = 5003;
  auto x = random_values<int32_t>(n, 0, 1000000);
  std::vector<int32_t> bins(8, 0), top(1, -1);
  std::vector<float> total(1, 0);
  histogram[{bl::cdiv(n, 64)}].with(kCpu)(x, bins, top, total, n);
  std::vector<int32_t> want_bins(8, 0);
  int32_t want_top = -1;
  int odd = 0;
  for (int32_t v : x) {
    ++want_bins[v % 8];
    want_top = std::max(want_top, v);
    odd += v % 2;
  }
  EXPECT_EQ(bins, want_bins);
  EXPECT_EQ(top[0], want_top);
  EXPECT_EQ(total[0], static_cast<float>(odd)); // exact: integers < 2^24
}

// atomic_cas as a lock-free "first writer wins" per slot; the old values
// returned by the lanes of one program follow lane order.
auto claim =
    bl::kernel("claim", [](bl::Ptr<int32_t> slots, bl::Ptr<int32_t> seen) {
      auto offs = bl::arange(0, 16);
      auto old = bl::atomic_cas(slots + offs % 4, bl::zeros({16}, bl::int32),
                                offs + 1);
      bl::store(seen + offs, old);
    });

TEST(CpuAtomics, CompareAndSwapInLaneOrder) {
  std::vector<int32_t> slots_cpu(4, 0), slots_interpreter(4, 0);
  auto seen_cpu = poisoned<int32_t>(16),
       seen_interpreter = poisoned<int32_t>(16);
  claim[{1}].with(kCpu)(slots_cpu, seen_cpu);
  claim[{1}].with(kInterpreter)(slots_interpreter, seen_interpreter);
  EXPECT_TRUE(same(slots_cpu, slots_interpreter));
  EXPECT_TRUE(same(seen_cpu, seen_interpreter));
  EXPECT_EQ(slots_cpu, (std::vector<int32_t>{1, 2, 3, 4}));
}

} // namespace
