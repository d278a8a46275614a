// The PTX disk cache (backends/nvptx/ptx_disk_cache.h): a kernel compiled
// once is read back by a process that starts with an empty in-memory cache
// (simulated by forgetting it), without LLVM, as the same PTX with the same
// launch facts (dynamic shared memory; fault sites, which the GPU part
// checks through a fault of a kernel read from disk); a corrupt entry is
// compiled again; another architecture is another entry; with the cache
// off nothing is stored; the cubin of a named PTX assembler is kept too.
// The launches skip without a GPU.
#include "nvptx/support.h"

#include "backends/nvptx/ptx_disk_cache.h"
#include "cpu/cache_support.h"
#include "runtime/cuda/ptx_assembler.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;
using namespace blocc::cache_testing;

namespace {

// A load needed as a row and as the column of a BLOCK x 2 tile (a
// conversion through shared memory of the whole block: dynamic beyond 48
// KB), and a division by a run-time value (a fault site).
int divide_line = 0;
auto convert_and_divide = bl::kernel(
    "convert_and_divide",
    [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> row, bl::Ptr<int32_t> tile,
       bl::i32 divisor, bl::Const<int> BLOCK) {
      auto cols = bl::arange(0, BLOCK);
      divide_line = __LINE__ + 1;
      auto v = bl::load(x + cols) / divisor;
      bl::store(row + cols, v);
      auto pair = bl::expand_dims(bl::arange(0, 2), 0);
      bl::store(tile + bl::expand_dims(cols, 1) * 2 + pair,
                bl::broadcast_to(bl::expand_dims(v, 1), {BLOCK, 2}));
    });

struct Counts {
  size_t llvm_compiles, disk_hits, disk_rejected, disk_writes;
};

class PtxDiskCache : public ::testing::Test {
protected:
  void SetUp() override { nvptx::clear_memory_cache_for_testing(); }
  void TearDown() override { nvptx::clear_memory_cache_for_testing(); }

  /// What compiling `function` for `arch` did to the counters.
  Counts compile(const ir::Function &function, const char *arch,
                 std::shared_ptr<const nvptx::CompiledKernel> *out = nullptr) {
    nvptx::CacheCounters before = nvptx::cache_counters();
    nvptx::CompileOptions options;
    options.arch = nvptx::GpuArch::parse(arch);
    options.num_warps = 8;
    auto kernel = nvptx::compile(function, options);
    if (out)
      *out = kernel;
    nvptx::CacheCounters after = nvptx::cache_counters();
    return {after.llvm_compiles - before.llvm_compiles,
            after.disk_hits - before.disk_hits,
            after.disk_rejected - before.disk_rejected,
            after.disk_writes - before.disk_writes};
  }

  /// Entries one kernel leaves: its PTX, and its cubin where BLOCC_PTXAS
  /// names an assembler for this process (TheAssemblersCubinIsKeptToo).
  const size_t per_kernel = cuda::ptx_assembler() ? 2 : 1;

  TemporaryDirectory temporary;
  const std::string directory = temporary / "cache";
  ScopedEnvironment cache_dir{"BLOCC_CACHE_DIR", directory};
};

const ir::Function &specialization_of_size(int block) {
  std::vector<int32_t> x(block), row(block), tile(2 * block);
  return specialization(convert_and_divide, x, row, tile, 3, block);
}

TEST_F(PtxDiskCache, ASecondProcessReadsThePtxInsteadOfRunningLlvm) {
  const ir::Function &f = specialization_of_size(16384);
  std::shared_ptr<const nvptx::CompiledKernel> first, again;
  Counts cold = compile(f, "sm_90", &first);
  EXPECT_EQ(cold.llvm_compiles, 1u);
  EXPECT_EQ(cold.disk_hits, 0u);
  EXPECT_EQ(cold.disk_writes, per_kernel);
  EXPECT_EQ(entries_in(directory).size(), per_kernel);

  nvptx::clear_memory_cache_for_testing();
  Counts warm = compile(f, "sm_90", &again);
  EXPECT_EQ(warm.llvm_compiles, 0u);
  EXPECT_EQ(warm.disk_hits, per_kernel);
  EXPECT_EQ(warm.disk_writes, 0u);
  EXPECT_EQ(nvptx::ptx_of(*again), nvptx::ptx_of(*first));
  EXPECT_EQ(nvptx::dynamic_shared_bytes(*again),
            nvptx::dynamic_shared_bytes(*first));
  EXPECT_GT(nvptx::dynamic_shared_bytes(*again), 48 * 1024);

  // In memory now: neither LLVM nor the disk.
  Counts memory = compile(f, "sm_90");
  EXPECT_EQ(memory.llvm_compiles + memory.disk_hits, 0u);
}

TEST_F(PtxDiskCache, AnotherArchitectureIsAnotherEntry) {
  const ir::Function &f = specialization_of_size(256);
  EXPECT_EQ(compile(f, "sm_90").llvm_compiles, 1u);
  nvptx::clear_memory_cache_for_testing();
  EXPECT_EQ(compile(f, "sm_80").llvm_compiles, 1u);
  EXPECT_EQ(entries_in(directory).size(), 2 * per_kernel);
  nvptx::clear_memory_cache_for_testing();
  EXPECT_EQ(compile(f, "sm_80").disk_hits, per_kernel);
}

TEST_F(PtxDiskCache, ACorruptEntryIsCompiledAgain) {
  const ir::Function &f = specialization_of_size(512);
  std::shared_ptr<const nvptx::CompiledKernel> first, again;
  compile(f, "sm_86", &first);
  std::vector<std::string> entries = entries_in(directory);
  ASSERT_EQ(entries.size(), per_kernel);
  for (const std::string &entry : entries) {
    std::string path = directory + "/" + entry;
    std::string bytes = read_file(path);
    bytes[bytes.size() - 10] ^= 0x20; // inside the PTX (or cubin)
    write_file(path, bytes);
  }
  nvptx::clear_memory_cache_for_testing();
  Counts counts = compile(f, "sm_86", &again);
  EXPECT_EQ(counts.disk_rejected, per_kernel);
  EXPECT_EQ(counts.llvm_compiles, 1u);
  EXPECT_EQ(counts.disk_writes, per_kernel);
  EXPECT_EQ(nvptx::ptx_of(*again), nvptx::ptx_of(*first));
}

TEST_F(PtxDiskCache, OffStoresNothing) {
  ScopedEnvironment off("BLOCC_CACHE_DIR", "off");
  const ir::Function &f = specialization_of_size(128);
  Counts counts = compile(f, "sm_90");
  EXPECT_EQ(counts.llvm_compiles, 1u);
  EXPECT_EQ(counts.disk_writes, 0u);
  EXPECT_TRUE(entries_in(directory).empty());
}

// The cubin of the assembler BLOCC_PTXAS names is kept beside the PTX:
// a second process reads it instead of running ptxas; another assembler
// (path or release) is another entry. The stand-in tests/fake_cuda/fake_ptxas
// writes "FAKE CUBIN <arch>" and the PTX.
TEST_F(PtxDiskCache, TheAssemblersCubinIsKeptToo) {
  const cuda::PtxAssembler fake{BLOCC_FAKE_PTXAS, 13050};
  const std::string ptx = ptx_for(specialization_of_size(128));
  const std::string want = "FAKE CUBIN sm_90\n" + ptx;
  auto counters = [] { return nvptx::ptx_disk_counters(); };
  nvptx::PtxDiskCounters before = counters();
  EXPECT_EQ(nvptx::cached_cubin(fake, "key", ptx, "kernel 'k'"), want);
  EXPECT_EQ(counters().writes, before.writes + 1);
  EXPECT_EQ(counters().hits, before.hits);
  EXPECT_EQ(nvptx::cached_cubin(fake, "key", ptx, "kernel 'k'"), want);
  EXPECT_EQ(counters().writes, before.writes + 1);
  EXPECT_EQ(counters().hits, before.hits + 1);
  const cuda::PtxAssembler newer{BLOCC_FAKE_PTXAS, 13060};
  EXPECT_EQ(nvptx::cached_cubin(newer, "key", ptx, "kernel 'k'"), want);
  EXPECT_EQ(counters().writes, before.writes + 2);
  EXPECT_EQ(counters().hits, before.hits + 1);
}

TEST_F(PtxDiskCache, AKernelFromDiskRunsAndReportsItsFaults) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int block = 16384;
  auto x = random_values<int32_t>(block, -1000000, 1000000);
  DeviceBuffer<int32_t> dx(x);
  auto drow = poisoned_on_gpu<int32_t>(block);
  auto dtile = poisoned_on_gpu<int32_t>(2 * block);
  LaunchOptions options = on(Backend::Gpu, 8);
  convert_and_divide[{1}].with(options)(dx, drow, dtile, 7, block);
  nvptx::clear_memory_cache_for_testing();
  nvptx::CacheCounters before = nvptx::cache_counters();
  drow = poisoned_on_gpu<int32_t>(block);
  convert_and_divide[{1}].with(options)(dx, drow, dtile, 7, block);
  EXPECT_EQ(nvptx::cache_counters().disk_hits, before.disk_hits + per_kernel);
  std::vector<int32_t> row = poisoned<int32_t>(block),
                       tile = poisoned<int32_t>(2 * block);
  convert_and_divide[{1}].with(kCpu)(x, row, tile, 7, block);
  EXPECT_TRUE(same_bits(drow.to_host(), row));
  EXPECT_TRUE(same_bits(dtile.to_host(), tile));
  EXPECT_THAT(error_of([&] {
                convert_and_divide[{1}].with(options)(dx, drow, dtile, 0,
                                                      block);
                cuda::synchronize(); // where a GPU fault surfaces
              }),
              ::testing::HasSubstr("ptx_disk_cache_test.cpp:" +
                                   std::to_string(divide_line)));
}

} // namespace
