// JIT-compiled kernels carry the user's name: the function the CPU backend
// links is "<kernel>.blocc", and with BLOCC_PERF_MAP=1 each loaded kernel
// gets a line in /tmp/perf-<pid>.map, so that `perf report` names its
// samples (backends/cpu/perf_map.h).
#include "cpu/cache_support.h"
#include "cpu/support.h"

#include <fstream>
#include <sstream>
#include <unistd.h>

namespace bl = blocc;
using namespace blocc::cpu_testing;
using blocc::cache_testing::ScopedEnvironment;

namespace {

auto copy_named(const std::string &name) {
  return bl::kernel(name, [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
    auto offsets = bl::program_id(0) * 64 + bl::arange(0, 64);
    auto mask = offsets < n;
    bl::store(out + offsets, bl::load(x + offsets, mask), mask);
  });
}

std::string perf_map_path() {
  return "/tmp/perf-" + std::to_string(static_cast<long>(getpid())) + ".map";
}

/// The lines of this process's perf map naming `symbol`.
std::vector<std::string> map_lines_naming(const std::string &symbol) {
  std::ifstream map(perf_map_path());
  std::vector<std::string> found;
  for (std::string line; std::getline(map, line);)
    if (line.size() > symbol.size() &&
        line.compare(line.size() - symbol.size() - 1, std::string::npos,
                     " " + symbol) == 0)
      found.push_back(line);
  return found;
}

TEST(PerfMap, NamesEachLoadedKernelWhenAskedFor) {
  // Names of this test alone (the IR, hence the compile, is the kernel's
  // own); the second is made an identifier.
  auto recorded = copy_named("perf_map_recorded");
  auto spaced = copy_named("perf map spaced");
  auto unrecorded = copy_named("perf_map_unrecorded");
  auto x = random_values<float>(100, -1, 1);
  std::vector<float> out(100);
  {
    ScopedEnvironment map("BLOCC_PERF_MAP", "1");
    recorded[{2}].with(kCpu)(x, out, 100);
    spaced[{2}].with(kCpu)(x, out, 100);
  }
  {
    ScopedEnvironment map("BLOCC_PERF_MAP", nullptr);
    unrecorded[{2}].with(kCpu)(x, out, 100);
  }
  EXPECT_EQ(out, x);
  for (const char *symbol :
       {"perf_map_recorded.blocc", "perf_map_spaced.blocc"}) {
    std::vector<std::string> lines = map_lines_naming(symbol);
    ASSERT_EQ(lines.size(), 1u) << symbol << " in " << perf_map_path();
    std::istringstream fields(lines[0]);
    uint64_t start = 0, size = 0;
    fields >> std::hex >> start >> size;
    EXPECT_NE(start, 0u) << lines[0];
    EXPECT_GT(size, 0u) << lines[0];
  }
  EXPECT_TRUE(map_lines_naming("perf_map_unrecorded.blocc").empty());
  std::remove(perf_map_path().c_str());
}

} // namespace
