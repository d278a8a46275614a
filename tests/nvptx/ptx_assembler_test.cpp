// Choosing and running the PTX assembler (runtime/cuda/ptx_assembler.h),
// without a GPU: BLOCC_PTXAS's values, the release `ptxas --version`
// reports, the warning for the driver's JIT, and assembling the PTX the
// backend generates, with a fake ptxas everywhere (tests/fake_cuda) and
// with the real one where it is on PATH.
#include "nvptx/support.h"
#include "runtime/cuda/ptx_assembler.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;
using blocc::cuda::PtxAssembler;

namespace {

auto scale =
    bl::kernel("scale", [](bl::Ptr<float> x, bl::i32 n, bl::Const<int> BLOCK) {
      auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offsets < n;
      bl::store(x + offsets, bl::load(x + offsets, mask) * 2.0f, mask);
    });

std::string scale_ptx() {
  std::vector<float> x(100);
  return ptx_for(specialization(scale, x, 100, 128));
}

std::string error_of(const std::function<void()> &call) {
  try {
    call();
  } catch (const blocc::Error &e) {
    return e.what();
  }
  return "";
}

TEST(PtxAssembler, ReadsTheReleaseThatPtxasReports) {
  EXPECT_EQ(bl::cuda::parse_ptxas_version(
                "ptxas: NVIDIA (R) Ptx optimizing assembler\n"
                "Copyright (c) 2005-2025 NVIDIA Corporation\n"
                "Built on Wed_Aug_20_01:55:12_PM_PDT_2025\n"
                "Cuda compilation tools, release 13.0, V13.0.88\n"
                "Build cuda_13.0.r13.0/compiler.36424714_0\n"),
            13000);
  EXPECT_EQ(bl::cuda::parse_ptxas_version("release 12.8, V12.8.93"), 12080);
  EXPECT_EQ(bl::cuda::parse_ptxas_version("release 13.5, V13.5.37"), 13050);
  EXPECT_EQ(bl::cuda::parse_ptxas_version("ptxas fatal: no input"), 0);
  EXPECT_EQ(bl::cuda::parse_ptxas_version("release thirteen"), 0);
  EXPECT_EQ(bl::cuda::cuda_release_name(13050), "13.5");
  EXPECT_EQ(bl::cuda::cuda_release_name(12080), "12.8");
}

TEST(PtxAssembler, UnsetEmptyOrDriverMeansTheDriversJit) {
  EXPECT_FALSE(bl::cuda::ptx_assembler_from_setting(nullptr));
  EXPECT_FALSE(bl::cuda::ptx_assembler_from_setting(""));
  EXPECT_FALSE(bl::cuda::ptx_assembler_from_setting("driver"));
}

TEST(PtxAssembler, APathIsRunForItsRelease) {
  std::optional<PtxAssembler> fake =
      bl::cuda::ptx_assembler_from_setting(BLOCC_FAKE_PTXAS);
  ASSERT_TRUE(fake);
  EXPECT_EQ(fake->path, BLOCC_FAKE_PTXAS);
  EXPECT_EQ(fake->version, 13050);
}

TEST(PtxAssembler, APathThatIsNoPtxasIsAnErrorNamingTheSetting) {
  std::string missing = error_of(
      [] { bl::cuda::ptx_assembler_from_setting("/nonexistent/ptxas"); });
  EXPECT_THAT(missing, ::testing::HasSubstr(
                           "BLOCC_PTXAS='/nonexistent/ptxas' is not a PTX "
                           "assembler blocc can run"));
  EXPECT_THAT(missing, ::testing::HasSubstr("did not run"));
  // A program that runs but reports no CUDA release.
  std::string not_ptxas =
      error_of([] { bl::cuda::ptx_assembler_from_setting("/bin/true"); });
  EXPECT_THAT(not_ptxas, ::testing::HasSubstr("BLOCC_PTXAS='/bin/true'"));
  EXPECT_THAT(not_ptxas, ::testing::HasSubstr("'driver'"));
}

TEST(PtxAssembler, AssemblesForTheArchitectureOfThePtx) {
  PtxAssembler fake{BLOCC_FAKE_PTXAS, 13050};
  std::string ptx = scale_ptx();
  ASSERT_EQ(bl::cuda::ptx_target(ptx, "kernel 'scale'"), "sm_90");
  std::string cubin = bl::cuda::assemble_ptx(fake, ptx, "kernel 'scale'");
  EXPECT_EQ(cubin, "FAKE CUBIN sm_90\n" + ptx);
}

TEST(PtxAssembler, ItsFailureNamesTheKernelAndQuotesIt) {
  PtxAssembler fake{BLOCC_FAKE_PTXAS, 13050};
  std::string ptx = ".version 8.0\n.target sm_90a\n// FAKE_PTXAS_FAILS\n";
  std::string error =
      error_of([&] { bl::cuda::assemble_ptx(fake, ptx, "kernel 'scale'"); });
  EXPECT_THAT(error, ::testing::HasSubstr("kernel 'scale': the PTX assembler " +
                                          std::string(BLOCC_FAKE_PTXAS) +
                                          " (CUDA 13.5) failed"));
  EXPECT_THAT(
      error, ::testing::HasSubstr("error   : the fake assembler rejects this"));
  EXPECT_THAT(error_of([&] {
                bl::cuda::assemble_ptx(fake, ".version 8.0\n", "kernel 'x'");
              }),
              ::testing::HasSubstr("kernel 'x': its PTX names no .target"));
}

TEST(PtxAssembler, TheRealPtxasMakesACubin) {
  if (!ptxas())
    GTEST_SKIP() << "ptxas is not on PATH";
  std::optional<PtxAssembler> real =
      bl::cuda::ptx_assembler_from_setting(ptxas()->c_str());
  ASSERT_TRUE(real);
  EXPECT_GE(real->version, 11000);
  std::string cubin = bl::cuda::assemble_ptx(*real, scale_ptx(), "kernel 's'");
  EXPECT_EQ(cubin.substr(0, 4), "\x7f"
                                "ELF");
  std::string error = error_of([&] {
    bl::cuda::assemble_ptx(*real, ".version 7.8\n.target sm_90\nnot ptx\n",
                           "kernel 'broken'");
  });
  EXPECT_THAT(error,
              ::testing::HasSubstr("kernel 'broken': the PTX assembler"));
  EXPECT_THAT(error, ::testing::HasSubstr("it said:"));
}

TEST(PtxAssembler, TheDriversJitWarnsWhereItHasAKnownMiscompile) {
  std::string warning = bl::cuda::driver_assembler_warning(13000, nullptr);
  EXPECT_THAT(warning, ::testing::HasSubstr("CUDA 13.0 driver"));
  EXPECT_THAT(warning, ::testing::HasSubstr("set BLOCC_PTXAS to the ptxas of "
                                            "CUDA 13.5 or newer"));
  EXPECT_EQ(bl::cuda::driver_assembler_warning(13000, "driver"), "");
  EXPECT_EQ(bl::cuda::driver_assembler_warning(13050, nullptr), "");
  EXPECT_EQ(bl::cuda::driver_assembler_warning(13020, ""),
            bl::cuda::driver_assembler_warning(13020, nullptr));
}

} // namespace
