// Warp specialization (backends/nvptx/warp_specialize.h): a matmul whose
// K loop asks for a producer warpgroup (bl::LoopOptions::warp_specialize)
// and reads its tiles through tensor descriptors. On Hopper (sm_90a) four
// more warps issue the TMA copies while the kernel's 4 or 8 warps multiply;
// it matches float64 within the f32 accumulator's rounding bound for tails
// of M, N and K, fewer iterations than stages, K = 0, 1 to 4 stages (1: not
// pipelined, so not specialized), f16 and bf16, outputs poisoned first.
// The PTX shows the split (setmaxnreg, the consumers' own barrier, empty
// mbarriers the consumer warps arrive on) and assembles without spills;
// for targets without warpgroup MMAs, or a loop whose tiles TMA cannot
// copy, the kernel is the ordinary one (no producer, num_warps threads).
// A B given as its transpose's rows ([N, K], attention's K), which the dot
// reads through bl::trans, is copied by TMA too (K-major), with and
// without a producer.
#include "nvptx/matmul_cases.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

template <typename T> auto &specialized_matmul() {
  static auto k = bl::kernel(
      "gpu_warp_specialized_matmul",
      [](bl::Ptr<T> a, bl::Ptr<T> b, bl::Ptr<float> c, bl::i32 M, bl::i32 N,
         bl::i32 K, bl::Const<int> BM, bl::Const<int> BN, bl::Const<int> BK) {
        descriptor_matmul_body(a, b, c, M, N, K, BM, BN, BK,
                               {.warp_specialize = true});
      });
  return k;
}

std::vector<MatmulCase> cases() {
  // The TMA matmul's shapes, and loops long enough for every stage's
  // phases to wrap many times, on 4 and 8 warps.
  std::vector<MatmulCase> shapes = tma_matmul_shapes();
  shapes.push_back({512, 512, 1024, 128, 128, 64, 4, 0, false});
  shapes.push_back({520, 600, 2048, 128, 256, 64, 8, 0, false});
  return in_every_stage_count(shapes);
}

class GpuWarpSpecializedMatmul : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(GpuWarpSpecializedMatmul, MatchesFloat64) {
  expect_gpu_matmul_in_its_type_matches_float64(
      [](auto t) -> auto & { return specialized_matmul<decltype(t)>(); },
      GetParam());
}

INSTANTIATE_TEST_SUITE_P(Stages, GpuWarpSpecializedMatmul,
                         ::testing::ValuesIn(cases()), matmul_case_name);

/// C = A B for B given as its transpose's rows, [N, K] (attention's K),
/// through a descriptor whose tile the dot reads transposed (bl::trans):
/// TMA lands it K-major; the loop a producer warpgroup's where `WS`.
template <typename T, bool WS> auto &transposed_b_matmul() {
  static auto k = bl::kernel(
      WS ? "gpu_warp_specialized_bt_matmul" : "gpu_tma_bt_matmul",
      [](bl::Ptr<T> a, bl::Ptr<T> bt, bl::Ptr<float> c, bl::i32 M, bl::i32 N,
         bl::i32 K, bl::Const<int> BM, bl::Const<int> BN, bl::Const<int> BK) {
        auto pid_m = bl::program_id(0), pid_n = bl::program_id(1);
        auto a_desc = bl::make_tensor_descriptor(a, {M, K}, {K, 1}, {BM, BK});
        auto bt_desc = bl::make_tensor_descriptor(bt, {N, K}, {K, 1}, {BN, BK});
        auto acc = bl::zeros({BM, BN}, bl::float32);
        for (auto k : bl::range(0, K, BK, {.warp_specialize = WS}))
          acc = bl::dot(bl::load(a_desc, {pid_m * BM, k}),
                        bl::trans(bl::load(bt_desc, {pid_n * BN, k})), acc);
        auto c_desc = bl::make_tensor_descriptor(c, {M, N}, {N, 1}, {BM, BN});
        bl::store(c_desc, {pid_m * BM, pid_n * BN}, acc);
      });
  return k;
}

template <typename T, bool WS>
void expect_transposed_b_matches_float64(const MatmulCase &c) {
  auto a = random_values<T>(size_t(c.m) * c.k, -2, 2);
  auto bt = random_values<T>(size_t(c.n) * c.k, -2, 2);
  std::vector<T> b(bt.size());
  for (int q = 0; q < c.k; ++q)
    for (int j = 0; j < c.n; ++j)
      b[size_t(q) * c.n + j] = bt[size_t(j) * c.k + q];
  DeviceBuffer<T> da(a), dbt(bt);
  auto dc = poisoned_on_gpu<float>(size_t(c.m) * c.n);
  LaunchOptions options = on(Backend::Gpu, c.warps);
  options.num_stages = c.stages;
  ::blocc::Grid grid{::blocc::cdiv(c.m, c.bm), ::blocc::cdiv(c.n, c.bn)};
  transposed_b_matmul<T, WS>()[grid].with(options)(da, dbt, dc, c.m, c.n, c.k,
                                                   c.bm, c.bn, c.bk);
  expect_matmul_matches_float64(a, b, dc.to_host(), c);
}

class GpuTmaTransposedB : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(GpuTmaTransposedB, MatchesFloat64WithAndWithoutAProducer) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const MatmulCase &c = GetParam();
  for (bool ws : {false, true}) {
    SCOPED_TRACE(ws ? "warp-specialized" : "without a producer");
    if (c.bf16)
      ws ? expect_transposed_b_matches_float64<bl::bfloat16_t, true>(c)
         : expect_transposed_b_matches_float64<bl::bfloat16_t, false>(c);
    else
      ws ? expect_transposed_b_matches_float64<bl::half, true>(c)
         : expect_transposed_b_matches_float64<bl::half, false>(c);
  }
}

INSTANTIATE_TEST_SUITE_P(Stages, GpuTmaTransposedB,
                         ::testing::ValuesIn(cases()), matmul_case_name);

std::string ptx_of(int k, int stages, int warps, const std::string &arch,
                   int bn = 128) {
  std::vector<bl::half> none;
  std::vector<float> out;
  const ir::Function &f = specialization(specialized_matmul<bl::half>(), none,
                                         none, out, 256, 256, k, 128, bn, 64);
  nvptx::CompileOptions options;
  options.arch = nvptx::GpuArch::parse(arch);
  options.num_stages = stages;
  options.num_warps = warps;
  return nvptx::ptx_of(*nvptx::compile(f, options));
}

// The producer gives up registers, the consumers take them (from a count
// at the entry that ptxas knows: it would ignore setmaxnreg otherwise); the
// consumers' barriers name their own count; each consumer warp arrives on
// an empty mbarrier; the CTA is num_warps + 4 warps.
TEST(GpuWarpSpecializedPtx, AProducerWarpgroupIssuesTheCopies) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  for (int warps : {4, 8}) {
    SCOPED_TRACE(std::to_string(warps) + " warps");
    std::string ptx = ptx_of(1024, 3, warps, "sm_90a", 32 * warps);
    EXPECT_THAT(ptx, HasSubstr(".maxntid " + std::to_string(32 * (warps + 4)) +
                               ", 1, 1"));
    EXPECT_THAT(ptx, HasSubstr(".maxnreg 168"));
    EXPECT_THAT(ptx, HasSubstr("setmaxnreg.dec.sync.aligned.u32 40"));
    EXPECT_THAT(ptx, HasSubstr("setmaxnreg.inc.sync.aligned.u32 " +
                               std::string(warps == 4 ? "240" : "232")));
    EXPECT_THAT(ptx,
                HasSubstr("barrier.sync \t1, " + std::to_string(32 * warps)));
    EXPECT_THAT(ptx, HasSubstr("barrier.sync \t2, " +
                               std::to_string(32 * (warps + 1))));
    EXPECT_THAT(ptx, HasSubstr("mbarrier.arrive.shared::cta.b64"));
    EXPECT_THAT(ptx, HasSubstr("mbarrier.arrive.expect_tx.shared::cta.b64"));
    EXPECT_THAT(ptx, HasSubstr("wgmma.mma_async"));
    // Every copy of A and B is the producer's, in its loop: one A box and
    // BN / 64 B boxes; C's BN / 32 go out after the loop.
    EXPECT_EQ(occurrences(ptx, "cp.async.bulk.tensor.2d.shared::cluster"),
              1 + warps / 2);
    EXPECT_THAT(ptx, Not(HasSubstr("bar.sync \t0")));
    EXPECT_THAT(ptx, Not(HasSubstr("barrier.sync \t0")));
    if (ptxas()) {
      PtxasResult r = run_ptxas(ptx, "sm_90a", "-v");
      EXPECT_TRUE(r.ok) << r.output;
      EXPECT_THAT(r.output, Not(HasSubstr("ignored"))); // setmaxnreg
      EXPECT_THAT(r.output, HasSubstr(" 0 bytes spill stores, 0 bytes "
                                      "spill loads"));
    }
  }
}

// A tile the dot reads transposed is copied by TMA as well, landing
// K-major: no cp.async, no thread's loads of B.
TEST(GpuWarpSpecializedPtx, ATransposedTileIsCopiedByTheProducerToo) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  std::vector<bl::half> none;
  std::vector<float> out;
  for (int stages : {1, 3}) {
    SCOPED_TRACE(std::to_string(stages) + " stages");
    const ir::Function &f =
        specialization(transposed_b_matmul<bl::half, true>(), none, none, out,
                       256, 256, 1024, 128, 128, 64);
    nvptx::CompileOptions options;
    options.arch = nvptx::GpuArch::parse("sm_90a");
    options.num_stages = stages;
    std::string ptx = nvptx::ptx_of(*nvptx::compile(f, options));
    // A's box and B^T's (128 rows of 64 halves) a stage; C's four.
    EXPECT_EQ(occurrences(ptx, "cp.async.bulk.tensor.2d.shared::cluster"), 2);
    EXPECT_THAT(ptx, Not(HasSubstr("cp.async.cg")));
    EXPECT_THAT(ptx, Not(HasSubstr("ld.global")));
    if (stages > 1) {
      EXPECT_THAT(ptx, HasSubstr("setmaxnreg"));
    }
    if (ptxas()) {
      PtxasResult r = run_ptxas(ptx, "sm_90a", "-v");
      EXPECT_TRUE(r.ok) << r.output;
    }
  }
}

// Without warpgroup MMAs, or unpipelined, the loop is an ordinary one.
TEST(GpuWarpSpecializedPtx, TargetsWithoutItRunTheOrdinaryLoop) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  for (const char *arch : {"sm_80", "sm_90"}) {
    std::string ptx = ptx_of(1024, 3, 4, arch);
    EXPECT_THAT(ptx, HasSubstr(".maxntid 128, 1, 1")) << arch;
    EXPECT_THAT(ptx, Not(HasSubstr("setmaxnreg"))) << arch;
  }
  std::string unpipelined = ptx_of(1024, 1, 4, "sm_90a");
  EXPECT_THAT(unpipelined, HasSubstr(".maxntid 128, 1, 1"));
  EXPECT_THAT(unpipelined, Not(HasSubstr("setmaxnreg")));
}

} // namespace
