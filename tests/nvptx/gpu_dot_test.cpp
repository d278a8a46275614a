// bl::dot on the GPU (backends/nvptx/lower_dot.cpp: tensor cores where
// they apply, fused multiply-adds otherwise) for
// every input/accumulator combination the frontend accepts: float32 (ieee,
// tf32, tf32x3 — all computed as ieee, as on the CPU backend), float16 into
// float32 and float16, bfloat16, float64, int8 into int32, and fp8 (the two
// formats mixed) into float32 and float16. A tiled matmul whose K loop
// carries the accumulator, with masked loads at odd sizes (1, primes, not
// multiples of the tiles), an optional starting accumulator C0, and
// poisoned outputs; a batched (rank-3) dot. On the CUDA cores the GPU
// accumulates every element by fused multiply-adds in increasing k, as the
// interpreter and the CPU backend do, so results must match the CPU
// backend bit for bit (integers and floats alike); on tensor cores
// (mma_layouts.h: f16 and bf16 into f32, f16 into f16 (within K + 2
// roundings of f16 too), f32 as tf32 or tf32x3, int8
// into int32 (exact: the bound is 0 and integer sums wrap alike), fp8 into
// f32 on sm_89 and newer (sm_80 keeps them on the CUDA cores), on whole
// 16 x 8 tiles per warp, K in 32 bytes) the sums come in the hardware's
// order. Either way a float64 reference bounds them within (K + 2)
// roundings of the accumulator, plus, for tf32, the rounding of the
// inputs (each product within 2^-10 of itself; tf32x3, whose dropped
// small x small and rounded remainders leave 2^-20, adds three MMAs'
// sums). Kernels run where a GPU is present (skipped, and reported so,
// elsewhere); their PTX is assembled by ptxas for sm_80 and sm_90
// everywhere (and sm_89 for the tensor cores' tiles), holds the MMA the
// dot's types take, and the large tiles must not spill.
#include "backends/nvptx/mma_layouts.h"
#include "fp8_bytes.h"
#include "nvptx/support.h"

#include <functional>

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

// ------------------------------------------------------------- host values
// fp8 has no host type: bytes, bitcast in the kernel. 0: not fp8.
enum Fp8 { kNotFp8 = 0, kE4M3 = 1, kE5M2 = 2 };

bl::DType fp8_dtype(int kind) {
  return kind == kE4M3 ? bl::float8e4m3 : bl::float8e5m2;
}

int exponent_bits(int kind) { return kind == kE4M3 ? 4 : 5; }

/// Random fp8 bytes that are numbers of magnitude at most `limit`.
std::vector<uint8_t> random_fp8(size_t n, int kind, double limit) {
  std::vector<uint8_t> out;
  while (out.size() < n) {
    auto byte = static_cast<uint8_t>(random_values<int>(1, 0, 255)[0]);
    if (blocc::fp8_bytes::is_number(byte, exponent_bits(kind)) &&
        std::abs(blocc::fp8_bytes::decode(byte, exponent_bits(kind))) <= limit)
      out.push_back(byte);
  }
  return out;
}

/// Random inputs exact in their type (fp8: bytes of numbers, small enough
/// that K products of them add up within float16's range when Out is).
template <typename T, typename Out = float>
std::vector<T> random_inputs(size_t n, int fp8) {
  if constexpr (std::is_same_v<T, uint8_t>)
    return random_fp8(n, fp8, sizeof(Out) == 2 ? 8 : INFINITY);
  else if constexpr (std::is_integral_v<T>)
    return random_values<T>(n, -128, 127);
  else
    return random_values<T>(n, -2, 2);
}

template <typename T> std::vector<T> random_accumulator(size_t n) {
  if constexpr (std::is_integral_v<T>) // beyond int8 products' range
    return random_values<T>(n, -1000000, 1000000);
  else
    return random_values<T>(n, -4, 4);
}

template <typename T> double value_of(T x, int fp8) {
  if constexpr (std::is_same_v<T, uint8_t>)
    return blocc::fp8_bytes::decode(x, exponent_bits(fp8));
  else if constexpr (std::is_integral_v<T>)
    return static_cast<double>(x);
  else
    return as_double(x);
}

// ----------------------------------------------------------------- kernels
// C[M, N] = A[M, K] @ B[K, N] (+ C0), row-major, one BM x BN tile per
// program, K in steps of BK with the accumulator carried; masked loads
// read 0 outside the matrices.
template <typename In, typename Out> auto &matmul_kernel() {
  static auto k = bl::kernel(
      "gpu_matmul",
      [](bl::Ptr<In> a, bl::Ptr<In> b, bl::Ptr<Out> c0, bl::Ptr<Out> c,
         bl::i32 M, bl::i32 N, bl::i32 K, bl::Const<int> BM, bl::Const<int> BN,
         bl::Const<int> BK, bl::Const<int> A_FP8, bl::Const<int> B_FP8,
         bl::Const<int> PRECISION, bl::Const<bool> HAS_C0) {
        auto r = bl::expand_dims(bl::program_id(0) * BM + bl::arange(0, BM), 1);
        auto n = bl::expand_dims(bl::program_id(1) * BN + bl::arange(0, BN), 0);
        auto ks = bl::arange(0, BK);
        auto out = (r < M) && (n < N);
        bl::Tensor acc = bl::zeros({BM, BN}, bl::dtype_of<Out>());
        if (HAS_C0)
          acc = bl::load(c0 + r * N + n, out);
        auto precision = static_cast<bl::InputPrecision>(int(PRECISION));
        for (auto k0 : bl::range(0, K, BK)) {
          auto kc = bl::expand_dims(k0 + ks, 0),
               kr = bl::expand_dims(k0 + ks, 1);
          bl::Tensor x = bl::load(a + r * K + kc, (r < M) && (kc < K));
          bl::Tensor y = bl::load(b + kr * N + n, (kr < K) && (n < N));
          if (A_FP8)
            x = bl::bitcast(x, fp8_dtype(A_FP8));
          if (B_FP8)
            y = bl::bitcast(y, fp8_dtype(B_FP8));
          acc = bl::dot(x, y, acc, precision);
        }
        bl::store(c + r * N + n, acc, out);
      });
  return k;
}

// [B, M, K] @ [B, K, N] in one rank-3 dot (K <= BK).
template <typename In, typename Out> auto &batched_kernel() {
  static auto k =
      bl::kernel("gpu_batched_dot",
                 [](bl::Ptr<In> a, bl::Ptr<In> b, bl::Ptr<Out> c, bl::i32 M,
                    bl::i32 N, bl::i32 K, bl::Const<int> B, bl::Const<int> BM,
                    bl::Const<int> BN, bl::Const<int> BK) {
                   auto along = [](int size, int axis) {
                     auto v = bl::arange(0, size);
                     for (int d = 0; d < 3; ++d)
                       if (d != axis)
                         v = bl::expand_dims(v, d);
                     return v;
                   };
                   auto p = along(B, 0), r = along(BM, 1), kr = along(BK, 1);
                   auto kc = along(BK, 2), n = along(BN, 2);
                   auto x = bl::load(a + p * (M * K) + r * K + kc,
                                     (p < B) && (r < M) && (kc < K));
                   auto y = bl::load(b + p * (K * N) + kr * N + n,
                                     (p < B) && (kr < K) && (n < N));
                   bl::store(c + p * (M * N) + r * N + n,
                             bl::dot(x, y, bl::InputPrecision::IEEE),
                             (p < B) && (r < M) && (n < N));
                 });
  return k;
}

// ------------------------------------------------------------ the checks
struct Shape {
  int m, n, k, bm, bn, bk, warps;
};

std::string shape_name(const Shape &s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k) + "_tile" + std::to_string(s.bm) + "x" +
         std::to_string(s.bn) + "x" + std::to_string(s.bk) + "_warps" +
         std::to_string(s.warps);
}

/// What one combination runs: inputs In (fp8 bytes where a_fp8/b_fp8),
/// accumulator Out.
struct Combo {
  std::string name;
  bl::InputPrecision precision = bl::InputPrecision::IEEE;
  bool with_c0 = false;
  int a_fp8 = kNotFp8, b_fp8 = kNotFp8;
  double unit = 0; // unit roundoff of the accumulator (0: exact)
  double tiny = 0; // half its smallest subnormal: a rounding's error there
  std::function<void(const Combo &, const Shape &)> run, ptx;
};

/// 8-bit inputs need K tiles of at least 32.
Shape for_inputs(Shape s, size_t input_bytes) {
  if (input_bytes == 1)
    s.bk = std::max(s.bk, 32);
  return s;
}

/// The mma.sync the dot runs on for compute capability `sm` (the rules
/// of mma_layouts.h, restated): f16 or bf16 inputs into f32, f16 into
/// f16 (m16n8k16),
/// f32 as tf32 unless IEEE (m16n8k8), int8 into int32 and fp8 into f32
/// from sm_89 on (m16n8k32); M in 16s, K in the instruction's
/// K, warps splitting the tile into whole 16 x 8 tiles. "" on CUDA cores.
template <typename In, typename Out>
std::string tensor_core_mma(const Combo &combo, const Shape &s, int sm) {
  constexpr bool half_inputs =
      std::is_same_v<In, bl::half> || std::is_same_v<In, bl::bfloat16_t>;
  constexpr bool f32_out = std::is_same_v<Out, float>;
  std::string types;
  int k = 0;
  auto fp8_type = [](int kind) { return kind == kE4M3 ? "e4m3" : "e5m2"; };
  if (combo.a_fp8) {
    if (f32_out && sm >= 89) {
      types = std::string("f32.") + fp8_type(combo.a_fp8) + "." +
              fp8_type(combo.b_fp8) + ".f32";
      k = 32;
    }
  } else if (half_inputs && f32_out) {
    const char *in = std::is_same_v<In, bl::half> ? "f16" : "bf16";
    types = std::string("f32.") + in + "." + in + ".f32";
    k = 16;
  } else if (std::is_same_v<In, bl::half> && std::is_same_v<Out, bl::half>) {
    types = "f16.f16.f16.f16";
    k = 16;
  } else if (std::is_same_v<In, float> &&
             combo.precision != bl::InputPrecision::IEEE) {
    types = "f32.tf32.tf32.f32";
    k = 8;
  } else if (std::is_same_v<In, int8_t>) {
    types = "s32.s8.s8.s32";
    k = 32;
  }
  if (types.empty() || s.bm % 16 != 0 || s.bk % k != 0 ||
      !blocc::nvptx::mma_warp_grid(s.bm, s.bn, s.warps))
    return "";
  return "mma.sync.aligned.m16n8k" + std::to_string(k) + ".row.col." + types;
}

template <typename In, typename Out>
bool on_tensor_cores(const Combo &combo, const Shape &s, int sm) {
  return !tensor_core_mma<In, Out>(combo, s, sm).empty();
}

/// What the tensor cores add to the error bound: the rounding of each
/// product's inputs (relative to |a b|), how many sums of the accumulator
/// each k takes, and the unit roundoff of those sums where it is not the
/// accumulator's: fp8 MMAs are reported (DeepSeek-V3's report on Hopper)
/// to add their products keeping about 14 bits, so their sums are bounded
/// with 2^-13 (still far below what a misplaced fragment element costs).
struct TensorCoreError {
  double inputs = 0;
  int sums_per_k = 1;
  double unit = 0; // 0: the accumulator's
};
TensorCoreError tensor_core_error(const Combo &combo, bool f32_inputs) {
  if (combo.a_fp8)
    return {0, 1, 0x1p-13};
  if (!f32_inputs)
    return {};
  if (combo.precision == bl::InputPrecision::TF32x3)
    return {0x1p-20, 3};
  return {0x1p-10 + 0x1p-22, 1};
}

template <typename In, typename Out>
void run_matmul(const Combo &combo, const Shape &shape) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const Shape s = for_inputs(shape, sizeof(In));
  const int sm = blocc::nvptx::arch_for_device(0).sm;
  auto a = random_inputs<In, Out>(size_t(s.m) * s.k, combo.a_fp8);
  auto b = random_inputs<In, Out>(size_t(s.k) * s.n, combo.b_fp8);
  auto c0 = combo.with_c0 ? random_accumulator<Out>(size_t(s.m) * s.n)
                          : std::vector<Out>(1);
  bl::Grid grid{bl::cdiv(s.m, s.bm), bl::cdiv(s.n, s.bn)};
  auto &kernel = matmul_kernel<In, Out>();
  DeviceBuffer<In> da(a), db(b);
  DeviceBuffer<Out> dc0(c0);
  auto dc = poisoned_on_gpu<Out>(size_t(s.m) * s.n);
  kernel[grid].with(on(Backend::Gpu, s.warps))(
      da, db, dc0, dc, s.m, s.n, s.k, s.bm, s.bn, s.bk, combo.a_fp8,
      combo.b_fp8, int(combo.precision), combo.with_c0);
  auto cpu = poisoned<Out>(size_t(s.m) * s.n);
  kernel[grid].with(kCpu)(a, b, c0, cpu, s.m, s.n, s.k, s.bm, s.bn, s.bk,
                          combo.a_fp8, combo.b_fp8, int(combo.precision),
                          combo.with_c0);
  std::vector<Out> gpu = dc.to_host();
  EXPECT_TRUE(all_written(gpu));
  // The tensor cores add the products in their own order: the same
  // bound (widened by tf32's rounding of the inputs), not the same bits.
  const bool tensor_cores = on_tensor_cores<In, Out>(combo, s, sm);
  TensorCoreError tc;
  if (!tensor_cores) {
    EXPECT_TRUE(same_bits(gpu, cpu));
  } else {
    tc = tensor_core_error(combo, std::is_same_v<In, float>);
  }
  // float64 reference: |error| <= (K + 2) (u sum_k |a_ik b_kj| (+ |c0_ij|)
  // + tiny), K + 2 roundings (the products and sums, C0, the store); on
  // tensor cores, plus the inputs' rounding of each product.
  for (int i = 0; i < s.m; ++i)
    for (int j = 0; j < s.n; ++j) {
      size_t o = size_t(i) * s.n + j;
      double sum = combo.with_c0 ? value_of(c0[o], 0) : 0;
      double scale = std::abs(sum);
      for (int q = 0; q < s.k; ++q) {
        double product = value_of(a[size_t(i) * s.k + q], combo.a_fp8) *
                         value_of(b[size_t(q) * s.n + j], combo.b_fp8);
        sum += product;
        scale += std::abs(product);
      }
      double got = value_of(gpu[o], 0);
      const double unit = tc.unit ? tc.unit : combo.unit;
      ASSERT_LE(std::abs(got - sum),
                tc.inputs * scale +
                    (tc.sums_per_k * s.k + 2) * (unit * scale + combo.tiny))
          << "element (" << i << ", " << j << "): got " << got << ", want "
          << sum;
    }
}

template <typename In, typename Out>
const ir::Function &matmul_specialization(const Combo &combo,
                                          const Shape &shape) {
  const Shape s = for_inputs(shape, sizeof(In));
  std::vector<In> a, b;
  std::vector<Out> c;
  return specialization(matmul_kernel<In, Out>(), a, b, c, c, s.m, s.n, s.k,
                        s.bm, s.bn, s.bk, combo.a_fp8, combo.b_fp8,
                        int(combo.precision), combo.with_c0);
}

/// ptxas -v's report for `ptx`, or "" where it spills nothing and uses
/// no stack.
std::string spills(const std::string &ptx, const std::string &arch) {
  PtxasResult r = run_ptxas(ptx, arch, "-v");
  bool clean =
      r.ok && r.output.find(" 0 bytes stack frame, 0 bytes spill stores, 0 "
                            "bytes spill loads") != std::string::npos;
  return clean ? "" : r.output;
}

template <typename In, typename Out>
void check_ptx(const Combo &combo, const Shape &shape) {
  const ir::Function &f = matmul_specialization<In, Out>(combo, shape);
  expect_ptx_assembles(f, shape.warps);
  // Known exception: with C0 on 4 warps (128 accumulator registers), the
  // output's masks and row offsets, computed before the K loop for the
  // load of C0 and reused by the store after it, stay live across the loop
  // beside the tiles of A and B loaded into registers, and ptxas spills a
  // few registers (up to ~200 bytes at sizes that are not multiples of 16,
  // where every element has its own address and mask).
  // The narrow tiles' 16 warps leave 128 registers a thread, fewer than
  // their tiles of A and B need on the way to shared memory: they are
  // there for the narrow staging's results, not its speed.
  // Known exception: 8-bit inputs on tensor cores in 128 x 128 tiles: B's
  // bytes, held along N, are written to shared memory one at a time with
  // K fastest (ldmatrix cannot transpose bytes), and ptxas spills a word
  // (4 bytes) on the way (int8 on 8 warps for sm_80, fp8 on 4 for sm_90).
  const bool bytes_in_large_tiles =
      sizeof(In) == 1 && shape.bm == 128 && shape.bn == 128;
  // Known exception: tf32 in 128 x 128 tiles on 4 warps (128 accumulator
  // registers beside B's f32, held along N on the way to its tile) used
  // some 250 registers; the swizzled tiles' row addresses (up to four a
  // side, one per phase pattern of K's steps) and A's copies ahead
  // (cp.async of 4 bytes where K has a tail) take it past 255, and ptxas
  // spills 8 to 40 bytes. On 8 warps it does not spill.
  const bool tf32_on_4_warps = combo.precision == bl::InputPrecision::TF32 &&
                               shape.bm == 128 && shape.bn == 128 &&
                               shape.warps == 4;
  const bool spill_free =
      !(combo.with_c0 && shape.warps == 4) && shape.warps <= 8;
  // Ada (sm_89) has the same tensor-core instructions (and fp8's): its
  // PTX assembles.
  const Shape s = for_inputs(shape, sizeof(In));
  for (int sm : {80, 89, 90}) {
    const std::string arch = "sm_" + std::to_string(sm);
    const std::string mma = tensor_core_mma<In, Out>(combo, s, sm);
    // sm_89 for the tensor cores' tiles only (but for the 256-deep tiles,
    // whose inputs need more shared memory than sm_89 allows a CTA).
    if (sm == 89 && (mma.empty() || shape.bk > 64))
      continue;
    std::string ptx = ptx_for(f, arch, shape.warps);
    EXPECT_THAT(ptx, ::testing::Not(::testing::HasSubstr(".local"))) << arch;
    // The tiles of A and B are read from shared memory: by ldmatrix for
    // tensor cores, by ld.shared for CUDA cores.
    EXPECT_THAT(ptx, ::testing::ContainsRegex("ld\\.shared|ldmatrix")) << arch;
    if (!mma.empty()) {
      EXPECT_THAT(ptx, ::testing::HasSubstr(mma)) << arch;
    } else {
      EXPECT_THAT(ptx, ::testing::Not(::testing::HasSubstr("mma.sync")))
          << arch;
    }
    if (ptxas() && sm == 89) {
      EXPECT_EQ(ptxas_errors(ptx, arch), "");
    }
    if (ptxas() && sm != 89 && spill_free && !tf32_on_4_warps &&
        !(bytes_in_large_tiles && !mma.empty())) {
      EXPECT_EQ(spills(ptx, arch), "") << arch;
    }
  }
}

constexpr double kF64 = 0x1p-53, kF32 = 0x1p-24, kF16 = 0x1p-11;

template <typename In, typename Out>
Combo combo(std::string name, double unit,
            bl::InputPrecision precision = bl::InputPrecision::IEEE,
            bool with_c0 = false, int a_fp8 = kNotFp8, int b_fp8 = kNotFp8) {
  double tiny = unit == kF16 ? 0x1p-25 : unit == kF32 ? 0x1p-150 : 0;
  return Combo{
      std::move(name),     precision,         with_c0, a_fp8, b_fp8, unit, tiny,
      run_matmul<In, Out>, check_ptx<In, Out>};
}

std::vector<Combo> combos(bool with_float64) {
  using P = bl::InputPrecision;
  std::vector<Combo> out = {
      combo<float, float>("f32_ieee", kF32),
      combo<float, float>("f32_tf32", kF32, P::TF32),
      combo<float, float>("f32_tf32x3_c0", kF32, P::TF32x3, true),
      combo<bl::half, float>("f16_f32", kF32),
      combo<bl::half, float>("f16_f32_c0", kF32, P::TF32, true),
      combo<bl::half, bl::half>("f16_f16_c0", kF16, P::TF32, true),
      combo<bl::bfloat16_t, float>("bf16_f32_c0", kF32, P::TF32, true),
      combo<int8_t, int32_t>("i8_i32", 0),
      combo<int8_t, int32_t>("i8_i32_c0", 0, P::TF32, true),
      combo<uint8_t, float>("e4m3_e5m2_f32", kF32, P::TF32, false, kE4M3,
                            kE5M2),
      combo<uint8_t, bl::half>("e5m2_e4m3_f16_c0", kF16, P::TF32, true, kE5M2,
                               kE4M3),
  };
  if (with_float64)
    out.push_back(combo<double, double>("f64_c0", kF64, P::TF32, true));
  return out;
}

// One tile of one element; odd sizes with a partial last K step; a single
// K step; several programs with replicas (16 x 16 on 4 warps).
const Shape kSmall[] = {{1, 1, 1, 16, 16, 16, 4},
                        {37, 45, 70, 16, 32, 32, 4},
                        {100, 67, 50, 64, 64, 16, 2},
                        {29, 17, 97, 32, 16, 32, 1}};
// The tiles a matmul uses: 128 x 128 (x 32) on 4 and 8 warps, with sizes
// that are multiples of 16 (vector loads and stores) and not; 64 x 128;
// 128 x 128 x 64, whose inputs need more than 48 KB of shared memory in
// f32 (dynamic shared memory). Not float64: 128 x 128 accumulators of it
// would take 256 registers a thread on 4 warps.
const Shape kLarge[] = {{130, 140, 70, 128, 128, 32, 4},
                        {256, 384, 96, 128, 128, 32, 4},
                        {257, 129, 64, 128, 128, 32, 8},
                        {67, 300, 40, 64, 128, 32, 4},
                        {200, 150, 130, 128, 128, 64, 8}};
// Inputs whose f32 form exceeds what sm_90 allows a CTA (268 KB): kept in
// their own type (fp8 as f16) and converted as they are read. 16 warps, so
// that the tiles of A and B fit in registers on their way to shared memory.
const Shape kNarrow[] = {{150, 140, 300, 128, 128, 256, 16}};

struct Param {
  Combo combo;
  Shape shape;
};

void PrintTo(const Param &p, std::ostream *os) {
  *os << p.combo.name << " " << shape_name(p.shape);
}

/// Every combination (float64 where `with_float64`; only those with
/// inputs narrower than 4 bytes where `narrow_only`) on every shape.
std::vector<Param> params(const Shape *begin, const Shape *end,
                          bool with_float64, bool narrow_only = false) {
  std::vector<Param> out;
  for (const Combo &c : combos(with_float64)) {
    if (narrow_only && c.name.rfind("f32_", 0) == 0)
      continue;
    for (const Shape *s = begin; s != end; ++s)
      out.push_back({c, *s});
  }
  return out;
}

std::string param_name(const ::testing::TestParamInfo<Param> &info) {
  return info.param.combo.name + "_" + shape_name(info.param.shape);
}

class GpuDot : public ::testing::TestWithParam<Param> {};

TEST_P(GpuDot, MatchesTheCpuBackendBitForBitAndFloat64) {
  GetParam().combo.run(GetParam().combo, GetParam().shape);
}

INSTANTIATE_TEST_SUITE_P(Small, GpuDot,
                         ::testing::ValuesIn(params(std::begin(kSmall),
                                                    std::end(kSmall), true)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Large, GpuDot,
                         ::testing::ValuesIn(params(std::begin(kLarge),
                                                    std::end(kLarge), false)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Narrow, GpuDot,
                         ::testing::ValuesIn(params(std::begin(kNarrow),
                                                    std::end(kNarrow), false,
                                                    true)),
                         param_name);

// PTX for every combination on an odd shape and on the large tiles:
// assembles for sm_80 and sm_90, no local memory, no spills (ptxas -v).
class GpuDotPtx : public ::testing::TestWithParam<Param> {};

TEST_P(GpuDotPtx, AssemblesWithoutSpills) {
  GetParam().combo.ptx(GetParam().combo, GetParam().shape);
}

INSTANTIATE_TEST_SUITE_P(Small, GpuDotPtx,
                         ::testing::ValuesIn(params(&kSmall[1], &kSmall[2],
                                                    true)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Large, GpuDotPtx,
                         ::testing::ValuesIn(params(&kLarge[0], &kLarge[3],
                                                    false)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Dynamic, GpuDotPtx,
                         ::testing::ValuesIn(params(&kLarge[4], &kLarge[5],
                                                    false)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Narrow, GpuDotPtx,
                         ::testing::ValuesIn(params(std::begin(kNarrow),
                                                    std::end(kNarrow), false,
                                                    true)),
                         param_name);

// ----------------------------------------------------------------- batched
template <typename In, typename Out> void check_batched(int warps) {
  const int batch = 2, m = 19, n = 16, k = 23, bm = 32, bn = 16, bk = 32;
  std::vector<In> host_a, host_b;
  std::vector<Out> host_c;
  auto &kernel = batched_kernel<In, Out>();
  const ir::Function &f = specialization(kernel, host_a, host_b, host_c, m, n,
                                         k, batch, bm, bn, bk);
  expect_ptx_assembles(f, warps);
  if (!cuda::is_available())
    GTEST_SKIP() << "no GPU: " << cuda::unavailable_reason();
  BLOCC_SEED_TRACE();
  auto a = random_inputs<In>(size_t(batch) * m * k, kNotFp8);
  auto b = random_inputs<In>(size_t(batch) * k * n, kNotFp8);
  DeviceBuffer<In> da(a), db(b);
  auto dc = poisoned_on_gpu<Out>(size_t(batch) * m * n);
  kernel[{1}].with(on(Backend::Gpu, warps))(da, db, dc, m, n, k, batch, bm, bn,
                                            bk);
  auto cpu = poisoned<Out>(size_t(batch) * m * n);
  kernel[{1}].with(kCpu)(a, b, cpu, m, n, k, batch, bm, bn, bk);
  std::vector<Out> gpu = dc.to_host();
  EXPECT_TRUE(all_written(gpu));
  EXPECT_TRUE(same_bits(gpu, cpu));
  for (int p = 0; p < batch; ++p)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double sum = 0, scale = 0;
        for (int q = 0; q < k; ++q) {
          double product = value_of(a[(size_t(p) * m + i) * k + q], 0) *
                           value_of(b[(size_t(p) * k + q) * n + j], 0);
          sum += product;
          scale += std::abs(product);
        }
        double got = value_of(gpu[(size_t(p) * m + i) * n + j], 0);
        ASSERT_LE(std::abs(got - sum), (k + 2) * kF32 * scale)
            << "batch " << p << " element (" << i << ", " << j << ")";
      }
}

TEST(GpuDotBatched, Float32EachBatchIsItsOwnProduct) {
  check_batched<float, float>(4);
}
TEST(GpuDotBatched, Float16IntoFloat32OnTwoWarps) {
  check_batched<bl::half, float>(2);
}

// ------------------------------------------------------------------ errors
// Inputs beyond what the architecture allows a CTA in shared memory (sm_90:
// 227 KB): an error naming the dot and its line.
auto too_big = bl::kernel("too_big", [](bl::Ptr<float> a, bl::Ptr<float> c) {
  auto r = bl::expand_dims(bl::arange(0, 256), 1);
  auto k = bl::expand_dims(bl::arange(0, 256), 0);
  auto x = bl::load(a + r * 256 + k);
  bl::store(c + r * 256 + k, bl::dot(x, x, bl::InputPrecision::IEEE));
});

TEST(GpuDotErrors, SharedMemoryBeyondTheArchitecturesLimitNamesTheDot) {
  std::vector<float> a, c;
  const ir::Function &f = specialization(too_big, a, c);
  std::string message = error_of([&] { ptx_for(f, "sm_90"); });
  EXPECT_THAT(message, ::testing::HasSubstr("dot at gpu_dot_test.cpp:"));
  EXPECT_THAT(message,
              ::testing::HasSubstr("bytes of shared memory for its inputs, "
                                   "more than the 232448 bytes sm_90 allows"));
}

} // namespace
