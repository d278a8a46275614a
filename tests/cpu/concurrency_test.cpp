// Compiles and launches from many threads at once on the CPU backend (one
// specialization, several), with different data each, and many threads and
// processes sharing one disk cache directory: every result is right, each
// kernel is compiled once per process at most, and what the processes
// leave in the directory is whole, also when the directory is too small
// for their kernels and they evict each other's.
#include "cpu/cache_support.h"
#include "cpu/support.h"

#include "runtime/cpu/disk_cache.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <latch>
#include <sstream>
#include <thread>

extern char **environ;

namespace bl = blocc;
using namespace blocc::cpu_testing;
using namespace blocc::cache_testing;
using ::testing::IsEmpty;
using ::testing::SizeIs;

namespace {

auto make_affine() {
  return bl::kernel(
      "concurrent_affine", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n,
                              bl::f32 scale, bl::Const<int> BLOCK) {
        auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
        auto mask = offs < n;
        bl::store(out + offs,
                  bl::load(x + offs, mask) * scale + offs.to(bl::float32),
                  mask);
      });
}
using Affine = decltype(make_affine());

/// One launch on fresh data, checked against a float64 reference; "" when
/// right, else what went wrong (threads report, the main thread asserts).
std::string launch_and_check(Affine &affine, int n, int block, float scale,
                             uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> d(-3, 3);
  std::vector<float> x(n), out(n, std::numeric_limits<float>::quiet_NaN());
  for (auto &v : x)
    v = d(engine);
  try {
    affine[{bl::cdiv(n, block)}].with(kCpu)(x, out, n, scale, block);
  } catch (const std::exception &e) {
    return e.what();
  }
  for (int i = 0; i < n; ++i) {
    double product = double(x[i]) * scale, want = product + i;
    // Two float roundings, each relative to the operands' magnitude.
    if (!(std::abs(out[i] - want) <= 1e-6 * (std::abs(product) + i + 1)))
      return "element " + std::to_string(i) + " of n=" + std::to_string(n) +
             ", BLOCK=" + std::to_string(block) + ": got " +
             std::to_string(out[i]) + ", want " + std::to_string(want);
  }
  return "";
}

/// Runs `work(t)` on `threads` threads released at the same moment and
/// returns their error reports.
template <typename Work>
std::vector<std::string> at_once(int threads, const Work &work) {
  std::vector<std::string> errors(threads);
  std::latch start(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      errors[t] = work(t);
    });
  for (auto &thread : pool)
    thread.join();
  return errors;
}

using ConcurrentLaunches = FreshCacheTest;

TEST_F(ConcurrentLaunches, ManyThreadsOneSpecialization) {
  BLOCC_SEED_TRACE();
  const uint64_t base = rng()();
  auto affine = make_affine();
  CounterDelta delta;
  // Sizes all divisible by 16 and one BLOCK: one specialization, which
  // every thread asks for at the same moment.
  auto errors = at_once(16, [&](int t) {
    for (int repeat = 0; repeat < 4; ++repeat) {
      std::string e = launch_and_check(affine, 2048 + 16 * t, 128,
                                       0.5f + static_cast<float>(t),
                                       base + 100 * t + repeat);
      if (!e.empty())
        return e;
    }
    return std::string();
  });
  for (int t = 0; t < 16; ++t)
    EXPECT_EQ(errors[t], "") << "thread " << t;
  EXPECT_EQ(affine.num_specializations(), 1u);
  EXPECT_EQ(delta().jit_compiles, 1u);
  EXPECT_THAT(entries_in(directory), SizeIs(1));
}

TEST_F(ConcurrentLaunches, ManyThreadsManySpecializations) {
  BLOCC_SEED_TRACE();
  const uint64_t base = rng()();
  // Thread t runs specialization t % 8: four BLOCKs, n divisible by 16 or
  // not; two threads share each.
  auto work = [&](Affine &affine) {
    return [&, base](int t) {
      int block = 32 << (t % 4);
      int n = 1024 + 16 * t + (t % 8 < 4 ? 0 : 1); // % 16 == 0, or not
      for (int repeat = 0; repeat < 3; ++repeat) {
        std::string e =
            launch_and_check(affine, n, block, static_cast<float>(t) - 7.5f,
                             base + 100 * t + repeat);
        if (!e.empty())
          return e;
      }
      return std::string();
    };
  };
  CounterDelta delta;
  auto affine = make_affine();
  for (const std::string &e : at_once(16, work(affine)))
    EXPECT_EQ(e, "");
  EXPECT_EQ(affine.num_specializations(), 8u);
  EXPECT_EQ(delta().jit_compiles, 8u);
  EXPECT_THAT(entries_in(directory), SizeIs(8));

  // The threads of a "new process" find all eight on disk.
  bl::cpu::clear_memory_cache_for_testing();
  auto again = make_affine();
  for (const std::string &e : at_once(16, work(again)))
    EXPECT_EQ(e, "");
  EXPECT_EQ(delta().jit_compiles, 8u);
  EXPECT_EQ(delta().disk_hits, 8u);
  EXPECT_EQ(delta().disk_rejected, 0u);
}

// ------------------------------------------------------------- processes
constexpr int kProcessKernels = 3; // BLOCK 32, 64, 128

/// Launches kProcessKernels specializations and checks their results;
/// returns this process's counters.
bl::cpu::CacheCounters launch_process_kernels() {
  CounterDelta delta;
  auto affine = make_affine();
  for (int k = 0; k < kProcessKernels; ++k)
    EXPECT_EQ(launch_and_check(affine, 4099, 32 << k, 1.25f, rng()()), "");
  return delta();
}

const char *kCountersFile = "BLOCC_TEST_COUNTERS_FILE";

/// What a child tells its parent.
void write_report(const char *report, const bl::cpu::CacheCounters &c) {
  std::ofstream out(report);
  out << c.jit_compiles << " " << c.disk_hits << " " << c.disk_rejected << " "
      << c.disk_writes << "\n";
}

// In a child of ProcessesShareOneDiskCache (kCountersFile set): runs in its
// parent's cache directory and reports its counters. Alone: the same work
// in a directory of its own, with its own checks.
TEST(ConcurrentProcesses, EachProcessComputesAndCounts) {
  BLOCC_SEED_TRACE();
  const char *report = std::getenv(kCountersFile);
  TemporaryDirectory temporary;
  std::optional<ScopedEnvironment> own_cache;
  if (!report) {
    own_cache.emplace("BLOCC_CACHE_DIR", temporary / "cache");
    bl::cpu::clear_memory_cache_for_testing();
  }
  bl::cpu::CacheCounters c = launch_process_kernels();
  EXPECT_EQ(c.jit_compiles + c.disk_hits, size_t{kProcessKernels});
  EXPECT_EQ(c.disk_rejected, 0u);
  EXPECT_EQ(c.disk_write_failures, 0u);
  if (report) {
    write_report(report, c);
  } else {
    EXPECT_EQ(c.jit_compiles, size_t{kProcessKernels});
    EXPECT_THAT(entries_in(temporary / "cache"), SizeIs(kProcessKernels));
  }
}

constexpr char kChildTest[] = "EachProcessComputesAndCounts";

/// This test binary, running only ConcurrentProcesses.`test`, with the
/// cache in `cache` and its report in `report`; returns its pid.
pid_t spawn_child(const std::string &cache, const std::string &report,
                  const std::string &log, const std::string &test) {
  std::vector<std::string> environment;
  for (char **e = environ; *e; ++e) {
    std::string entry = *e;
    // The child runs one test whatever sharding or output its parent had.
    for (const char *drop : {"BLOCC_CACHE_DIR=", "GTEST_", kCountersFile})
      if (entry.rfind(drop, 0) == 0)
        entry.clear();
    if (!entry.empty())
      environment.push_back(entry);
  }
  environment.push_back("BLOCC_CACHE_DIR=" + cache);
  environment.push_back(std::string(kCountersFile) + "=" + report);
  std::vector<char *> envp;
  for (auto &e : environment)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string program = std::filesystem::read_symlink("/proc/self/exe");
  std::string filter = "--gtest_filter=ConcurrentProcesses." + test;
  char *argv[] = {program.data(), filter.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  int error =
      posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(error, 0) << "cannot start " << program;
  return error == 0 ? pid : -1;
}

struct ChildCounters {
  size_t jit_compiles = 0, disk_hits = 0, disk_rejected = 0, disk_writes = 0;
};

/// Starts `count` children at once on `cache`, waits for them, and returns
/// their reports (a failed child fails the test with its output).
std::vector<ChildCounters> run_children(int count, const std::string &cache,
                                        const TemporaryDirectory &scratch,
                                        int round,
                                        const std::string &test = kChildTest) {
  std::vector<pid_t> pids;
  auto name = [&](const char *what, int i) {
    return scratch / (what + std::to_string(round) + "-" + std::to_string(i));
  };
  for (int i = 0; i < count; ++i)
    pids.push_back(spawn_child(cache, name("report", i), name("log", i), test));
  std::vector<ChildCounters> reports;
  for (int i = 0; i < count; ++i) {
    int status = 0;
    if (pids[i] < 0 || ::waitpid(pids[i], &status, 0) != pids[i])
      continue;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child " << i << " of round " << round << " failed:\n"
        << read_file(name("log", i));
    ChildCounters c;
    std::istringstream in(read_file(name("report", i)));
    if (in >> c.jit_compiles >> c.disk_hits >> c.disk_rejected >> c.disk_writes)
      reports.push_back(c);
  }
  EXPECT_THAT(reports, SizeIs(count));
  return reports;
}

TEST(ConcurrentProcesses, ProcessesShareOneDiskCache) {
  TemporaryDirectory scratch;
  const std::string cache = scratch / "cache";
  const int children = 6;
  // All start cold at once: each kernel is compiled at least once, entries
  // written by several processes at the same moment stay whole, and no
  // process ever reads a torn one.
  size_t compiles = 0;
  for (const ChildCounters &c : run_children(children, cache, scratch, 1)) {
    EXPECT_EQ(c.disk_rejected, 0u);
    EXPECT_EQ(c.jit_compiles + c.disk_hits, size_t{kProcessKernels});
    compiles += c.jit_compiles;
  }
  EXPECT_GE(compiles, size_t{kProcessKernels});
  EXPECT_THAT(entries_in(cache), SizeIs(kProcessKernels));
  EXPECT_THAT(temporaries_in(cache), IsEmpty());
  // Then every process loads everything.
  for (const ChildCounters &c : run_children(children, cache, scratch, 2)) {
    EXPECT_EQ(c.jit_compiles, 0u);
    EXPECT_EQ(c.disk_hits, size_t{kProcessKernels});
    EXPECT_EQ(c.disk_writes, 0u);
  }
}

// ------------------------------------------------ processes evicting
// Processes sharing a cache too small for their kernels: every store
// evicts what others wrote, and maybe read, a moment ago. No launch fails,
// no entry is ever torn, and the cache ends under its cap.
constexpr int kEvictingKernels = 6; // BLOCK 16, 32, 64; n % 16 == 0 or not
constexpr int kEvictingPasses = 2;

/// kEvictingKernels specializations, kEvictingPasses times, each pass
/// from an empty in-memory cache as a new process would; returns the
/// counters.
bl::cpu::CacheCounters launch_evicting_kernels() {
  CounterDelta delta;
  for (int pass = 0; pass < kEvictingPasses; ++pass) {
    bl::cpu::clear_memory_cache_for_testing();
    auto affine = make_affine();
    for (int k = 0; k < kEvictingKernels; ++k)
      EXPECT_EQ(launch_and_check(affine, 2048 + (k < 3 ? 0 : 1), 16 << (k % 3),
                                 0.75f, rng()()),
                "");
  }
  return delta();
}

// In a child of ProcessesEvictingEachOtherNeverFail: the parent's cache
// and cap. Alone: a cap of one byte, so that every store evicts all, and
// every pass compiles again.
TEST(ConcurrentProcesses, EvictingProcessComputesAndCounts) {
  BLOCC_SEED_TRACE();
  const char *report = std::getenv(kCountersFile);
  TemporaryDirectory temporary;
  std::optional<ScopedEnvironment> own_cache, own_cap;
  if (!report) {
    own_cache.emplace("BLOCC_CACHE_DIR", temporary / "cache");
    own_cap.emplace("BLOCC_CACHE_MAX_SIZE", "1");
  }
  bl::cpu::CacheCounters c = launch_evicting_kernels();
  EXPECT_EQ(c.jit_compiles + c.disk_hits,
            size_t{kEvictingKernels * kEvictingPasses});
  EXPECT_EQ(c.disk_rejected, 0u);
  EXPECT_EQ(c.disk_write_failures, 0u);
  if (report) {
    write_report(report, c);
  } else {
    EXPECT_EQ(c.disk_hits, 0u);
    EXPECT_THAT(entries_in(temporary / "cache"), IsEmpty());
  }
}

TEST(ConcurrentProcesses, ProcessesEvictingEachOtherNeverFail) {
  TemporaryDirectory scratch;
  // Room for about a third of the kernels.
  uint64_t all_bytes = 0;
  {
    ScopedEnvironment sizes("BLOCC_CACHE_DIR", scratch / "sizes");
    bl::cpu::clear_memory_cache_for_testing();
    launch_evicting_kernels();
    for (const std::string &name : entries_in(scratch / "sizes"))
      all_bytes += std::filesystem::file_size(scratch / ("sizes/" + name));
    bl::cpu::clear_memory_cache_for_testing();
  }
  ASSERT_GT(all_bytes, 0u);
  const uint64_t cap = all_bytes / 3;
  ScopedEnvironment max_size("BLOCC_CACHE_MAX_SIZE", std::to_string(cap));
  const std::string cache = scratch / "cache";
  for (const ChildCounters &c :
       run_children(4, cache, scratch, 1, "EvictingProcessComputesAndCounts")) {
    EXPECT_EQ(c.disk_rejected, 0u);
    EXPECT_EQ(c.jit_compiles + c.disk_hits,
              size_t{kEvictingKernels * kEvictingPasses});
  }
  auto disk = bl::runtime::cpu::DiskCache::open(cache);
  ASSERT_NE(disk, nullptr);
  EXPECT_LE(disk->usage().bytes, cap);
  EXPECT_THAT(temporaries_in(cache), IsEmpty());
}

} // namespace
