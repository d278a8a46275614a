// Software-pipelined K loops of dots on tensor cores whose inputs are not
// 16-bit (pipeline_loads.h): tf32 (f32 with input_precision tf32), int8
// into int32 and fp8 (e4m3) into f32. Their tiles keep K fastest, so a
// load is copied ahead (cp.async) only where its global rows run along K:
// A [M, K] row-major always, B when it is read from B^T [N, K] row-major,
// never from B [K, N] row-major (the dot writes that tile itself). For
// every type, orientation of B, 1 to 4 stages and sm_80, sm_89 and sm_90
// (fp8: on the CUDA cores on sm_80, nothing pipelined): the loads the
// layouts stage reports copied ahead, cp.async exactly where they are,
// ldmatrix without .trans, the type's mma.sync, and PTX that ptxas
// assembles, spilling a word at most (below). On a GPU the products, tails of
// M, N and K included, match float64: int8 exactly, fp8 within the f32 sums'
// rounding (on Hopper's warpgroup MMAs, which keep about 14 bits of each
// instruction's sum, within 2^-13 of the sums, as the dot tests bound fp8
// MMAs), tf32 within its inputs' rounding too.
#include "fp8_bytes.h"
#include "nvptx/support.h"

#include <gmock/gmock.h>

#include <cmath>

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

enum class Input { Tf32, Int8, Fp8 };

// C[M, N] = A[M, K] @ B, B held as B[K, N] row-major, or as B^T[N, K]
// row-major where B_ALONG_K; one BM x BN tile per program, K in steps of
// BK, masked loads reading 0 outside the matrices. fp8 arrives as bytes.
template <typename In, typename Out> auto &dtype_matmul() {
  static auto k = bl::kernel(
      "gpu_pipelined_dtype_matmul",
      [](bl::Ptr<In> a, bl::Ptr<In> b, bl::Ptr<Out> c, bl::i32 M, bl::i32 N,
         bl::i32 K, bl::Const<int> BM, bl::Const<int> BN, bl::Const<int> BK,
         bl::Const<bool> FP8, bl::Const<bool> B_ALONG_K) {
        auto r = bl::expand_dims(bl::program_id(0) * BM + bl::arange(0, BM), 1);
        auto n = bl::expand_dims(bl::program_id(1) * BN + bl::arange(0, BN), 0);
        auto ks = bl::arange(0, BK);
        bl::Tensor acc = bl::zeros({BM, BN}, bl::dtype_of<Out>());
        auto precision = std::is_same_v<In, float> ? bl::InputPrecision::TF32
                                                   : bl::InputPrecision::IEEE;
        for (auto k0 : bl::range(0, K, BK)) {
          auto kc = bl::expand_dims(k0 + ks, 0),
               kr = bl::expand_dims(k0 + ks, 1);
          bl::Tensor x = bl::load(a + r * K + kc, (r < M) && (kc < K));
          bl::Tensor y = B_ALONG_K
                             ? bl::load(b + n * K + kr, (kr < K) && (n < N))
                             : bl::load(b + kr * N + n, (kr < K) && (n < N));
          if (FP8) {
            x = bl::bitcast(x, bl::float8e4m3);
            y = bl::bitcast(y, bl::float8e4m3);
          }
          acc = bl::dot(x, y, acc, precision);
        }
        bl::store(c + r * N + n, acc, (r < M) && (n < N));
      });
  return k;
}

struct Tile {
  int bm, bn, warps;
};

struct Case {
  Input input;
  bool b_along_k;
  int stages;
  Tile tile;
};

const char *name_of(Input input) {
  return input == Input::Tf32 ? "tf32" : input == Input::Int8 ? "int8" : "fp8";
}

std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  const Case &c = info.param;
  return std::string(name_of(c.input)) +
         (c.b_along_k ? "_b_along_k" : "_b_along_n") + "_tile" +
         std::to_string(c.tile.bm) + "x" + std::to_string(c.tile.bn) +
         "_warps" + std::to_string(c.tile.warps) + "_stages" +
         std::to_string(c.stages);
}

/// K of a tile: 128 bytes of f32 (four steps of m16n8k8), 64 bytes of
/// 8-bit elements (two steps of m16n8k32).
int block_k(Input input) { return input == Input::Tf32 ? 32 : 64; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (Input input : {Input::Tf32, Input::Int8, Input::Fp8})
    for (bool along_k : {true, false})
      for (int stages = 1; stages <= 4; ++stages)
        for (Tile tile : {Tile{64, 64, 4}, Tile{128, 128, 8}})
          out.push_back({input, along_k, stages, tile});
  return out;
}

/// The specialization of the kernel for `c` on M = 200, N = 136, K = 240
/// (tails of every dimension; K a multiple of 16, so that the masks are
/// alike over each 16-byte copy).
constexpr int kM = 200, kN = 136, kK = 240;

const blocc::ir::Function &function_for(const Case &c) {
  auto of = [&](auto in, auto out) -> const blocc::ir::Function & {
    using In = decltype(in);
    using Out = decltype(out);
    std::vector<In> none;
    std::vector<Out> result;
    return specialization(dtype_matmul<In, Out>(), none, none, result, kM, kN,
                          kK, c.tile.bm, c.tile.bn, block_k(c.input),
                          c.input == Input::Fp8, c.b_along_k);
  };
  switch (c.input) {
  case Input::Tf32:
    return of(float{}, float{});
  case Input::Int8:
    return of(int8_t{}, int32_t{});
  case Input::Fp8:
    break;
  }
  return of(uint8_t{}, float{});
}

const char *mma_of(Input input) {
  switch (input) {
  case Input::Tf32:
    return "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
  case Input::Int8:
    return "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32";
  case Input::Fp8:
    break;
  }
  return "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32";
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size()))
    ++n;
  return n;
}

/// The bytes ptxas -v reports spilled (stored), -1 where it reports none.
int spill_store_bytes(const std::string &report) {
  size_t at = report.find(" bytes spill stores");
  if (at == std::string::npos)
    return -1;
  size_t start = report.rfind(' ', at - 1);
  return std::stoi(report.substr(start + 1, at - start - 1));
}

// ptxas (CUDA 13.0 and 13.5) spills one word in two of these kernels,
// which the bound allows: tf32 with B^T in 2 stages on sm_90 (at 80
// registers: not for want of them), and fp8 with B^T in 128 x 128 tiles on
// 8 warps unpipelined (255 registers before the tiles were swizzled too).
class GpuPipelinedDtypePtx : public ::testing::TestWithParam<Case> {};

TEST_P(GpuPipelinedDtypePtx, CopiesAlongKAheadAndAssembles) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  const Case &c = GetParam();
  const blocc::ir::Function &f = function_for(c);
  for (int sm : {80, 89, 90}) {
    const std::string arch = "sm_" + std::to_string(sm);
    SCOPED_TRACE(arch);
    nvptx::CompileOptions options;
    options.arch = nvptx::GpuArch::parse(arch);
    options.num_warps = c.tile.warps;
    options.num_stages = c.stages;
    nvptx::InspectionRequest request;
    request.layouts = request.ptx = true;
    nvptx::Inspection seen = nvptx::inspect(f, options, request);
    const bool tensor_cores = !(c.input == Input::Fp8 && sm < 89);
    // The stages that fit in half of what the architecture gives a CTA.
    const int64_t bytes = c.input == Input::Tf32 ? 4 : 1;
    const int64_t stage_bytes =
        bytes * block_k(c.input) * (c.tile.bm + (c.b_along_k ? c.tile.bn : 0));
    const int stages = static_cast<int>(std::min<int64_t>(
        c.stages, options.arch.max_shared_bytes() / 2 / stage_bytes));
    const size_t copied =
        stages > 1 && tensor_cores ? (c.b_along_k ? 2 : 1) : 0;
    EXPECT_EQ(count(seen.layouts, "(cp.async)"), copied) << seen.layouts;
    if (copied) {
      EXPECT_THAT(seen.layouts, HasSubstr("pipelined in " +
                                          std::to_string(stages) + " stages"));
      EXPECT_THAT(seen.ptx, HasSubstr("cp.async.cg.shared.global"));
      EXPECT_THAT(seen.ptx, HasSubstr("cp.async.wait_group " +
                                      std::to_string(stages - 2) + ";"));
    } else {
      EXPECT_THAT(seen.ptx, Not(HasSubstr("cp.async")));
    }
    if (tensor_cores) {
      EXPECT_THAT(seen.ptx, HasSubstr("ldmatrix.sync.aligned.m8n8.x4.shared"));
      EXPECT_THAT(seen.ptx, Not(HasSubstr(".trans")));
      EXPECT_THAT(seen.ptx, HasSubstr(mma_of(c.input)));
    }
    EXPECT_THAT(seen.ptx, Not(HasSubstr(".local")));
    if (ptxas()) {
      PtxasResult r = run_ptxas(seen.ptx, arch, "-v");
      EXPECT_TRUE(r.ok) << r.output;
      const int spilled = spill_store_bytes(r.output);
      EXPECT_GE(spilled, 0) << r.output;
      EXPECT_LE(spilled, 4) << r.output;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuPipelinedDtypePtx,
                         ::testing::ValuesIn(cases()), case_name);

// ------------------------------------------------------------- on the GPU

/// Random fp8 e4m3 bytes that are numbers of magnitude at most 8.
std::vector<uint8_t> random_e4m3(size_t n) {
  std::vector<uint8_t> out;
  while (out.size() < n) {
    auto byte = static_cast<uint8_t>(random_values<int>(1, 0, 255)[0]);
    if (blocc::fp8_bytes::is_number(byte, 4) &&
        std::abs(blocc::fp8_bytes::decode(byte, 4)) <= 8)
      out.push_back(byte);
  }
  return out;
}

template <typename T> double value_of(T x) {
  if constexpr (std::is_same_v<T, uint8_t>)
    return blocc::fp8_bytes::decode(x, 4);
  else if constexpr (std::is_integral_v<T>)
    return static_cast<double>(x);
  else
    return as_double(x);
}

/// Runs `c` on the GPU and checks every element against float64: exactly
/// for integers, else within the f32 sums' K + 2 roundings of the sum of
/// |products| (fp8: of 2^-13 each) and tf32's 2^-10 of each product.
template <typename In, typename Out> void run(const Case &c) {
  const size_t a_size = size_t(kM) * kK, b_size = size_t(kK) * kN;
  std::vector<In> a, b; // b as the kernel reads it: [K, N] or [N, K]
  if constexpr (std::is_same_v<In, uint8_t>) {
    a = random_e4m3(a_size);
    b = random_e4m3(b_size);
  } else if constexpr (std::is_integral_v<In>) {
    a = random_values<In>(a_size, -128, 127);
    b = random_values<In>(b_size, -128, 127);
  } else {
    a = random_values<In>(a_size, -2, 2);
    b = random_values<In>(b_size, -2, 2);
  }
  DeviceBuffer<In> da(a), db(b);
  auto dc = poisoned_on_gpu<Out>(size_t(kM) * kN);
  LaunchOptions options = on(Backend::Gpu, c.tile.warps);
  options.num_stages = c.stages;
  bl::Grid grid{bl::cdiv(kM, c.tile.bm), bl::cdiv(kN, c.tile.bn)};
  dtype_matmul<In, Out>()[grid].with(options)(
      da, db, dc, kM, kN, kK, c.tile.bm, c.tile.bn, block_k(c.input),
      c.input == Input::Fp8, c.b_along_k);
  std::vector<Out> got = dc.to_host();
  ASSERT_TRUE(all_written(got));
  const double per_product = c.input == Input::Tf32 ? 0x1p-10 : 0;
  const double unit = c.input == Input::Fp8 ? 0x1p-13 : 0x1p-24;
  const double per_sum = std::is_integral_v<Out> ? 0 : (kK + 2) * unit;
  for (int i = 0; i < kM; ++i)
    for (int j = 0; j < kN; ++j) {
      double want = 0, scale = 0;
      for (int q = 0; q < kK; ++q) {
        size_t bq = c.b_along_k ? size_t(j) * kK + q : size_t(q) * kN + j;
        double product = value_of(a[size_t(i) * kK + q]) * value_of(b[bq]);
        want += product;
        scale += std::abs(product);
      }
      double value = value_of(got[size_t(i) * kN + j]);
      ASSERT_LE(std::abs(value - want), (per_product + per_sum) * scale)
          << "element (" << i << ", " << j << "): got " << value << ", want "
          << want;
    }
}

class GpuPipelinedDtype : public ::testing::TestWithParam<Case> {};

TEST_P(GpuPipelinedDtype, MatchesFloat64) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const Case &c = GetParam();
  switch (c.input) {
  case Input::Tf32:
    return run<float, float>(c);
  case Input::Int8:
    return run<int8_t, int32_t>(c);
  case Input::Fp8:
    return run<uint8_t, float>(c);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuPipelinedDtype,
                         ::testing::ValuesIn(cases()), case_name);

} // namespace
