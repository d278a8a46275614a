// Scans on the GPU (backends/nvptx/lower_scan.cpp) against float64 and
// exact host references and the CPU backend: cumsum, cumprod, a running
// maximum and a first-element combine through associative_scan (forward
// and reversed), along each axis of 2-D blocks whose shapes put the axis in
// one thread, across lanes, across warps and across several tiles (a
// thread holding more than one run of the axis), with replicas where the
// block is smaller than the CTA's tile; and a two-operand scan whose
// combine is associative but not commutative (composing affine maps
// y -> a y + b), from IR text, on 1-D blocks of 1 to 4096 elements. Sizes
// are odd (1, primes, not multiples of the block); masked-off lanes hold
// the scan's identity, and outputs outside the matrix stay poisoned.
// The GPU combines in a tree (in-thread, lanes, warps, tiles) where the CPU
// backend combines left to right: float sums and products compare within a
// tolerance, integers, maxima and the order-sensitive combines exactly.
// Skipped (reported as skipped) where no GPU is present; the PTX is
// ptxas-assembled everywhere, and the checks run on the CPU backend's scans
// of every shape (so that a wrong check fails without a GPU too).
#include "nvptx/support.h"

#include "ir/parser.h"

#include <regex>

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

constexpr int kFloatKinds = 6, kIntKinds = 6;

// Every scan of an m x n matrix held in one [R, C] block, along AXIS; each
// kind's output is an R x C tile of f_out or i_out.
auto scans = bl::kernel("scans", [](bl::Ptr<float> x, bl::Ptr<int32_t> k,
                                    bl::Ptr<float> f_out,
                                    bl::Ptr<int32_t> i_out, bl::i32 m,
                                    bl::i32 n, bl::Const<int> AXIS,
                                    bl::Const<int> R, bl::Const<int> C) {
  auto r = bl::expand_dims(bl::arange(0, R), 1);
  auto c = bl::expand_dims(bl::arange(0, C), 0);
  auto mask = (r < m) && (c < n);
  auto v = bl::load(x + r * n + c, mask, 0.f);
  auto kv = bl::load(k + r * n + c, mask, 0);
  auto near_one = bl::where(mask, 1.f + v * 0.01f, 1.f);
  auto high = bl::where(mask, v, -INFINITY);
  auto k_high = bl::where(mask, kv, -1000000);
  int axis = AXIS;
  auto running_max = [](bl::Tensor a, bl::Tensor b) {
    return bl::maximum(a, b);
  };
  // Associative, not commutative: the earlier operand wins.
  auto first = [](bl::Tensor a, bl::Tensor) { return a; };
  auto tile = r * C + c;
  const int size = int(R) * int(C);
  bl::store(f_out + tile, bl::cumsum(v, axis), mask);
  bl::store(f_out + size + tile, bl::cumsum(v, axis, true), mask);
  bl::store(f_out + 2 * size + tile, bl::cumprod(near_one, axis), mask);
  bl::store(f_out + 3 * size + tile, bl::cumprod(near_one, axis, true), mask);
  bl::store(f_out + 4 * size + tile,
            bl::associative_scan(high, axis, running_max), mask);
  bl::store(f_out + 5 * size + tile,
            bl::associative_scan(high, axis, running_max, true), mask);
  bl::store(i_out + tile, bl::cumsum(kv, axis), mask);
  bl::store(i_out + size + tile, bl::cumsum(kv, axis, true), mask);
  bl::store(i_out + 2 * size + tile, bl::cumsum(kv * kv, axis), mask);
  bl::store(i_out + 3 * size + tile,
            bl::associative_scan(k_high, axis, running_max, true), mask);
  bl::store(i_out + 4 * size + tile, bl::associative_scan(kv, axis, first),
            mask);
  bl::store(i_out + 5 * size + tile,
            bl::associative_scan(kv, axis, first, true), mask);
});

struct Case {
  int m, n, axis, rows, cols, warps;
};

std::string name(const ::testing::TestParamInfo<Case> &info) {
  const Case &c = info.param;
  return "m" + std::to_string(c.m) + "_n" + std::to_string(c.n) + "_axis" +
         std::to_string(c.axis) + "_block" + std::to_string(c.rows) + "x" +
         std::to_string(c.cols) + "_warps" + std::to_string(c.warps);
}

// The suite's shapes. The kernel is one program, so each m x n matrix
// must fit its rows x cols block (expect_scans_right checks it).
const Case kCases[] = {
    // one element
    Case{1, 1, 1, 1, 1, 1}, Case{1, 1, 0, 1, 1, 4},
    // along rows (axis 1): across lanes and warps, several elements per
    // thread (n divisible by 16: 16-byte accesses, also with rows masked
    // off), several tiles
    Case{3, 1021, 1, 4, 1024, 4}, Case{3, 1024, 1, 4, 1024, 4},
    Case{4, 1024, 1, 4, 1024, 4}, Case{2, 4096, 1, 2, 4096, 4},
    Case{7, 257, 1, 8, 512, 8}, Case{5, 61, 1, 8, 64, 4},
    Case{9, 48, 1, 16, 64, 1},
    // along columns (axis 0): across warps, several tiles
    Case{131, 3, 0, 256, 4, 4}, Case{67, 29, 0, 128, 32, 4},
    Case{17, 33, 0, 32, 64, 2}, Case{100, 16, 0, 128, 16, 2},
    // a block smaller than the CTA's tile: replicas
    Case{2, 3, 1, 2, 4, 4}, Case{3, 2, 0, 4, 2, 8}, Case{5, 7, 1, 8, 8, 4}};

/// A case's inputs and the outputs of the scans kernel on one backend.
struct ScanRun {
  std::vector<float> x;
  std::vector<int32_t> k;
  std::vector<float> f;   // kFloatKinds tiles
  std::vector<int32_t> i; // kIntKinds tiles
};

ScanRun fresh_inputs(const Case &c) {
  const size_t size = size_t(c.m) * c.n;
  return {random_values<float>(size, -10, 10),
          random_values<int32_t>(size, -1000, 1000),
          {},
          {}};
}

void scan_on_cpu(const Case &c, ScanRun &run) {
  const size_t tile = size_t(c.rows) * c.cols;
  run.f = poisoned<float>(kFloatKinds * tile);
  run.i = poisoned<int32_t>(kIntKinds * tile);
  scans[{1}].with(kCpu)(run.x, run.k, run.f, run.i, c.m, c.n, c.axis, c.rows,
                        c.cols);
}

void scan_on_gpu(const Case &c, ScanRun &run) {
  const size_t tile = size_t(c.rows) * c.cols;
  DeviceBuffer<float> dx(run.x);
  DeviceBuffer<int32_t> dk(run.k);
  auto df = poisoned_on_gpu<float>(kFloatKinds * tile);
  auto di = poisoned_on_gpu<int32_t>(kIntKinds * tile);
  scans[{1}].with(on(Backend::Gpu, c.warps))(dx, dk, df, di, c.m, c.n, c.axis,
                                             c.rows, c.cols);
  run.f = df.to_host();
  run.i = di.to_host();
}

/// Checks `got` (scans of `got.x`, `got.k`) against float64 and exact
/// references and against `cpu`, the CPU backend's scans of the same
/// inputs.
void expect_scans_right(const Case &c, const ScanRun &got, const ScanRun &cpu) {
  ASSERT_TRUE(c.m <= c.rows && c.n <= c.cols)
      << "a " << c.m << "x" << c.n << " matrix does not fit a " << c.rows << "x"
      << c.cols << " block (the kernel is one program)";
  const size_t tile = size_t(c.rows) * c.cols;
  const std::vector<float> &x = got.x, &gf = got.f, &f = cpu.f;
  const std::vector<int32_t> &k = got.k, &gi = got.i, &i = cpu.i;
  const int lines = c.axis == 0 ? c.n : c.m;
  const int along = c.axis == 0 ? c.m : c.n;
  // Element j of line `line` in the matrix and in an output tile.
  auto at = [&](int line, int j) {
    return c.axis == 0 ? size_t(j) * c.n + line : size_t(line) * c.n + j;
  };
  auto out = [&](int kind, int line, int j) {
    size_t r = c.axis == 0 ? j : line, col = c.axis == 0 ? line : j;
    return kind * tile + r * c.cols + col;
  };
  const double eps = std::numeric_limits<float>::epsilon();
  const int block_along = c.axis == 0 ? c.rows : c.cols;
  for (int line = 0; line < lines; ++line) {
    SCOPED_TRACE("line " + std::to_string(line));
    for (int reverse = 0; reverse < 2; ++reverse) {
      // Over the whole line of the block, masked-off elements holding what
      // the kernel puts there (which reversed scans meet first).
      double sum = 0, abs_sum = 0, prod = 1, hi = -INFINITY;
      uint32_t sum_k = 0, squares_k = 0;
      int32_t max_k = INT32_MIN, first_k = 0;
      for (int step = 0; step < block_along; ++step) {
        int j = reverse ? block_along - 1 - step : step;
        bool in = j < along;
        double v = in ? x[at(line, j)] : 0.0;
        int32_t kv = in ? k[at(line, j)] : 0;
        sum += v;
        abs_sum += std::abs(v);
        prod *= in ? double(1.f + float(v) * 0.01f) : 1.0;
        hi = std::max(hi, in ? v : -INFINITY);
        sum_k += uint32_t(kv);
        squares_k += uint32_t(kv * kv);
        max_k = std::max(max_k, in ? kv : -1000000);
        if (step == 0)
          first_k = kv;
        if (!in)
          continue;
        SCOPED_TRACE("element " + std::to_string(j) +
                     (reverse ? " reversed" : ""));
        // Each result is at most ~30 roundings deep in the GPU's tree
        // (in-thread, 5 lane levels, warps, tiles); the CPU backend's
        // sequential sum is within its own error of the reference.
        double sum_tolerance = 32 * eps * abs_sum + 1e-6;
        double prod_tolerance = (4 * (step + 1) + 32) * eps * prod;
        size_t fs = out(reverse, line, j), fp = out(2 + reverse, line, j);
        ASSERT_NEAR(gf[fs], sum, sum_tolerance);
        ASSERT_NEAR(gf[fs], f[fs], sum_tolerance + std::abs(f[fs] - sum));
        ASSERT_NEAR(gf[fp], prod, prod_tolerance);
        ASSERT_NEAR(gf[fp], f[fp], prod_tolerance + std::abs(f[fp] - prod));
        ASSERT_EQ(gf[out(4 + reverse, line, j)], float(hi));
        ASSERT_EQ(gi[out(reverse, line, j)], int32_t(sum_k));
        if (!reverse)
          ASSERT_EQ(gi[out(2, line, j)], int32_t(squares_k));
        else
          ASSERT_EQ(gi[out(3, line, j)], max_k);
        ASSERT_EQ(gi[out(4 + reverse, line, j)], first_k);
      }
    }
  }
  // Integers and maxima are exact: bit for bit the CPU backend's, and
  // nothing outside the matrix was written on either.
  for (int kind : {4, 5}) {
    std::vector<float> g(gf.begin() + kind * tile,
                         gf.begin() + (kind + 1) * tile);
    std::vector<float> h(f.begin() + kind * tile,
                         f.begin() + (kind + 1) * tile);
    EXPECT_TRUE(same_bits(g, h)) << "float kind " << kind;
  }
  EXPECT_TRUE(same_bits(gi, i));
  for (size_t e = 0; e < tile; ++e) {
    if (int(e / c.cols) < c.m && int(e % c.cols) < c.n)
      continue;
    for (int kind = 0; kind < kFloatKinds; ++kind)
      ASSERT_TRUE(std::isnan(gf[kind * tile + e])) << "written: " << e;
  }
}

class GpuScan : public ::testing::TestWithParam<Case> {};

TEST_P(GpuScan, EveryKindMatchesTheCpuBackendAndTheReferences) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const Case c = GetParam();
  ScanRun gpu = fresh_inputs(c), cpu = gpu;
  scan_on_gpu(c, gpu);
  scan_on_cpu(c, cpu);
  expect_scans_right(c, gpu, cpu);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuScan, ::testing::ValuesIn(kCases), name);

// The checks themselves, without a GPU: the CPU backend's scans pass them
// for every shape of the suite (a case whose matrix overflowed its block
// once read other kinds' tiles as its last rows, on either backend).
TEST(GpuScanChecks, AcceptTheCpuBackendsScansOfEveryShape) {
  BLOCC_SEED_TRACE();
  for (const Case &c : kCases) {
    SCOPED_TRACE(name(::testing::TestParamInfo<Case>(c, 0)));
    ScanRun cpu = fresh_inputs(c);
    scan_on_cpu(c, cpu);
    expect_scans_right(c, cpu, cpu);
  }
}

// y_k = a_k y_{k-1} + b_k as a scan of (a, b) pairs: composing the maps of
// two runs, (a1, b1) then (a2, b2), gives (a1 a2, b1 a2 + b2): associative,
// not commutative. In wrapping i32 arithmetic the result is exact whatever
// the grouping, so the GPU's tree must match the sequential order exactly.
std::string affine_scan_ir(int block, bool reverse) {
  std::string text = R"(
func @affine_scan(%a: ptr<i32> {divisibility = 16}, %b: ptr<i32> {divisibility = 16},
                  %ya: ptr<i32> {divisibility = 16}, %yb: ptr<i32> {divisibility = 16}) {
  %r = arange {start = 0, end = BLOCK} : tensor<BLOCKxi32>
  %as = splat %a : tensor<BLOCKxptr<i32>>
  %ap = addptr %as, %r : tensor<BLOCKxptr<i32>>
  %bs = splat %b : tensor<BLOCKxptr<i32>>
  %bp = addptr %bs, %r : tensor<BLOCKxptr<i32>>
  %va = load %ap : tensor<BLOCKxi32>
  %vb = load %bp : tensor<BLOCKxi32>
  %s:2 = scan %va, %vb {axis = 0, reverse = REVERSE} : tensor<BLOCKxi32>, tensor<BLOCKxi32> {
  ^(%a1: i32, %b1: i32, %a2: i32, %b2: i32):
    %a12 = mul %a1, %a2 : i32
    %b1a2 = mul %b1, %a2 : i32
    %b12 = add %b1a2, %b2 : i32
    yield %a12, %b12
  }
  %yas = splat %ya : tensor<BLOCKxptr<i32>>
  %yap = addptr %yas, %r : tensor<BLOCKxptr<i32>>
  store %yap, %s#0
  %ybs = splat %yb : tensor<BLOCKxptr<i32>>
  %ybp = addptr %ybs, %r : tensor<BLOCKxptr<i32>>
  store %ybp, %s#1
  return
}
)";
  text = std::regex_replace(text, std::regex("BLOCK"), std::to_string(block));
  return std::regex_replace(text, std::regex("REVERSE"), reverse ? "1" : "0");
}

TEST(GpuScan, TwoOperandsInTheirOrderForwardAndReversed) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  for (int block : {1, 2, 64, 1024, 4096})
    for (bool reverse : {false, true})
      for (int warps : {1, 4}) {
        SCOPED_TRACE("block " + std::to_string(block) + " reverse " +
                     std::to_string(reverse) + " warps " +
                     std::to_string(warps));
        auto function = ir::parse_function(affine_scan_ir(block, reverse));
        nvptx::CompileOptions options;
        options.num_warps = warps;
        auto kernel = nvptx::compile(*function, options);
        // Odd multipliers keep the products from collapsing to 0.
        auto a = random_values<int32_t>(block, -1000, 1000);
        for (auto &v : a)
          v |= 1;
        auto b = random_values<int32_t>(block, -1000000, 1000000);
        DeviceBuffer<int32_t> da(a), db(b);
        auto dya = poisoned_on_gpu<int32_t>(block);
        auto dyb = poisoned_on_gpu<int32_t>(block);
        nvptx::run(
            *kernel, blocc::Grid(1),
            {device_arg(da), device_arg(db), device_arg(dya), device_arg(dyb)});
        std::vector<int32_t> ya = dya.to_host(), yb = dyb.to_host();
        uint32_t acc_a = 1, acc_b = 0;
        for (int step = 0; step < block; ++step) {
          int j = reverse ? block - 1 - step : step;
          // (acc_a, acc_b) then (a_j, b_j)
          acc_b = acc_b * uint32_t(a[j]) + uint32_t(b[j]);
          acc_a = acc_a * uint32_t(a[j]);
          ASSERT_EQ(uint32_t(ya[j]), acc_a) << "element " << j;
          ASSERT_EQ(uint32_t(yb[j]), acc_b) << "element " << j;
        }
      }
}

int count(const std::string &text, const std::string &pattern) {
  std::regex re(pattern);
  return static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re),
                    std::sregex_iterator()));
}

TEST(GpuScanPtx, ShufflesUpForwardDownInReverseAndMeetInSharedMemory) {
  for (bool reverse : {false, true}) {
    auto function = ir::parse_function(affine_scan_ir(1024, reverse));
    expect_ptx_assembles(*function);
    expect_ptx_assembles(*function, 1);
    std::string ptx = ptx_for(*function);
    // 1024 elements on 4 warps: 4 per thread per tile, two tiles; five
    // shuffle steps and the exclusive shift of two i32 operands per tile.
    EXPECT_EQ(count(ptx, reverse ? R"(shfl\.sync\.down\.b32)"
                                 : R"(shfl\.sync\.up\.b32)"),
              2 * 2 * 6)
        << ptx;
    EXPECT_EQ(count(ptx, reverse ? R"(shfl\.sync\.up\.b32)"
                                 : R"(shfl\.sync\.down\.b32)"),
              0);
    EXPECT_THAT(ptx, ::testing::HasSubstr("shfl.sync.idx.b32"));
    EXPECT_THAT(ptx, ::testing::HasSubstr("st.shared"));
    EXPECT_THAT(ptx, ::testing::Not(::testing::HasSubstr(".local")));
    // One warp: no shared memory (the one barrier orders the two stores).
    std::string one_warp = ptx_for(*function, "sm_90", 1);
    EXPECT_EQ(count(one_warp, R"(bar\.sync)"), 1);
    EXPECT_THAT(one_warp, ::testing::Not(::testing::HasSubstr(".shared")));
  }
}

TEST(GpuScanPtx, EveryShapeOfTheSuiteAssembles) {
  std::vector<float> f;
  std::vector<int32_t> i;
  for (const Case &c :
       {Case{3, 1021, 1, 4, 1024, 4}, Case{3, 1024, 1, 4, 1024, 4},
        Case{2, 4096, 1, 2, 4096, 4}, Case{131, 3, 0, 256, 4, 4},
        Case{100, 16, 0, 128, 16, 2}, Case{3, 2, 0, 4, 2, 8},
        Case{1, 1, 0, 1, 1, 4}}) {
    SCOPED_TRACE(c.rows * 10000 + c.cols);
    expect_ptx_assembles(
        specialization(scans, f, i, f, i, c.m, c.n, c.axis, c.rows, c.cols),
        c.warps);
  }
}

} // namespace
