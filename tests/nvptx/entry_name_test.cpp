// The PTX entry of a kernel is the user's name for it, so that profilers
// (Nsight Systems and Compute, torch.profiler: CUPTI reports the entry's
// name) show "softmax", not a name blocc made up. Names PTX cannot hold
// are made identifiers; names that could clash with the module's own
// symbols (blocc_shared, blocc_format, ..., the driver's vprintf) get
// "blocc_kernel_" in front. Each PTX is assembled by ptxas where it is on
// PATH (no GPU needed).
#include "nvptx/support.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;
using ::testing::HasSubstr;

namespace {

/// A row sum (shared memory across warps) that prints its result: the
/// kernel uses the module's shared buffer and vprintf, so that a name
/// clashing with either would fail to compile or to assemble.
auto row_sum_named(const std::string &name) {
  return bl::kernel(name, [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offsets = bl::program_id(0) * 1024 + bl::arange(0, 1024);
    auto total = bl::sum(bl::load(x + offsets));
    bl::device_print("total", {total});
    bl::store(out + bl::program_id(0), total);
  });
}

struct NameCase {
  std::string kernel; // the user's name
  std::string entry;  // the PTX entry's
};

class EntryName : public ::testing::TestWithParam<NameCase> {};

TEST_P(EntryName, IsTheUsersNameMadeAnIdentifier) {
  auto kernel = row_sum_named(GetParam().kernel);
  std::vector<float> x(2048), out(2);
  const ir::Function &f = specialization(kernel, x, out);
  nvptx::CompileOptions options;
  options.arch = nvptx::GpuArch::parse("sm_90");
  auto compiled = nvptx::compile(f, options);
  EXPECT_EQ(nvptx::ptx_entry(*compiled), GetParam().entry);
  EXPECT_THAT(nvptx::ptx_of(*compiled),
              HasSubstr(".visible .entry " + GetParam().entry + "("));
  EXPECT_EQ(nvptx::compile_ptx(f, options).entry, GetParam().entry);
  expect_ptx_assembles(f);
}

INSTANTIATE_TEST_SUITE_P(
    Names, EntryName,
    ::testing::Values(NameCase{"softmax", "softmax"},
                      NameCase{"softmax_BLOCK1024", "softmax_BLOCK1024"},
                      // PTX opcodes are usable entry names.
                      NameCase{"add", "add"},
                      NameCase{"layer norm/fwd", "layer_norm_fwd"},
                      NameCase{"_private", "_private"},
                      NameCase{"2d_copy", "blocc_kernel_2d_copy"},
                      NameCase{"_", "blocc_kernel__"},
                      NameCase{"blocc_shared", "blocc_kernel_blocc_shared"},
                      NameCase{"vprintf", "blocc_kernel_vprintf"}),
    [](const ::testing::TestParamInfo<NameCase> &info) {
      return "case" + std::to_string(info.index);
    });

} // namespace
