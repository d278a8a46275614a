// Custom combine functions of reduce and associative_scan on the CPU backend
// against the interpreter: combines that divide integers, branch (bl::if_),
// loop (bl::range), cast and take several operands, reduced along each axis
// of a 2-D tile and of a 1-D block, and scanned forwards and backwards, at
// odd sizes (masked-off elements take part with the load's `other` value).
// Results must agree bit for bit: reductions use associative and
// commutative combines (the CPU backend folds the innermost axis in a
// tree), scans also combines that are neither (both backends scan in the
// same order). A zero divisor inside a combine is reported with the
// interpreter's message; one in a branch the lane does not take is not.
#include "cpu/support.h"

namespace bl = blocc;
using namespace blocc::cpu_testing;

namespace {

constexpr int kRows = 16, kCols = 32, kLength = 64;

// Where each result lies in the one output buffer: reductions of the tile
// along axis 1 [kRows], along axis 0 [kCols] and of all of it [1]; its four
// scans [kRows x kCols] (axis 0, axis 0 reversed, axis 1, axis 1 reversed);
// the reduction of the line [1] and its two scans [kLength].
constexpr int kTile = kRows * kCols;
constexpr int kRowsAt = 0;
constexpr int kColsAt = kRowsAt + kRows;
constexpr int kAllAt = kColsAt + kCols;
constexpr int kScansAt = kAllAt + 1;
constexpr int kLineAt = kScansAt + 4 * kTile;
constexpr int kLineScansAt = kLineAt + 1;
constexpr int kOutput = kLineScansAt + 2 * kLength;

/// The kernel for one combine: every reduction and scan above of x's
/// m x n tile (row-major) and of its first `length` elements. Reductions
/// only when the combine is associative and commutative.
template <typename T, typename Combine, bool reductions>
auto make_collectives(const char *name) {
  return bl::kernel(name, [](bl::Ptr<T> x, bl::Ptr<T> out, bl::i32 m, bl::i32 n,
                             bl::i32 length) {
    auto i = bl::arange(0, kRows), j = bl::arange(0, kCols);
    auto i2 = bl::expand_dims(i, 1), j2 = bl::expand_dims(j, 0);
    auto tile = bl::load(x + i2 * n + j2, i2 < m && j2 < n, Combine::padding());
    auto combine = [](bl::Tensor a, bl::Tensor b) {
      return Combine::combine(a, b);
    };
    auto at = i2 * kCols + j2;
    if constexpr (reductions) {
      bl::store(out + kRowsAt + i, bl::reduce(tile, 1, combine));
      bl::store(out + kColsAt + j, bl::reduce(tile, 0, combine));
      bl::store(out + kAllAt, bl::reduce(tile, std::nullopt, combine));
    }
    bl::store(out + kScansAt + at, bl::associative_scan(tile, 0, combine));
    bl::store(out + kScansAt + kTile + at,
              bl::associative_scan(tile, 0, combine, /*reverse=*/true));
    bl::store(out + kScansAt + 2 * kTile + at,
              bl::associative_scan(tile, 1, combine));
    bl::store(out + kScansAt + 3 * kTile + at,
              bl::associative_scan(tile, -1, combine, /*reverse=*/true));

    auto k = bl::arange(0, kLength);
    auto line = bl::load(x + k, k < length, Combine::padding());
    if constexpr (reductions)
      bl::store(out + kLineAt, bl::reduce(line, 0, combine));
    bl::store(out + kLineScansAt + k, bl::associative_scan(line, 0, combine));
    bl::store(out + kLineScansAt + kLength + k,
              bl::associative_scan(line, 0, combine, /*reverse=*/true));
  });
}

// ------------------------------------------------------------- combines
// The largest element, found through integer division: a / 7 orders the
// elements like a does (truncation is monotonic), ties broken by a itself.
struct BucketMax {
  static double padding() { return -100; }
  static bl::Tensor combine(bl::Tensor a, bl::Tensor b) {
    auto ka = a / 7, kb = b / 7;
    return bl::where(ka > kb || (ka == kb && a >= b), a, b);
  }
};

// A sum modulo 251 of non-negative elements, in 32 bits (the remainder and
// casts both ways).
struct SumModulo {
  static double padding() { return 0; }
  static bl::Tensor combine(bl::Tensor a, bl::Tensor b) {
    auto wide = bl::cast(a, bl::int32) + bl::cast(b, bl::int32);
    return bl::cast(wide % 251, a.dtype());
  }
};

// The largest element through a runtime branch.
struct IfMax {
  static double padding() { return -100; }
  static bl::Tensor combine(bl::Tensor a, bl::Tensor b) {
    auto r = b;
    bl::if_(a > b, [&] { r = a; });
    return r;
  }
};

// The largest element through a loop: max(a, b) twice.
struct LoopMax {
  static double padding() { return -100; }
  static bl::Tensor combine(bl::Tensor a, bl::Tensor b) {
    auto r = a;
    for (auto t : bl::range(0, 2)) {
      (void)t;
      r = bl::maximum(r, b);
    }
    return r;
  }
};

// Scans only (neither associative nor commutative). A division guarded by
// a branch: elements are often 0, and no lane may report the division it
// does not reach. Nested branches, and a remainder in the other one.
struct GuardedDivision {
  static double padding() { return 0; }
  static bl::Tensor combine(bl::Tensor a, bl::Tensor b) {
    auto r = a - b;
    bl::if_(
        b != 0,
        [&] {
          r = a / b + a % b;
          bl::if_(r == 0, [&] { r = b; });
        },
        [&] { bl::if_(a != 0, [&] { r = b % a + 1; }); });
    return r;
  }
};

// A loop whose iterations divide: (r * 3 + b) % 101, three times.
struct LoopRemainder {
  static double padding() { return 5; }
  static bl::Tensor combine(bl::Tensor a, bl::Tensor b) {
    auto r = a;
    for (auto t : bl::range(0, 3)) {
      r = (r * 3 + b + bl::cast(t, r.dtype())) % 101;
    }
    return r;
  }
};

// Scans only: divides by the running value (never 0 for positive
// elements), which the first step of a scan must not do before there is
// one.
struct RunningRatio {
  static double padding() { return 1; }
  static bl::Tensor combine(bl::Tensor a, bl::Tensor b) {
    return b / a + b % a + 1;
  }
};

// Floats: a decaying sum that rounds through an integer division on its
// way, and a branch on the magnitude with a square root (every op
// correctly rounded, so the same order gives the same bits).
struct FloatMix {
  static double padding() { return 0.5; }
  static bl::Tensor combine(bl::Tensor a, bl::Tensor b) {
    auto coarse = bl::cast(bl::cast(a * 64.f, bl::int32) / 3, a.dtype());
    auto r = coarse / 64.f + b;
    bl::if_(bl::abs(r) > 2.f, [&] { r = bl::sqrt(bl::abs(r)) - b * 0.25f; });
    return r;
  }
};

template <typename T>
std::vector<T> run_collectives(auto &kernel, const std::vector<T> &x, int m,
                               int n, int length, const bl::LaunchOptions &on) {
  auto out = poisoned<T>(kOutput);
  kernel[{1}].with(on)(x, out, m, n, length);
  return out;
}

template <typename T, typename Combine, bool reductions>
void check_combine(const char *name, double lo, double hi) {
  static auto kernel = make_collectives<T, Combine, reductions>(name);
  struct Size {
    int m, n, length;
  };
  for (auto [m, n, length] : {Size{13, 29, 37}, Size{1, 1, 1}, Size{16, 32, 64},
                              Size{7, 1, 63}, Size{1, 17, 2}}) {
    SCOPED_TRACE(std::string(name) + ": " + std::to_string(m) + " x " +
                 std::to_string(n) + ", length " + std::to_string(length));
    auto x = random_values<T>(kRows * kCols, lo, hi);
    auto cpu = run_collectives(kernel, x, m, n, length, kCpu);
    auto interpreter = run_collectives(kernel, x, m, n, length, kInterpreter);
    EXPECT_TRUE(same(cpu, interpreter));
  }
}

template <typename T> class CpuCombines : public ::testing::Test {};
using CombineTypes = ::testing::Types<int32_t, int64_t, uint8_t, int16_t>;
TYPED_TEST_SUITE(CpuCombines, CombineTypes);

TYPED_TEST(CpuCombines, IntegerDivisionAndRemainder) {
  using T = TypeParam;
  BLOCC_SEED_TRACE();
  double lo = std::is_signed_v<T> ? -90 : 0;
  check_combine<T, BucketMax, true>("bucket_max", lo, 90);
  check_combine<T, SumModulo, true>("sum_modulo", 0, 250);
  check_combine<T, LoopRemainder, false>("loop_remainder", lo, 90);
  check_combine<T, RunningRatio, false>("running_ratio", 1, 90);
}

TYPED_TEST(CpuCombines, BranchesAndLoops) {
  using T = TypeParam;
  BLOCC_SEED_TRACE();
  double lo = std::is_signed_v<T> ? -90 : 0;
  check_combine<T, IfMax, true>("if_max", lo, 90);
  check_combine<T, LoopMax, true>("loop_max", lo, 90);
  // Mostly zeros and small values: both branches taken in every vector.
  check_combine<T, GuardedDivision, false>("guarded_division", lo / 30, 3);
}

TEST(CpuCombines, FloatsThroughCastsDivisionAndBranches) {
  BLOCC_SEED_TRACE();
  check_combine<float, IfMax, true>("if_max_f32", -8, 8);
  check_combine<float, LoopMax, true>("loop_max_f32", -8, 8);
  check_combine<float, FloatMix, false>("float_mix", -4, 4);
  check_combine<double, FloatMix, false>("float_mix_f64", -4, 4);
}

// ------------------------------------------------------ division by zero
// A scan of an m x n tile along AXIS whose combine divides (in a loop when
// LOOP, so that it runs lane by lane on the CPU backend).
auto dividing_scan = bl::kernel(
    "dividing_scan", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out, bl::i32 m,
                        bl::i32 n, bl::Const<int> AXIS, bl::Const<int> LOOP) {
      auto i2 = bl::expand_dims(bl::arange(0, kRows), 1);
      auto j2 = bl::expand_dims(bl::arange(0, kCols), 0);
      auto mask = i2 < m && j2 < n;
      auto tile = bl::load(x + i2 * n + j2, mask, 1);
      auto scanned =
          bl::associative_scan(tile, AXIS, [&](bl::Tensor a, bl::Tensor b) {
            if (LOOP == 0)
              return a / b;
            auto r = a;
            for (auto t : bl::range(0, 2)) {
              (void)t;
              r = r / b + 1;
            }
            return r;
          });
      bl::store(out + i2 * n + j2, scanned, mask);
    });

TEST(CpuCombines, DivisionByZeroIsReportedAsByTheInterpreter) {
  BLOCC_SEED_TRACE();
  for (int axis : {0, 1})
    for (bool loop : {false, true}) {
      SCOPED_TRACE("axis " + std::to_string(axis) + (loop ? ", loop" : ""));
      int m = 11, n = 23;
      auto x = random_values<int32_t>(m * n, 1, 9);
      // Not in the first row or column: a scan never divides by its first
      // element along either axis.
      int row = std::uniform_int_distribution<int>(1, m - 1)(rng());
      int col = std::uniform_int_distribution<int>(1, n - 1)(rng());
      x[static_cast<size_t>(row * n + col)] = 0;
      auto run = [&](const bl::LaunchOptions &on) {
        auto out = poisoned<int32_t>(m * n);
        std::string message = error_of(
            [&] { dividing_scan[{1}].with(on)(x, out, m, n, axis, loop); });
        EXPECT_TRUE(same(out, poisoned<int32_t>(m * n)));
        return message;
      };
      std::string cpu = run(kCpu);
      EXPECT_EQ(cpu, run(kInterpreter));
      EXPECT_THAT(cpu, ::testing::HasSubstr(
                           "kernel 'dividing_scan', program (0, 0, 0), div at "
                           "combine_test.cpp:"));
      EXPECT_THAT(cpu,
                  ::testing::HasSubstr("lane 0: integer division by zero"));
    }
}

} // namespace
