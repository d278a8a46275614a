// The PTX of the tutorials' tensor-core kernels as they are shipped, for
// the configurations tutorial 03 autotunes over on the GPU, compiled
// without a GPU: every matmul configuration multiplies with ldmatrix and
// mma.sync, copies its tiles with cp.async where its stages fit in half of
// the architecture's shared memory, and
// spills nothing (ptxas -v) for sm_80, sm_89 and sm_90 (the fp8 matmul
// multiplies on e4m3 tensor cores from sm_89 on, on the CUDA cores of
// sm_80), and on sm_90a on Hopper's warpgroup MMA; the persistent matmul
// too, its K loop pipelined inside its loop over tiles; attention (tutorial 06)
// runs both of its products on tensor cores.
#include "nvptx/ptxas.h"
#include "nvptx/support.h"

#include "03-matrix-multiplication/matmul.h"
#include "06-fused-attention/attention.h"
#include "06-fused-attention/attention_backward.h"

#include <gtest/gtest.h>

#include <sstream>
#include <tuple>

namespace bl = blocc;

namespace {

struct MatmulConfig {
  int block_m, block_n, block_k, warps, stages;
  /// "128x128x32 on 4 warps, 3 stages" (for `arch`, where given).
  std::string str(const std::string &arch = "") const {
    return (arch.empty() ? "" : arch + " ") + std::to_string(block_m) + "x" +
           std::to_string(block_n) + "x" + std::to_string(block_k) + " on " +
           std::to_string(warps) + " warps, " + std::to_string(stages) +
           " stages";
  }
};

/// One of tutorial 06's configurations, compiled for sm_90a.
struct AttentionConfig {
  int dim, block_m, block_n, warps, stages;
  /// "head dimension 64, 128x64 on 4 warps, 2 stages".
  std::string str() const {
    return "head dimension " + std::to_string(dim) + ", " +
           std::to_string(block_m) + "x" + std::to_string(block_n) + " on " +
           std::to_string(warps) + " warps, " + std::to_string(stages) +
           " stages";
  }
  bl::Target target() const { return bl::Target::gpu("sm_90a", warps, stages); }
};

// tutorial 03's GPU configurations (main.cpp, tile_configs).
const MatmulConfig kMatmulConfigs[] = {
    {64, 64, 32, 4, 3},
    {128, 64, 32, 4, 4},
    {128, 128, 32, 4, 3},
    {128, 128, 64, 8, 3},
};

template <typename T, typename Kernel>
std::string matmul_ptx(Kernel &kernel, const MatmulConfig &c,
                       const std::string &arch) {
  const T *in = nullptr;
  const float *out = nullptr;
  const int n = 4096;
  bl::Stages stages = kernel.asm_for(bl::Target::gpu(arch, c.warps, c.stages),
                                     in, in, out, n, n, n, n, 1, n, 1, n, 1,
                                     c.block_m, c.block_n, c.block_k, 8);
  return stages[bl::Stage::Ptx];
}

std::string spill_report(const std::string &ptx, const std::string &arch) {
  blocc::gpu_testing::PtxasResult r =
      blocc::gpu_testing::run_ptxas(ptx, arch, "-v");
  const bool clean =
      r.ok && r.output.find(" 0 bytes stack frame, 0 bytes spill stores, 0 "
                            "bytes spill loads") != std::string::npos;
  return clean ? "" : r.output;
}

template <typename T, typename Kernel> void check_matmul(Kernel &kernel) {
  for (const MatmulConfig &c : kMatmulConfigs)
    for (const char *arch : {"sm_80", "sm_89", "sm_90"}) {
      SCOPED_TRACE(c.str(arch));
      std::string ptx = matmul_ptx<T>(kernel, c, arch);
      auto has = [&](const char *text) {
        return ptx.find(text) != std::string::npos;
      };
      EXPECT_TRUE(has("mma.sync.aligned.m16n8k16.row.col.f32"));
      EXPECT_TRUE(has("ldmatrix.sync.aligned.m8n8.x4"));
      // Two stages of 128 x 64 and 64 x 128 tiles (36 KB each) are more
      // than half of sm_89's 99 KB: that loop stays unpipelined there.
      const bool stages_fit = std::string(arch) != "sm_89" || c.block_k == 32;
      EXPECT_EQ(has("cp.async.cg.shared.global"), stages_fit);
      if (blocc::gpu_testing::ptxas()) {
        EXPECT_EQ(spill_report(ptx, arch), "");
      }
    }
}

TEST(TutorialKernelsPtx, MatmulOnTensorCoresWithoutSpills) {
  check_matmul<bl::half>(blocc::tutorials::matmul);
  check_matmul<bl::bfloat16_t>(blocc::tutorials::matmul_bf16);
  check_matmul<bl::half>(blocc::tutorials::matmul_persistent);
  check_matmul<bl::bfloat16_t>(blocc::tutorials::matmul_persistent_bf16);
}

// On sm_90a (what an H100 compiles for) every configuration multiplies on
// Hopper's warpgroup MMA: wgmma.mma_async reading the tiles cp.async
// copied, no ldmatrix, no spills; the fp8 matmul too, on e4m3.
TEST(TutorialKernelsPtx, MatmulOnWarpgroupMmaOnSm90a) {
  const float *out = nullptr;
  const int n = 4096;
  for (const MatmulConfig &c : kMatmulConfigs) {
    SCOPED_TRACE(c.str());
    const std::string halves =
        matmul_ptx<bl::half>(blocc::tutorials::matmul, c, "sm_90a");
    const std::string persistent =
        matmul_ptx<bl::half>(blocc::tutorials::matmul_persistent, c, "sm_90a");
    const uint8_t *bytes = nullptr;
    const std::string fp8 = blocc::tutorials::matmul_fp8.asm_for(
        bl::Target::gpu("sm_90a", c.warps, c.stages), bytes, bytes, out, 0.5f,
        0.25f, n, n, n, n, 1, 1, n, n, 1, c.block_m, c.block_n, c.block_k,
        8)[bl::Stage::Ptx];
    for (const auto &[ptx, mma] : {std::pair{halves, ".f32.f16.f16"},
                                   std::pair{persistent, ".f32.f16.f16"},
                                   std::pair{fp8, ".f32.e4m3.e4m3"}}) {
      EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n" +
                         std::to_string(c.block_n)),
                std::string::npos);
      EXPECT_NE(ptx.find(mma), std::string::npos);
      EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos);
      EXPECT_EQ(ptx.find("ldmatrix"), std::string::npos);
      if (blocc::gpu_testing::ptxas()) {
        EXPECT_EQ(spill_report(ptx, "sm_90a"), "");
      }
    }
  }
}

// Tutorial 03's matmul through tensor descriptors, on sm_90a: the Tensor
// Memory Accelerator copies A's and B's tiles (cp.async.bulk.tensor into
// the tiles wgmma.mma_async reads, no cp.async, no ldmatrix) and C's out
// of shared memory, three tensor maps after the sixteen parameters, no
// spills; the persistent walk too. For sm_90 the same kernels copy no
// tensor.
TEST(TutorialKernelsPtx, TmaMatmulCopiesTilesWithTheTensorMemoryAccelerator) {
  for (const MatmulConfig &c : kMatmulConfigs) {
    SCOPED_TRACE(c.str());
    for (const std::string &ptx :
         {matmul_ptx<bl::half>(blocc::tutorials::matmul_tma, c, "sm_90a"),
          matmul_ptx<bl::half>(blocc::tutorials::matmul_persistent_tma, c,
                               "sm_90a")}) {
      EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n" +
                         std::to_string(c.block_n)),
                std::string::npos);
      EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d.shared::cluster.global"),
                std::string::npos);
      EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d.global.shared::cta"),
                std::string::npos);
      EXPECT_EQ(ptx.find("cp.async.cg"), std::string::npos);
      EXPECT_EQ(ptx.find("ldmatrix"), std::string::npos);
      size_t maps = 0;
      for (size_t at = ptx.find(".param .align 64 .b8");
           at != std::string::npos;
           at = ptx.find(".param .align 64 .b8", at + 1))
        ++maps;
      EXPECT_EQ(maps, 3u);
      if (blocc::gpu_testing::ptxas()) {
        EXPECT_EQ(spill_report(ptx, "sm_90a"), "");
      }
    }
    EXPECT_EQ(matmul_ptx<bl::half>(blocc::tutorials::matmul_tma, c, "sm_90")
                  .find("cp.async.bulk"),
              std::string::npos);
  }
}

// The machine code ptxas makes of the sm_90a TMA matmul (where the toolkit's
// cuobjdump and nvdisasm are on PATH): the Hopper tensor cores' HGMMA, one
// a warpgroup MMA of the loop; TMA loads (UTMALDG) and stores (UTMASTG),
// the mbarriers' transaction counts (SYNCS), and no LDGSTS (cp.async).
TEST(TutorialKernelsSass, TmaMatmulRunsOnHgmmaWithTmaCopies) {
  if (!blocc::gpu_testing::can_disassemble())
    GTEST_SKIP() << "ptxas, cuobjdump and nvdisasm are not all on PATH";
  const MatmulConfig c = kMatmulConfigs[3]; // 128x128x64 on 8 warps
  SCOPED_TRACE(c.str());
  std::string sass = blocc::gpu_testing::sass_of(
      matmul_ptx<bl::half>(blocc::tutorials::matmul_tma, c, "sm_90a"),
      "sm_90a");
  ASSERT_NE(sass, "");
  // A step of 16 along K, a pass of 64 rows a warpgroup.
  const int passes = c.block_m / (16 * c.warps);
  EXPECT_EQ(blocc::gpu_testing::occurrences(
                sass, "HGMMA.64x" + std::to_string(c.block_n) + "x16.F32"),
            c.block_k / 16 * passes);
  EXPECT_GT(blocc::gpu_testing::occurrences(sass, "UTMALDG.2D"), 0);
  EXPECT_GT(blocc::gpu_testing::occurrences(sass, "UTMASTG.2D"), 0);
  EXPECT_GT(blocc::gpu_testing::occurrences(sass, "SYNCS.ARRIVE.TRANS64"), 0);
  EXPECT_EQ(blocc::gpu_testing::occurrences(sass, "LDGSTS"), 0);
}

/// The loops of a kernel's layouts stage, in order (outer first), each as
/// "pipelined in N stages" or "not pipelined".
std::vector<std::string> loop_pipelining(const std::string &layouts) {
  std::vector<std::string> loops;
  std::istringstream lines(layouts);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" for %") == std::string::npos)
      continue;
    size_t at = line.find("pipelined in ");
    loops.push_back(at == std::string::npos
                        ? "not pipelined"
                        : line.substr(at, line.find(" stages", at) + 7 - at));
  }
  return loops;
}

// The persistent matmul's K loop, nested in its loop over tiles, is
// pipelined as the one-tile matmul's is: on sm_90a the outer loop (which
// stores) runs as it is and the inner one in as many stages as the
// one-tile kernel's loop, its warpgroup MMAs left in flight from one
// iteration to the next (waited for down to one group in the loop, to
// none after it), in the GPU sweep's configurations too, without spills.
TEST(TutorialKernelsPtx, PersistentMatmulPipelinesItsKLoopInsideTheTileLoop) {
  const MatmulConfig sweep[] = {{128, 128, 64, 4, 3}, {128, 256, 64, 8, 4}};
  std::vector<MatmulConfig> configs(std::begin(kMatmulConfigs),
                                    std::end(kMatmulConfigs));
  configs.insert(configs.end(), std::begin(sweep), std::end(sweep));
  const bl::half *in = nullptr;
  const float *out = nullptr;
  const int n = 4096;
  for (const MatmulConfig &c : configs) {
    SCOPED_TRACE(c.str("sm_90a"));
    auto stages_of = [&](auto &kernel) {
      return kernel.asm_for(bl::Target::gpu("sm_90a", c.warps, c.stages), in,
                            in, out, n, n, n, n, 1, n, 1, n, 1, c.block_m,
                            c.block_n, c.block_k, 8);
    };
    bl::Stages one_tile = stages_of(blocc::tutorials::matmul);
    bl::Stages persistent = stages_of(blocc::tutorials::matmul_persistent);
    std::vector<std::string> k_loop =
        loop_pipelining(one_tile[bl::Stage::Layouts]);
    ASSERT_EQ(k_loop.size(), 1u);
    ASSERT_NE(k_loop[0], "not pipelined");
    EXPECT_EQ(loop_pipelining(persistent[bl::Stage::Layouts]),
              (std::vector<std::string>{"not pipelined", k_loop[0]}));
    const std::string &ptx = persistent[bl::Stage::Ptx];
    EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n" +
                       std::to_string(c.block_n) + "k16.f32.f16.f16"),
              std::string::npos);
    EXPECT_NE(ptx.find("wgmma.wait_group.sync.aligned 1;"), std::string::npos);
    EXPECT_NE(ptx.find("wgmma.wait_group.sync.aligned 0;"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos);
    if (blocc::gpu_testing::ptxas()) {
      EXPECT_EQ(spill_report(ptx, "sm_90a"), "");
    }
  }
}

TEST(TutorialKernelsPtx, Fp8MatmulOnTensorCoresFromSm89WithoutSpills) {
  const uint8_t *in = nullptr;
  const float *out = nullptr;
  const int n = 4096;
  for (const MatmulConfig &c : kMatmulConfigs)
    for (const char *arch : {"sm_80", "sm_89", "sm_90"}) {
      SCOPED_TRACE(c.str(arch));
      bl::Stages stages = blocc::tutorials::matmul_fp8.asm_for(
          bl::Target::gpu(arch, c.warps, c.stages), in, in, out, 0.5f, 0.25f, n,
          n, n, n, 1, n, 1, n, 1, c.block_m, c.block_n, c.block_k, 8);
      const std::string &ptx = stages[bl::Stage::Ptx];
      auto has = [&](const char *text) {
        return ptx.find(text) != std::string::npos;
      };
      // sm_80 has no fp8 MMA: the dot stays on the CUDA cores, unpipelined.
      const bool tensor_cores = std::string(arch) != "sm_80";
      EXPECT_EQ(has("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"),
                tensor_cores);
      EXPECT_EQ(has("ldmatrix.sync.aligned"), tensor_cores);
      EXPECT_EQ(has("cp.async.cg.shared.global"), tensor_cores);
      if (blocc::gpu_testing::ptxas()) {
        EXPECT_EQ(spill_report(ptx, arch), "");
      }
    }
}

TEST(TutorialKernelsPtx, AttentionRunsBothProductsOnTensorCores) {
  const bl::half *p = nullptr;
  for (int dim : {64, 128})
    for (bool causal : {false, true}) {
      SCOPED_TRACE("head dimension " + std::to_string(dim) +
                   (causal ? ", causal" : ""));
      bl::Stages stages = blocc::tutorials::attention.asm_for(
          bl::Target::gpu("sm_90", 4, 3), p, p, p, p, 4096, 0.125f, dim, 64, 64,
          causal);
      const std::string &layouts = stages[bl::Stage::Layouts];
      size_t on_tensor_cores = 0;
      for (size_t at = 0;
           (at = layouts.find("on tensor cores", at)) != std::string::npos;
           ++at)
        ++on_tensor_cores;
      // Both products of each of its two loops (the unmasked key blocks,
      // then the masked ones).
      EXPECT_EQ(on_tensor_cores, 4u) << layouts;
      EXPECT_NE(stages[bl::Stage::Ptx].find(
                    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16"),
                std::string::npos);
    }
}

// Attention's machine code for sm_90a (where cuobjdump and nvdisasm are on
// PATH): each of its four products (two a loop, unmasked then masked keys)
// issues its HGMMAs after one WARPGROUP.ARRIVE and completes them as one
// group (one HGMMA marked gsb0). A register of P written after the fence
// that precedes them would make ptxas fence and wait before every HGMMA of
// P V (eight arrives, eight groups). No spills either.
TEST(TutorialKernelsSass, AttentionIssuesEachProductsMmasBackToBack) {
  if (!blocc::gpu_testing::can_disassemble())
    GTEST_SKIP() << "ptxas, cuobjdump and nvdisasm are not all on PATH";
  const bl::half *p = nullptr;
  for (AttentionConfig c :
       {AttentionConfig{64, 64, 64, 4, 2}, AttentionConfig{64, 128, 64, 4, 2},
        AttentionConfig{128, 128, 128, 8, 3}}) {
    SCOPED_TRACE(c.str());
    bl::Stages stages = blocc::tutorials::attention.asm_for(
        c.target(), p, p, p, p, 4096, 0.125f, c.dim, c.block_m, c.block_n,
        false);
    const std::string &ptx = stages[bl::Stage::Ptx];
    std::string sass = blocc::gpu_testing::sass_of(ptx, "sm_90a");
    ASSERT_NE(sass, "");
    size_t groups = 0;
    for (size_t at = sass.find("HGMMA"); at != std::string::npos;
         at = sass.find("HGMMA", at + 1)) {
      size_t end = sass.find(';', at);
      groups += sass.substr(at, end - at).find("gsb0") != std::string::npos;
    }
    EXPECT_EQ(groups, 4u);
    EXPECT_EQ(blocc::gpu_testing::occurrences(sass, "WARPGROUP.ARRIVE"), 4);
    EXPECT_EQ(spill_report(ptx, "sm_90a"), "");
  }
}

/// ptxas's report on `ptx` for sm_90a where it serializes warpgroup MMAs
/// (its C7514/C7515: something touches registers of MMAs in flight, so
/// every wgmma of the kernel waits for the one before), else "".
std::string wgmma_serialization(const std::string &ptx) {
  blocc::gpu_testing::PtxasResult r =
      blocc::gpu_testing::run_ptxas(ptx, "sm_90a", "-v");
  return r.ok && r.output.find("serialized") == std::string::npos ? ""
                                                                  : r.output;
}

// The tutorials' kernels on warpgroup MMAs at the sweep's configurations:
// ptxas serializes the MMAs of none (one stray register write before a
// wait does it to a whole kernel, at whatever speed cost).
TEST(TutorialKernelsPtx, PtxasSerializesNoWarpgroupMma) {
  if (!blocc::gpu_testing::ptxas())
    GTEST_SKIP() << "no ptxas on PATH";
  const MatmulConfig sweep[] = {{128, 128, 64, 4, 3}, {128, 256, 64, 8, 4}};
  for (const MatmulConfig &c : sweep) {
    SCOPED_TRACE(c.str("sm_90a"));
    EXPECT_EQ(wgmma_serialization(
                  matmul_ptx<bl::half>(blocc::tutorials::matmul, c, "sm_90a")),
              "");
    EXPECT_EQ(wgmma_serialization(matmul_ptx<bl::half>(
                  blocc::tutorials::matmul_tma, c, "sm_90a")),
              "");
  }
  const bl::half *h = nullptr;
  const float *f = nullptr;
  bl::half *g = nullptr;
  for (bool causal : {false, true})
    for (AttentionConfig c : {AttentionConfig{64, 128, 64, 8, 3},
                              AttentionConfig{64, 128, 64, 4, 2},
                              AttentionConfig{128, 128, 128, 8, 3},
                              AttentionConfig{128, 128, 64, 4, 2}}) {
      SCOPED_TRACE("forward, " + c.str() + (causal ? ", causal" : ""));
      EXPECT_EQ(wgmma_serialization(blocc::tutorials::attention.asm_for(
                    c.target(), h, h, h, h, 4096, 0.125f, c.dim, c.block_m,
                    c.block_n, causal)[bl::Stage::Ptx]),
                "");
    }
  for (AttentionConfig c : {AttentionConfig{64, 128, 32, 4, 3},
                            AttentionConfig{128, 128, 64, 8, 3}}) {
    SCOPED_TRACE("dq, " + c.str());
    EXPECT_EQ(wgmma_serialization(blocc::tutorials::attention_bwd_dq.asm_for(
                  c.target(), h, h, h, h, f, f, g, 4096, 0.125f, c.dim,
                  c.block_m, c.block_n, false)[bl::Stage::Ptx]),
              "");
  }
}

// The backward pass's dK and dV kernel for sm_90a at the sweep's
// configurations: the per-query log-sum-exp and delta of each of its two
// loops are prefetched (copied into the loop's stages ahead, not loaded
// from global memory in every iteration), and nothing makes ptxas
// serialize its warpgroup MMAs.
TEST(TutorialKernelsPtx, AttentionBackwardPrefetchesItsPerQueryValues) {
  const bl::half *h = nullptr;
  const float *f = nullptr;
  bl::half *g = nullptr;
  for (AttentionConfig c : {AttentionConfig{64, 32, 128, 4, 3},
                            AttentionConfig{128, 64, 128, 8, 2}}) {
    SCOPED_TRACE(c.str());
    bl::Stages stages = blocc::tutorials::attention_bwd_dkdv.asm_for(
        c.target(), h, h, h, h, f, f, g, g, 4096, 0.125f, c.dim, c.block_m,
        c.block_n, false);
    std::istringstream layouts(stages[bl::Stage::Layouts]);
    const std::string vector =
        ": tensor<" + std::to_string(c.block_m) + "xf32>";
    int loads = 0, prefetched = 0;
    for (std::string line; std::getline(layouts, line);)
      if (line.find(" = load ") != std::string::npos &&
          line.find(vector) != std::string::npos) {
        ++loads;
        prefetched += line.find("prefetch = 1") != std::string::npos;
      }
    EXPECT_EQ(loads, 4);
    EXPECT_EQ(prefetched, 4);
    if (blocc::gpu_testing::ptxas()) {
      EXPECT_EQ(wgmma_serialization(stages[bl::Stage::Ptx]), "");
    }
  }
}

} // namespace
