// Inspection on the CPU (jit/stages.h): Kernel::asm_for returns the
// text of each stage of a specialization, and BLOCC_DUMP prints the very
// same texts, under one header per stage, as a launch compiles. Unknown
// stage names and stages a target lacks are errors that name the valid
// ones.
#include "cpu/cache_support.h"
#include "cpu/support.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "stage_texts.h"

namespace bl = blocc;
using namespace blocc::cpu_testing;
using blocc::cache_testing::ScopedEnvironment;
using blocc::testing::dump_text;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

/// An axpy under `name`: every test gets a function of its own, since
/// BLOCC_DUMP prints a specialization once per process.
auto axpy_named(const std::string &name) {
  return bl::kernel(
      name, {"x", "y", "n", "BLOCK"},
      [](bl::Ptr<float> x, bl::Ptr<float> y, bl::i32 n, bl::Const<int> BLOCK) {
        auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
        auto mask = offsets < n;
        auto a = bl::load(x + offsets, mask);
        bl::store(y + offsets, a * 2.0f + bl::load(y + offsets, mask), mask);
      });
}

const float *kNoData = nullptr;

std::vector<bl::Stage> stages_of(const bl::Stages &stages) {
  std::vector<bl::Stage> list;
  for (const bl::Stages::Text &t : stages.texts)
    list.push_back(t.stage);
  return list;
}

TEST(Inspection, EachTargetListsItsStagesInPipelineOrder) {
  using S = bl::Stage;
  EXPECT_EQ(bl::Target::interpreter().stages(),
            (std::vector<S>{S::Traced, S::Ir}));
  EXPECT_EQ(bl::Target::cpu().stages(),
            (std::vector<S>{S::Traced, S::Ir, S::Llir, S::Asm}));
  EXPECT_EQ(bl::Target::gpu().stages(),
            (std::vector<S>{S::Traced, S::Ir, S::Layouts, S::Llir, S::Ptx}));
  std::string names;
  for (S s : {S::Traced, S::Ir, S::Layouts, S::Llir, S::Ptx, S::Asm})
    names += std::string(bl::stage_name(s)) + " ";
  EXPECT_EQ(names, "traced ir layouts llir ptx asm ");
  EXPECT_EQ(bl::Target::gpu("sm_80", 1).str(), "sm_80 (1 warp)");
  EXPECT_EQ(bl::Target::cpu(bl::Check::Bounds).str(), "cpu (checked: bounds)");
}

TEST(Inspection, CpuStagesDescribeTheCodeTheJitLinks) {
  auto axpy = axpy_named("inspect_cpu_axpy");
  bl::Stages stages =
      axpy.asm_for(bl::Target::cpu(), kNoData, kNoData, 1000, 256);
  using S = bl::Stage;
  EXPECT_EQ(stages_of(stages),
            (std::vector<S>{S::Traced, S::Ir, S::Llir, S::Asm}));
  EXPECT_EQ(stages.kernel, "inspect_cpu_axpy");
  EXPECT_EQ(stages.specialization, "BLOCK=256");
  EXPECT_THAT(stages.target, StartsWith("cpu (x86_64"));
  // ir is what ir_for shows; traced is before the generic passes, and
  // both are IR that reads back.
  EXPECT_EQ(stages[S::Ir], axpy.ir_for(kNoData, kNoData, 1000, 256));
  EXPECT_EQ(bl::ir::print(*bl::ir::parse_function(stages[S::Traced])),
            stages[S::Traced]);
  EXPECT_NE(stages[S::Traced], stages[S::Ir]);
  EXPECT_THAT(stages[S::Llir], HasSubstr("define "));
  EXPECT_THAT(stages[S::Llir], HasSubstr("inspect_cpu_axpy.blocc"));
  EXPECT_THAT(stages[S::Asm], HasSubstr("inspect_cpu_axpy.blocc:"));
  EXPECT_THAT(stages[S::Asm], HasSubstr("ret"));
  EXPECT_EQ(stages.header(S::Asm),
            "// ===== blocc: asm of kernel 'inspect_cpu_axpy' (BLOCK=256) "
            "for " +
                stages.target);
}

TEST(Inspection, TheCheckedVariantIsItsOwnCode) {
  auto axpy = axpy_named("inspect_checked_axpy");
  const std::string unchecked = axpy.asm_for(
      bl::Target::cpu(), kNoData, kNoData, 1000, 256)[bl::Stage::Llir];
  bl::Stages checked = axpy.asm_for(bl::Target::cpu(bl::Check::Bounds), kNoData,
                                    kNoData, 1000, 256);
  EXPECT_THAT(checked.target, HasSubstr("checked: bounds"));
  EXPECT_NE(checked[bl::Stage::Llir], unchecked);
}

TEST(Inspection, AStageTheTargetLacksIsAnErrorNamingItsStages) {
  auto axpy = axpy_named("inspect_missing_stage");
  std::string error = error_of([&] {
    axpy.inspect({bl::detail::to_arg(kNoData), bl::detail::to_arg(kNoData),
                  bl::detail::to_arg(10), bl::detail::to_arg(64)},
                 bl::Target::cpu(), {bl::Stage::Ptx});
  });
  EXPECT_EQ(error, "kernel 'inspect_missing_stage': 'ptx' is not a stage of "
                   "target cpu; its stages are traced, ir, llir, asm");
  bl::Stages ir_only =
      axpy.inspect({bl::detail::to_arg(kNoData), bl::detail::to_arg(kNoData),
                    bl::detail::to_arg(10), bl::detail::to_arg(64)},
                   bl::Target::cpu(), {bl::Stage::Ir});
  EXPECT_THAT(error_of([&] { ir_only[bl::Stage::Asm]; }),
              HasSubstr("no stage 'asm' was compiled for cpu"));
}

/// Runs `axpy` once on the CPU backend with BLOCC_DUMP=`dump` and returns
/// what it printed on stderr.
template <typename K>
std::string dumped_by_launch(K &axpy, const char *dump, int n = 1000) {
  auto x = random_values<float>(n, -1, 1);
  auto y = random_values<float>(n, -1, 1);
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i)
    want[i] = 2.0 * x[i] + y[i];
  ScopedEnvironment env("BLOCC_DUMP", dump);
  ::testing::internal::CaptureStderr();
  axpy[{(n + 255) / 256}].with(kCpu)(x, y, n, 256);
  std::string printed = ::testing::internal::GetCapturedStderr();
  for (int i = 0; i < n; ++i)
    EXPECT_NEAR(y[i], want[i], 1e-6) << i;
  return printed;
}

TEST(Inspection, BloccDumpPrintsWhatAsmForReturns) {
  auto axpy = axpy_named("inspect_dumped_axpy");
  std::string printed = dumped_by_launch(axpy, "ir,asm,llir");
  bl::Stages want = axpy.inspect(
      {bl::detail::to_arg(kNoData), bl::detail::to_arg(kNoData),
       bl::detail::to_arg(1000), bl::detail::to_arg(256)},
      bl::Target::cpu(), {bl::Stage::Ir, bl::Stage::Llir, bl::Stage::Asm});
  // Pipeline order, whatever the order asked in.
  EXPECT_EQ(printed, dump_text(want));
  // Once per specialization: a second launch prints nothing.
  EXPECT_EQ(dumped_by_launch(axpy, "ir,asm,llir"), "");
}

TEST(Inspection, BloccDumpAllAndTheOlderNameLlvm) {
  auto all = axpy_named("inspect_dump_all");
  bl::Stages every =
      all.asm_for(bl::Target::cpu(), kNoData, kNoData, 1000, 256);
  EXPECT_EQ(dumped_by_launch(all, "all"), dump_text(every));
  auto llvm = axpy_named("inspect_dump_llvm");
  std::string printed = dumped_by_launch(llvm, "llvm");
  EXPECT_THAT(printed,
              StartsWith("// ===== blocc: llir of kernel 'inspect_dump_llvm'"));
  EXPECT_EQ(printed.find("// ===== blocc: ir"), std::string::npos);
}

TEST(Inspection, BloccDumpOnTheInterpreterPrintsTheIr) {
  auto axpy = axpy_named("inspect_dump_interpreter");
  auto x = random_values<float>(100, -1, 1);
  std::vector<float> y(100, 0.0f);
  ScopedEnvironment env("BLOCC_DUMP", "traced,ir,asm");
  ::testing::internal::CaptureStderr();
  axpy[{1}].with(on(bl::Backend::Interpreter))(x, y, 100, 128);
  std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(printed, dump_text(axpy.asm_for(bl::Target::interpreter(), kNoData,
                                            kNoData, 100, 128)));
}

TEST(Inspection, AnUnknownBloccDumpStageIsAnErrorAndNothingRuns) {
  auto axpy = axpy_named("inspect_dump_unknown");
  auto x = random_values<float>(100, -1, 1);
  const std::vector<float> poison = poisoned<float>(100);
  std::vector<float> y = poison;
  ScopedEnvironment env("BLOCC_DUMP", "ir,ttgir");
  std::string error = error_of([&] { axpy[{1}].with(kCpu)(x, y, 100, 128); });
  EXPECT_EQ(error, "BLOCC_DUMP='ir,ttgir': 'ttgir' is not a stage; expected a "
                   "comma-separated list of traced, ir, layouts, llir, ptx, "
                   "asm, all (every stage), or llvm (another name for llir)");
  EXPECT_EQ(0, std::memcmp(y.data(), poison.data(), 100 * sizeof(float)))
      << "the kernel ran";
}

} // namespace
