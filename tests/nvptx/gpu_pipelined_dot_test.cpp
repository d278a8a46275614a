// Software-pipelined K loops (backends/nvptx/pipeline_loads.h,
// loop_pipeline.h): a matmul written as tutorial 03 writes it (pointers
// carried by the loop and advanced by a step, masked loads with other 0)
// on tensor cores, in 1 to 4 stages, with trip counts from 0 (K = 0) to
// more than the stages, tails of M, N and K (K a multiple of 16, so that
// the masks are alike over each 16-byte copy), 2, 4 and 8 warps, f16 and
// bf16. Results against a float64 product within the f32 accumulator's
// rounding bound, outputs poisoned first. The PTX has cp.async exactly
// where the loop is pipelined (2 stages or more, K's masks whole per
// copy), assembles for sm_80, sm_89 and sm_90, and spills nothing.
#include "nvptx/matmul_cases.h"

#include <algorithm>

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

template <typename T> auto &pipelined_matmul() {
  static auto k = bl::kernel(
      "gpu_pipelined_matmul",
      [](bl::Ptr<T> a, bl::Ptr<T> b, bl::Ptr<float> c, bl::i32 M, bl::i32 N,
         bl::i32 K, bl::Const<int> BM, bl::Const<int> BN, bl::Const<int> BK) {
        auto rows =
            bl::expand_dims(bl::program_id(0) * BM + bl::arange(0, BM), 1);
        auto cols =
            bl::expand_dims(bl::program_id(1) * BN + bl::arange(0, BN), 0);
        auto k_row = bl::expand_dims(bl::arange(0, BK), 0);
        auto k_col = bl::expand_dims(bl::arange(0, BK), 1);
        auto a_tile = a + rows * K + k_row;
        auto b_tile = b + k_col * N + cols;
        auto acc = bl::zeros({BM, BN}, bl::float32);
        for (auto k : bl::range(0, K, BK)) {
          auto x = bl::load(a_tile, (rows < M) & (k_row < K - k), 0.f);
          auto y = bl::load(b_tile, (k_col < K - k) & (cols < N), 0.f);
          acc = bl::dot(x, y, acc);
          a_tile = a_tile + BK;
          b_tile = b_tile + BK * N;
        }
        bl::store(c + rows * N + cols, acc, (rows < M) & (cols < N));
      });
  return k;
}

// C = sum over j of A @ B_j: one A tile loaded before the loop (written
// into shared memory once), the B_j tiles (BK x BN blocks of a
// (J * BK) x N matrix) pipelined.
template <typename T> auto &invariant_a_matmul() {
  static auto k = bl::kernel(
      "gpu_invariant_a_matmul",
      [](bl::Ptr<T> a, bl::Ptr<T> b, bl::Ptr<float> c, bl::i32 M, bl::i32 N,
         bl::i32 J, bl::Const<int> BM, bl::Const<int> BN, bl::Const<int> BK) {
        auto rows =
            bl::expand_dims(bl::program_id(0) * BM + bl::arange(0, BM), 1);
        auto cols =
            bl::expand_dims(bl::program_id(1) * BN + bl::arange(0, BN), 0);
        auto k_row = bl::expand_dims(bl::arange(0, BK), 0);
        auto k_col = bl::expand_dims(bl::arange(0, BK), 1);
        auto x = bl::load(a + rows * BK + k_row, rows < M, 0.f);
        auto acc = bl::zeros({BM, BN}, bl::float32);
        for (auto j : bl::range(0, J, 1)) {
          auto y = bl::load(b + (j * BK + k_col) * N + cols, cols < N, 0.f);
          acc = bl::dot(x, y, acc);
        }
        bl::store(c + rows * N + cols, acc, (rows < M) & (cols < N));
      });
  return k;
}

std::vector<MatmulCase> cases() {
  // Many iterations; K, M and N tails; one iteration, fewer than the
  // stages; none at all; 8 warps; 2 warps on small tiles.
  const MatmulCase shapes[] = {{256, 256, 256, 128, 128, 32, 4, 0, false},
                               {130, 200, 48, 64, 64, 32, 4, 0, false},
                               {64, 64, 16, 64, 64, 32, 4, 0, false},
                               {128, 128, 0, 128, 128, 32, 4, 0, false},
                               {200, 72, 208, 128, 64, 64, 8, 0, false},
                               {97, 50, 176, 32, 32, 32, 2, 0, false}};
  return in_every_stage_count({std::begin(shapes), std::end(shapes)});
}

class GpuPipelinedDot : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(GpuPipelinedDot, MatchesFloat64) {
  expect_gpu_matmul_in_its_type_matches_float64(
      [](auto t) -> auto & { return pipelined_matmul<decltype(t)>(); },
      GetParam());
}

INSTANTIATE_TEST_SUITE_P(Stages, GpuPipelinedDot, ::testing::ValuesIn(cases()),
                         matmul_case_name);

// A computed before the loop, B pipelined, 1 to 4 stages: every
// iteration multiplies the same A.
TEST(GpuPipelinedDotInvariant, ATileWrittenOnceMatchesFloat64) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int m = 100, n = 96, j_blocks = 7, bm = 64, bn = 64, bk = 32;
  auto a = random_values<bl::half>(size_t(m) * bk, -2, 2);
  auto b = random_values<bl::half>(size_t(j_blocks) * bk * n, -2, 2);
  DeviceBuffer<bl::half> da(a), db(b);
  for (int stages = 1; stages <= 4; ++stages) {
    auto dc = poisoned_on_gpu<float>(size_t(m) * n);
    LaunchOptions options = on(Backend::Gpu, 4);
    options.num_stages = stages;
    bl::Grid grid{bl::cdiv(m, bm), bl::cdiv(n, bn)};
    invariant_a_matmul<bl::half>()[grid].with(options)(da, db, dc, m, n,
                                                       j_blocks, bm, bn, bk);
    std::vector<float> got = dc.to_host();
    ASSERT_TRUE(all_written(got)) << stages << " stages";
    const int depth = j_blocks * bk;
    for (int i = 0; i < m; ++i)
      for (int col = 0; col < n; ++col) {
        double want = 0, scale = 0;
        for (int q = 0; q < depth; ++q) {
          double product = as_double(a[size_t(i) * bk + q % bk]) *
                           as_double(b[size_t(q) * n + col]);
          want += product;
          scale += std::abs(product);
        }
        double value = got[size_t(i) * n + col];
        ASSERT_LE(std::abs(value - want), (depth + 1) * 0x1p-24 * scale)
            << stages << " stages, element (" << i << ", " << col << ")";
      }
  }
}

// One tile read by two dots, by one through a transposed view (attention
// backward's S^T = K Q^T beside dK += dS^T Q, which loads Q once): for
// each block of BM rows of Q, acc += (K Q_blk^T) Q_blk. Pipelined, the
// block is copied ahead once and both dots read its stage in place, the
// first with K along the tile's rows (its transposed view), the second
// with K across them. Inputs are small integers, so that every product
// and sum is exact in the 16-bit S and the f32 accumulator: the results
// match float64 bit for bit.
template <typename T> auto &transposed_view_matmul() {
  static auto k =
      bl::kernel("gpu_transposed_view_matmul",
                 [](bl::Ptr<T> q, bl::Ptr<T> k, bl::Ptr<float> out, bl::i32 n,
                    bl::Const<int> D, bl::Const<int> BM, bl::Const<int> BN) {
                   auto keys = bl::expand_dims(bl::arange(0, BN), 1);
                   auto dims = bl::expand_dims(bl::arange(0, D), 0);
                   auto k_tile = bl::load(k + keys * D + dims);
                   auto acc = bl::zeros({BN, D}, bl::float32);
                   for (auto first : bl::range(0, n, BM)) {
                     auto rows = bl::expand_dims(first + bl::arange(0, BM), 1);
                     auto q_rows = bl::load(q + rows * D + dims, rows < n, 0.f);
                     auto st = bl::dot(k_tile, bl::trans(q_rows));
                     acc = bl::dot(st.to(bl::dtype_of<T>()), q_rows, acc);
                   }
                   bl::store(out + keys * D + dims, acc);
                 });
  return k;
}

/// `n` values from {-1, 0, 1}, fresh.
template <typename T> std::vector<T> small_integers(size_t n) {
  std::vector<int> drawn = random_values<int>(n, -1, 1);
  return std::vector<T>(drawn.begin(), drawn.end());
}

template <typename T> void expect_transposed_view_exact() {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  struct Case {
    int n, d, bm, bn, warps;
  };
  // A tail of rows; rows of 256 bytes (two swizzle atoms); K^T of 128
  // keys (two passes of a warpgroup); 8 warps.
  for (Case c : {Case{200, 64, 64, 64, 4}, Case{130, 128, 64, 64, 4},
                 Case{97, 64, 32, 128, 4}, Case{256, 64, 64, 128, 8}}) {
    auto q = small_integers<T>(size_t(c.n) * c.d);
    auto k = small_integers<T>(size_t(c.bn) * c.d);
    DeviceBuffer<T> dq(q), dk(k);
    // (K Q^T) Q in float64.
    std::vector<float> want(size_t(c.bn) * c.d, 0.f);
    for (int key = 0; key < c.bn; ++key)
      for (int row = 0; row < c.n; ++row) {
        double s = 0;
        for (int j = 0; j < c.d; ++j)
          s += as_double(k[size_t(key) * c.d + j]) *
               as_double(q[size_t(row) * c.d + j]);
        for (int j = 0; j < c.d; ++j)
          want[size_t(key) * c.d + j] +=
              static_cast<float>(s * as_double(q[size_t(row) * c.d + j]));
      }
    for (int stages = 1; stages <= 4; ++stages) {
      SCOPED_TRACE(testing::Message()
                   << "n " << c.n << ", d " << c.d << ", " << c.bm << " x "
                   << c.bn << ", " << c.warps << " warps, " << stages
                   << " stages");
      auto out = poisoned_on_gpu<float>(size_t(c.bn) * c.d);
      LaunchOptions options = on(Backend::Gpu, c.warps);
      options.num_stages = stages;
      transposed_view_matmul<T>()[{1}].with(options)(dq, dk, out, c.n, c.d,
                                                     c.bm, c.bn);
      EXPECT_TRUE(same_bits(out.to_host(), want));
    }
  }
}

TEST(GpuPipelinedDotTransposedView, HalfMatchesFloat64Exactly) {
  expect_transposed_view_exact<bl::half>();
}

TEST(GpuPipelinedDotTransposedView, Bfloat16MatchesFloat64Exactly) {
  expect_transposed_view_exact<bl::bfloat16_t>();
}

// Pipelined, the copied tile is the only one: both dots read its stage,
// with ldmatrix and ldmatrix .trans on mma.sync, through a K-major and an
// MN-major descriptor (the transpose bit of B: 0, then 1) on warpgroup
// MMAs; no conversion through shared memory writes it again.
TEST(GpuPipelinedDotPtx, ATransposedViewReadsTheCopiedTileInPlace) {
  using ::testing::ContainsRegex;
  using ::testing::HasSubstr;
  using ::testing::Not;
  std::vector<bl::half> none;
  std::vector<float> out;
  const ir::Function &f = specialization(transposed_view_matmul<bl::half>(),
                                         none, none, out, 256, 64, 64, 64);
  for (const char *arch : {"sm_80", "sm_90a"}) {
    SCOPED_TRACE(arch);
    nvptx::CompileOptions options;
    options.arch = nvptx::GpuArch::parse(arch);
    options.num_stages = 3;
    std::string ptx = nvptx::ptx_of(*nvptx::compile(f, options));
    EXPECT_THAT(ptx, HasSubstr("cp.async.cg.shared.global"));
    EXPECT_THAT(ptx, Not(HasSubstr(".local")));
    // K, loaded before the loop, is A: on mma.sync its registers are its
    // fragments; warpgroup MMAs read it from a tile written once, before
    // the loop (64 x 64 halves by 128 threads: 4 vectors of 16 bytes).
    const bool warpgroups = std::string(arch) == "sm_90a";
    EXPECT_EQ(occurrences(ptx, "st.shared"), warpgroups ? 4 : 0);
    if (!warpgroups) {
      EXPECT_THAT(ptx, HasSubstr("ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
      EXPECT_THAT(ptx,
                  HasSubstr("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"));
    } else {
      EXPECT_THAT(ptx, ContainsRegex("wgmma.mma_async[^;]*, p, 1, 1, 0, 0;"));
      EXPECT_THAT(ptx, ContainsRegex("wgmma.mma_async[^;]*, p, 1, 1, 1;"));
    }
    if (ptxas()) {
      PtxasResult r = run_ptxas(ptx, arch, "-v");
      EXPECT_TRUE(r.ok) << r.output;
      EXPECT_THAT(r.output, HasSubstr(" 0 bytes spill stores"));
    }
  }
}

template <typename T>
std::string ptx_in_stages(int size, int stages, const std::string &arch) {
  std::vector<T> none;
  std::vector<float> out;
  const ir::Function &f = specialization(pipelined_matmul<T>(), none, none, out,
                                         size, size, size, 128, 128, 32);
  nvptx::CompileOptions options;
  options.arch = nvptx::GpuArch::parse(arch);
  options.num_stages = stages;
  return nvptx::ptx_of(*nvptx::compile(f, options));
}

// cp.async where the loop is pipelined, none where num_stages is 1 or
// where no tile can move in copies of 4 bytes or more alike in their mask
// (M, N and K not multiples of 16: rows start at any element, and N's
// mask changes anywhere along B's rows); the pipelined PTX assembles
// without spills. The stages of 128 x 128 x 32 halves (16 KB each, the
// swizzled tiles unpadded) are kept within half of what the architecture
// allows a CTA: 3 and 4 on sm_80 (163 KB) and sm_90 (227 KB), 3 on sm_89
// (99 KB), whose loops then wait for every copy but one (wait_group 1).
TEST(GpuPipelinedDotPtx, CopiesAheadOnlyWherePipelined) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  struct Arch {
    const char *name;
    int most_stages;
  };
  for (Arch arch : {Arch{"sm_80", 4}, Arch{"sm_89", 3}, Arch{"sm_90", 4}}) {
    SCOPED_TRACE(arch.name);
    for (int stages = 2; stages <= 4; ++stages) {
      std::string ptx = ptx_in_stages<bl::half>(256, stages, arch.name);
      EXPECT_THAT(ptx, HasSubstr("cp.async.cg.shared.global"));
      EXPECT_THAT(ptx, HasSubstr("ldmatrix.sync.aligned"));
      EXPECT_THAT(ptx, Not(HasSubstr(".local")));
      int used = std::min(stages, arch.most_stages);
      EXPECT_THAT(ptx, HasSubstr("cp.async.wait_group " +
                                 std::to_string(used - 2) + ";"))
          << stages << " stages";
      if (ptxas()) {
        PtxasResult r = run_ptxas(ptx, arch.name, "-v");
        EXPECT_TRUE(r.ok) << r.output;
        EXPECT_THAT(r.output, HasSubstr(" 0 bytes spill stores, 0 bytes "
                                        "spill loads"));
      }
    }
    EXPECT_THAT(ptx_in_stages<bl::half>(256, 1, arch.name),
                Not(HasSubstr("cp.async")));
    EXPECT_THAT(ptx_in_stages<bl::bfloat16_t>(100, 3, arch.name),
                Not(HasSubstr("cp.async")));
  }
}

} // namespace
