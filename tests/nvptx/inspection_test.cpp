// Inspection on the GPU backend (jit/stages.h): asm_for a GPU target
// gives the IR with the layout of each block value (`layouts`, in the
// spirit of Triton's TritonGPU IR), the NVVM IR and the PTX, compiled
// without a GPU; BLOCC_DUMP prints the same texts as a GPU launch
// compiles (run where a GPU is present).
#include "cpu/cache_support.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "nvptx/ptxas.h"
#include "nvptx/support.h"
#include "stage_texts.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;
using blocc::cache_testing::ScopedEnvironment;
using blocc::testing::dump_text;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

/// A softmax over one row per program: a load, two reductions (their
/// results broadcast back) and a masked store.
auto row_softmax_named(const std::string &name) {
  return bl::kernel(
      name, {"x", "out", "n", "BLOCK"},
      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n,
         bl::Const<int> BLOCK) {
        auto cols = bl::arange(0, BLOCK);
        auto mask = cols < n;
        auto row = bl::load(x + bl::program_id(0) * n + cols, mask, -INFINITY);
        auto e = bl::exp(row - bl::max(row, 0));
        bl::store(out + bl::program_id(0) * n + cols, e / bl::sum(e, 0), mask);
      });
}

const float *kNoData = nullptr;

TEST(GpuInspection, StagesCompileWithoutAGpu) {
  auto softmax = row_softmax_named("inspect_gpu_softmax");
  bl::Stages stages = softmax.asm_for(bl::Target::gpu("sm_90", 8), kNoData,
                                      kNoData, 1000, 1024);
  using S = bl::Stage;
  ASSERT_EQ(stages.texts.size(), 5u);
  EXPECT_EQ(stages.target, "sm_90 (8 warps)");
  EXPECT_EQ(stages.specialization, "BLOCK=1024");
  EXPECT_EQ(stages[S::Ir], softmax.ir_for(kNoData, kNoData, 1000, 1024));
  const std::string &ptx = stages[S::Ptx];
  EXPECT_THAT(ptx, HasSubstr(".target sm_90"));
  EXPECT_THAT(ptx, HasSubstr(".entry inspect_gpu_softmax("));
  EXPECT_THAT(ptx, HasSubstr(".maxntid 256"));
  EXPECT_THAT(stages[S::Llir], HasSubstr("define "));
  EXPECT_THAT(stages[S::Llir], HasSubstr("inspect_gpu_softmax"));
  if (ptxas()) {
    EXPECT_EQ(ptxas_errors(ptx, "sm_90"), "");
  }
}

TEST(GpuInspection, LayoutsAnnotateTheIrAndReadBackAsIt) {
  auto softmax = row_softmax_named("inspect_gpu_layouts");
  bl::Stages stages = softmax.asm_for(bl::Target::gpu("sm_90", 4), kNoData,
                                      kNoData, 1000, 1024);
  const std::string &layouts = stages[bl::Stage::Layouts];
  EXPECT_THAT(layouts,
              StartsWith("// layouts of inspect_gpu_layouts for 4 warps:\n"
                         "//   #blocked0 = blocked<"));
  // The load is in a layout; the store says which one it writes from; the
  // reductions say what they read.
  bool load_noted = false;
  std::istringstream lines(layouts);
  for (std::string line; std::getline(lines, line);)
    if (line.find("= load ") != std::string::npos)
      load_noted = line.find("// #blocked0") != std::string::npos;
  EXPECT_TRUE(load_noted) << layouts;
  EXPECT_THAT(layouts, HasSubstr("stores from #blocked0"));
  EXPECT_THAT(layouts, HasSubstr("reads its operands in #blocked0"));
  // Each blocked layout also as its linear map: one element per lane in
  // each of 8 rounds over the 1024 (lanes, then warps, then registers).
  EXPECT_THAT(layouts,
              HasSubstr("\n//     linear: register: [128] [256] [512]; "
                        "lane: [1] [2] [4] [8] [16]; warp: [32] [64] -> "
                        "dim0: 2^10\n"));
  // The notes are comments: the text is the IR with its layouts as
  // attributes (the function's blocked layouts, each op's own).
  std::unique_ptr<bl::ir::Function> read = bl::ir::parse_function(layouts);
  EXPECT_EQ(read->attributes().count("blocked0"), 1u);
  read->attributes().clear();
  read->walk([](bl::ir::Operation &op) {
    for (const char *key :
         {"layout", "home", "layouts", "store_layout", "reduce_layout"})
      op.attributes().erase(key);
  });
  EXPECT_EQ(bl::ir::print(*read), stages[bl::Stage::Ir]);
}

// One tile product of BLOCK x BLOCK blocks of T into f32.
template <typename T> auto tile_product_named(const std::string &name) {
  return bl::kernel(
      name, {"a", "b", "c", "BLOCK"},
      [](bl::Ptr<T> a, bl::Ptr<T> b, bl::Ptr<float> c, bl::Const<int> BLOCK) {
        auto r = bl::expand_dims(bl::arange(0, BLOCK), 1);
        auto k = bl::expand_dims(bl::arange(0, BLOCK), 0);
        auto x = bl::load(a + r * BLOCK + k);
        auto y = bl::load(b + r * BLOCK + k);
        bl::store(c + r * BLOCK + k, bl::dot(x, y, bl::InputPrecision::IEEE));
      });
}

// The layouts stage says where each dot runs: on tensor cores, with the
// tiles each warp multiplies, or on the CUDA cores, with the reason.
TEST(GpuInspection, LayoutsSayWhichUnitsEachDotRunsOn) {
  auto halves = tile_product_named<bl::half>("inspect_dot_halves");
  const bl::half *no_halves = nullptr;
  auto layouts = [&](auto &kernel, const auto *data, int warps, int block) {
    return kernel.asm_for(bl::Target::gpu("sm_90", warps), data, data, kNoData,
                          block)[bl::Stage::Layouts];
  };
  EXPECT_THAT(layouts(halves, no_halves, 4, 64),
              HasSubstr("on tensor cores: mma.sync m16n8k16 f16 into f32, "
                        "warps 2 x 2, 8 tiles of 16 x 8 per warp"));
  auto hopper = halves.asm_for(bl::Target::gpu("sm_90a", 8), no_halves,
                               no_halves, kNoData, 128)[bl::Stage::Layouts];
  EXPECT_THAT(hopper, HasSubstr("on tensor cores: wgmma m64n128k16 f16 into "
                                "f32, warpgroups: 2 along M, each issuing 1 "
                                "per step of K"));
  EXPECT_THAT(layouts(halves, no_halves, 4, 16),
              HasSubstr("on CUDA cores: 16 x 16 on 4 warps (tensor cores "
                        "take a 16 x 8 tile or more per warp)"));
  auto floats = tile_product_named<float>("inspect_dot_floats");
  EXPECT_THAT(layouts(floats, kNoData, 4, 64),
              HasSubstr("on CUDA cores: tensor<64x64xf32> by tensor<64x64xf32> "
                        "into f32 with input_precision ieee (tensor cores "
                        "round f32 inputs to tf32)"));
}

TEST(GpuInspection, ABadTargetIsAnErrorNamingIt) {
  auto softmax = row_softmax_named("inspect_gpu_bad_target");
  EXPECT_THAT(error_of([&] {
                softmax.asm_for(bl::Target::gpu("sm_70"), kNoData, kNoData,
                                1000, 1024);
              }),
              HasSubstr("sm_70"));
  EXPECT_EQ(error_of([&] {
              softmax.asm_for(bl::Target::gpu("sm_90", 3), kNoData, kNoData,
                              1000, 1024);
            }),
            "kernel 'inspect_gpu_bad_target': num_warps must be a power of "
            "two from 1 to 32, got 3");
}

TEST(GpuInspection, BloccDumpOnAGpuLaunchPrintsWhatAsmForReturns) {
  BLOCC_REQUIRE_GPU();
  auto softmax = row_softmax_named("inspect_gpu_dumped");
  const int rows = 3, n = 1000;
  auto x = random_values<float>(rows * n, -4, 4);
  DeviceBuffer<float> dx(x);
  auto dout = poisoned_on_gpu<float>(rows * n);
  // A first module load may warn once about the driver's PTX compiler
  // (runtime/cuda/ptx_assembler.h): let it happen before the capture.
  row_softmax_named("inspect_gpu_first_load")[{rows}](dx, dout, n, 1024);
  std::string printed;
  {
    ScopedEnvironment env("BLOCC_DUMP", "ptx,layouts");
    ::testing::internal::CaptureStderr();
    softmax[{rows}](dx, dout, n, 1024);
    printed = ::testing::internal::GetCapturedStderr();
  }
  std::vector<float> out = dout.to_host();
  const std::string arch = nvptx::arch_for_device(0).name();
  bl::Stages want = softmax.inspect(
      {bl::detail::to_arg(kNoData), bl::detail::to_arg(kNoData),
       bl::detail::to_arg(n), bl::detail::to_arg(1024)},
      bl::Target::gpu(arch, 4), {bl::Stage::Layouts, bl::Stage::Ptx});
  EXPECT_EQ(printed, dump_text(want));
  for (int r = 0; r < rows; ++r) {
    double max = -INFINITY, sum = 0;
    for (int c = 0; c < n; ++c)
      max = std::max(max, double(x[r * n + c]));
    for (int c = 0; c < n; ++c)
      sum += std::exp(double(x[r * n + c]) - max);
    for (int c = 0; c < n; ++c)
      ASSERT_NEAR(out[r * n + c], std::exp(double(x[r * n + c]) - max) / sum,
                  1e-6)
          << r << ", " << c;
  }
}

} // namespace
