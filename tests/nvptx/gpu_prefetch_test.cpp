// Vectors prefetched by a software-pipelined loop (backends/nvptx/
// pipeline_loads.h): a load of a vector in the body of a loop pipelined
// for its tiles is copied ahead into the same stages and read from there
// where it stands. The kernel sums the rows w[kb, :] the loop meets beside
// a matmul whose MMAs stay in flight across iterations on sm_90a (the
// accumulator only accumulates), with tails of M, N and K and a loop of
// no iteration (K = 0, jumped over with its prologue). Results against
// float64, outputs poisoned first. The GPU IR marks the vector prefetch,
// the PTX copies it with cp.async and reads it from shared memory, never
// from global memory, and assembles.
#include "nvptx/support.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

auto &rows_beside_matmul() {
  static auto k = bl::kernel(
      "gpu_prefetched_rows",
      [](bl::Ptr<bl::half> a, bl::Ptr<bl::half> b, bl::Ptr<float> w,
         bl::Ptr<float> c, bl::i32 M, bl::i32 N, bl::i32 K, bl::i32 KB,
         bl::Const<int> BM, bl::Const<int> BN, bl::Const<int> BK) {
        auto row_ids = bl::program_id(0) * BM + bl::arange(0, BM);
        auto col_ids = bl::program_id(1) * BN + bl::arange(0, BN);
        auto rows = bl::expand_dims(row_ids, 1);
        auto cols = bl::expand_dims(col_ids, 0);
        auto k_row = bl::expand_dims(bl::arange(0, BK), 0);
        auto k_col = bl::expand_dims(bl::arange(0, BK), 1);
        auto acc = bl::zeros({BM, BN}, bl::float32);
        auto w_sum = bl::zeros({BN}, bl::float32);
        for (auto kb : bl::range(0, KB, 1)) {
          auto k = kb * BK;
          auto x = bl::load(a + rows * K + k + k_row,
                            (rows < M) & (k_row < K - k), 0.f);
          auto y = bl::load(b + (k + k_col) * N + cols,
                            (k_col < K - k) & (cols < N), 0.f);
          w_sum = w_sum + bl::load(w + kb * N + col_ids, col_ids < N, 0.f);
          acc = bl::dot(x, y, acc);
        }
        bl::store(c + rows * N + cols, acc + bl::expand_dims(w_sum, 0),
                  (rows < M) & (cols < N));
      });
  return k;
}

struct Shape {
  int m, n, k;
};

TEST(GpuPrefetch, RowsBesideAMatmulMatchFloat64) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int bm = 64, bn = 64, bk = 32;
  for (Shape s : {Shape{130, 200, 48}, Shape{256, 256, 256}, Shape{64, 72, 0},
                  Shape{97, 50, 176}}) {
    const int kb = bl::cdiv(s.k, bk);
    auto a = random_values<bl::half>(size_t(s.m) * s.k, -2, 2);
    auto b = random_values<bl::half>(size_t(s.k) * s.n, -2, 2);
    auto w = random_values<float>(size_t(kb) * s.n + 1, -4, 4);
    DeviceBuffer<bl::half> da(a), db(b);
    DeviceBuffer<float> dw(w);
    for (int stages = 1; stages <= 4; ++stages) {
      SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                   std::to_string(s.k) + ", " + std::to_string(stages) +
                   " stages");
      auto dc = poisoned_on_gpu<float>(size_t(s.m) * s.n);
      LaunchOptions options = on(Backend::Gpu, 4);
      options.num_stages = stages;
      rows_beside_matmul()[{bl::cdiv(s.m, bm), bl::cdiv(s.n, bn)}].with(
          options)(da, db, dw, dc, s.m, s.n, s.k, kb, bm, bn, bk);
      std::vector<float> got = dc.to_host();
      ASSERT_TRUE(all_written(got));
      for (int i = 0; i < s.m; ++i)
        for (int j = 0; j < s.n; ++j) {
          double want = 0, scale = 0;
          for (int l = 0; l < s.k; ++l) {
            double p = as_double(a[size_t(i) * s.k + l]) *
                       as_double(b[size_t(l) * s.n + j]);
            want += p;
            scale += std::abs(p);
          }
          for (int r = 0; r < kb; ++r) {
            want += w[size_t(r) * s.n + j];
            scale += std::abs(w[size_t(r) * s.n + j]);
          }
          ASSERT_LE(std::abs(got[size_t(i) * s.n + j] - want),
                    (s.k + kb + 2) * 0x1p-24 * scale)
              << "element (" << i << ", " << j << ")";
        }
    }
  }
}

TEST(GpuPrefetchPtx, TheVectorIsCopiedAheadAndReadFromSharedMemory) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  const bl::half *h = nullptr;
  const float *f = nullptr;
  float *out = nullptr;
  for (const char *arch : {"sm_80", "sm_90a"}) {
    SCOPED_TRACE(arch);
    bl::Stages stages =
        rows_beside_matmul().asm_for(bl::Target::gpu(arch, 4, 3), h, h, f, out,
                                     1024, 1024, 1024, 32, 64, 64, 32);
    const std::string &layouts = stages[bl::Stage::Layouts];
    EXPECT_NE(layouts.find("pipelined in 3 stages"), std::string::npos);
    EXPECT_NE(layouts.find("prefetch = 1"), std::string::npos);
    const std::string &ptx = stages[bl::Stage::Ptx];
    EXPECT_NE(ptx.find("cp.async.ca.shared.global"), std::string::npos);
    EXPECT_NE(ptx.find("ld.shared.f32"), std::string::npos);
    EXPECT_EQ(ptx.find("ld.global"), std::string::npos);
    // On warpgroup MMAs the accumulator's stay in flight into the next
    // iteration.
    if (std::string(arch) == "sm_90a") {
      EXPECT_NE(ptx.find("wgmma.wait_group.sync.aligned 1;"),
                std::string::npos);
    }
    if (ptxas()) {
      PtxasResult r = run_ptxas(ptx, arch, "-v");
      EXPECT_TRUE(r.ok) << r.output;
      // Nothing makes ptxas serialize the warpgroup MMAs.
      EXPECT_THAT(r.output, Not(HasSubstr("serialized"))) << r.output;
    }
  }
}

} // namespace
