// The disk compile cache's size bound (runtime/cpu/disk_cache_size.h):
// BLOCC_CACHE_MAX_SIZE's grammar and its errors; least-recently-used
// eviction (a hit counts as a use) that leaves the cache under the cap;
// scans only when the estimate passes the cap or every kRescanEveryWrites
// stores, never on hits; clearing; and many threads storing, loading,
// evicting and clearing at once never seeing a damaged entry. (Processes
// evicting each other: tests/cpu/concurrency_test.cpp.)
#include "cpu/cache_support.h"
#include "cpu/support.h"

#include "runtime/cpu/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <ctime>
#include <map>
#include <thread>

namespace bl = blocc;
namespace rt = blocc::runtime::cpu;
using namespace blocc::cpu_testing;
using namespace blocc::cache_testing;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

namespace {

// ---------------------------------------------------- BLOCC_CACHE_MAX_SIZE
TEST(CacheMaxSize, Grammar) {
  const std::pair<const char *, uint64_t> good[] = {
      {"1", 1},
      {"4096", 4096},
      {"0", 0},
      {"64K", 64 << 10},
      {"64k", 64 << 10},
      {"64KB", 64 << 10},
      {"64KiB", 64 << 10},
      {"3M", 3 << 20},
      {"3mib", 3 << 20},
      {"2G", uint64_t{2} << 30},
      {"1T", uint64_t{1} << 40},
      {"100B", 100},
      {"16777215T", uint64_t{16777215} << 40}, // the largest T that fits
      {"18446744073709551615", UINT64_MAX},
  };
  for (const auto &[text, bytes] : good)
    EXPECT_EQ(rt::parse_cache_size("V", text), bytes) << text;
}

TEST(CacheMaxSize, MalformedValuesAreErrorsNamingVariableAndValue) {
  const std::pair<const char *, const char *> bad[] = {
      {"", "is not a size"},
      {"abc", "is not a size"},
      {"-1", "is not a size"},
      {"1.5G", "is not a size"},
      {"12X", "is not a size"},
      {"G", "is not a size"},
      {" 1G", "is not a size"},
      {"1G ", "is not a size"},
      {"1 G", "is not a size"},
      {"1GG", "is not a size"},
      {"1iB", "is not a size"},
      {"18446744073709551616", "is too large"},
      {"16777216T", "is too large"},
      {"99999999999999999999999K", "is too large"},
  };
  for (const auto &[text, why] : bad) {
    SCOPED_TRACE(text);
    try {
      rt::parse_cache_size("BLOCC_CACHE_MAX_SIZE", text);
      ADD_FAILURE() << "accepted";
    } catch (const bl::Error &e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("BLOCC_CACHE_MAX_SIZE='") +
                                      text + "' " + why));
      EXPECT_THAT(e.what(), HasSubstr("K, M, G or T"));
    }
  }
}

TEST(CacheMaxSize, EnvironmentDefaultsToOneGibAndZeroMeansNoLimit) {
  {
    ScopedEnvironment unset("BLOCC_CACHE_MAX_SIZE", nullptr);
    EXPECT_EQ(rt::cache_max_bytes_from_environment(), uint64_t{1} << 30);
  }
  {
    ScopedEnvironment empty("BLOCC_CACHE_MAX_SIZE", "");
    EXPECT_EQ(rt::cache_max_bytes_from_environment(), uint64_t{1} << 30);
  }
  {
    ScopedEnvironment zero("BLOCC_CACHE_MAX_SIZE", "0");
    EXPECT_EQ(rt::cache_max_bytes_from_environment(), rt::kNoCacheLimit);
  }
  ScopedEnvironment set("BLOCC_CACHE_MAX_SIZE", "200M");
  EXPECT_EQ(rt::cache_max_bytes_from_environment(), uint64_t{200} << 20);
}

auto make_scale() {
  return bl::kernel("evict_scale", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                      bl::i32 n, bl::Const<int> BLOCK) {
    auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
    auto mask = offs < n;
    bl::store(out + offs, bl::load(x + offs, mask) * 3.0f, mask);
  });
}
using Scale = decltype(make_scale());

/// One launch of BLOCK `block` on fresh data, checked against a float64
/// reference rounded once to float (what one IEEE product gives).
void run_scale(Scale &scale, int block, int n = 1009) {
  auto x = random_values<float>(n, -8, 8);
  auto out = poisoned<float>(n);
  scale[{bl::cdiv(n, block)}].with(kCpu)(x, out, n, block);
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i)
    want[i] = static_cast<float>(double(x[i]) * 3.0);
  EXPECT_TRUE(close(out, want, 0, 0));
}

using CacheEviction = FreshCacheTest;

TEST_F(CacheEviction, MalformedMaxSizeFailsTheCompileNamingIt) {
  BLOCC_SEED_TRACE();
  ScopedEnvironment bad("BLOCC_CACHE_MAX_SIZE", "12X");
  auto scale = make_scale();
  std::string error = error_of([&] { run_scale(scale, 64); });
  EXPECT_THAT(error, HasSubstr("BLOCC_CACHE_MAX_SIZE='12X' is not a size"));
  EXPECT_THAT(entries_in(directory), IsEmpty());
}

// ------------------------------------------------- LRU, on plain entries
/// Entries of one size: a 6-byte key and 1000 bytes of content.
std::string key_of(int i) {
  char name[8];
  std::snprintf(name, sizeof name, "key-%02d", i);
  return name;
}
std::string content_of(const std::string &key) {
  std::string content;
  while (content.size() < 1000)
    content += key + "|";
  content.resize(1000);
  return content;
}
constexpr uint64_t kEntryBytes = 48 + 6 + 1000; // header, key, content

/// Sets an entry's modification time `seconds_ago` into the past.
void age(const std::string &directory, const std::string &key,
         int seconds_ago) {
  timespec times[2];
  times[0].tv_sec = times[1].tv_sec = std::time(nullptr) - seconds_ago;
  times[0].tv_nsec = times[1].tv_nsec = 0;
  std::string path = directory + "/" + rt::DiskCache::entry_name(key);
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

/// A temporary file as a crashed writer leaves one, two hours old: scans
/// remove it, so it tells whether one ran.
std::string plant_stale_temporary(const std::string &directory) {
  std::string name = ".tmp-crashed-writer";
  write_file(directory + "/" + name, "half an entry");
  timespec times[2];
  times[0].tv_sec = times[1].tv_sec = std::time(nullptr) - 7200;
  times[0].tv_nsec = times[1].tv_nsec = 0;
  EXPECT_EQ(::utimensat(AT_FDCWD, (directory + "/" + name).c_str(), times, 0),
            0);
  return name;
}

std::vector<std::string> entry_names(std::initializer_list<int> keys) {
  std::vector<std::string> names;
  for (int i : keys)
    names.push_back(rt::DiskCache::entry_name(key_of(i)));
  std::sort(names.begin(), names.end());
  return names;
}

/// A cache of plain entries (no kernels) in a directory of its own.
class PlainEntries : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_NE(cache, nullptr); }
  /// Stores entry `i` (key_of(i), its content) under the cap `max_bytes`.
  void put(int i, uint64_t max_bytes) {
    ASSERT_TRUE(cache->store(key_of(i), content_of(key_of(i)), max_bytes));
  }

  TemporaryDirectory temporary;
  const std::string directory = temporary / "c";
  std::shared_ptr<const rt::DiskCache> cache = rt::DiskCache::open(directory);
};
using CacheEvictionLru = PlainEntries;
using CacheEvictionCost = PlainEntries;
using CacheEvictionConcurrency = PlainEntries;

TEST_F(CacheEvictionLru, OldestGoFirstAndAHitCountsAsAUse) {
  const uint64_t cap = 10 * kEntryBytes;
  for (int i = 0; i < 10; ++i) { // exactly the cap: nothing evicted
    put(i, cap);
    age(directory, key_of(i), 1000 - i); // 0 oldest ... 9 newest
  }
  EXPECT_THAT(entries_in(directory), SizeIs(10));
  // 0 and 1 are used again: now the most recently used but for new ones.
  std::string got;
  for (int i : {0, 1}) {
    ASSERT_EQ(cache->load(key_of(i), got), rt::CacheLookup::Hit);
    EXPECT_EQ(got, content_of(key_of(i)));
  }
  // An eleventh passes the cap: the two least recently used (2 and 3) go,
  // leaving 90% of the cap.
  put(10, cap);
  EXPECT_EQ(entries_in(directory), entry_names({0, 1, 4, 5, 6, 7, 8, 9, 10}));
  rt::CacheUsage usage = cache->usage();
  EXPECT_EQ(usage.entries, 9u);
  EXPECT_EQ(usage.bytes, 9 * kEntryBytes);
  EXPECT_LE(usage.bytes, cap);
  // An evicted entry is a miss. Storing 2 and 3 again passes the cap once
  // more: the next oldest (4 and 5) go.
  EXPECT_EQ(cache->load(key_of(2), got), rt::CacheLookup::Missing);
  put(2, cap);
  put(3, cap);
  EXPECT_EQ(entries_in(directory), entry_names({0, 1, 2, 3, 6, 7, 8, 9, 10}));
}

TEST_F(CacheEvictionLru, AnEntryLargerThanTheCapLeavesAnEmptyCache) {
  for (int i = 0; i < 3; ++i)
    put(i, 500);
  EXPECT_EQ(cache->usage().entries, 0u);
}

TEST_F(CacheEvictionLru, NoLimitKeepsEverything) {
  for (int i = 0; i < 30; ++i)
    put(i, rt::kNoCacheLimit);
  EXPECT_EQ(cache->usage().entries, 30u);
  // A cap set later is met at the next store.
  put(30, 5 * kEntryBytes);
  EXPECT_LE(cache->usage().bytes, 5 * kEntryBytes);
}

// ----------------------------------------------------------- no scans
TEST_F(CacheEvictionCost, HitsAndStoresUnderTheCapDoNotScan) {
  const uint64_t cap = 10 * kEntryBytes;
  // The first store scans: nothing told it the size yet.
  std::string stale = plant_stale_temporary(directory);
  put(0, cap);
  EXPECT_THAT(files_in(directory), Not(Contains(stale)));

  stale = plant_stale_temporary(directory);
  std::string got;
  for (int i = 1; i < 10; ++i) {
    put(i, cap);
    for (int j = 0; j <= i; ++j)
      ASSERT_EQ(cache->load(key_of(j), got), rt::CacheLookup::Hit);
  }
  EXPECT_THAT(files_in(directory), Contains(stale));
  // The store that passes the cap scans (and removes the stale file).
  put(10, cap);
  EXPECT_THAT(files_in(directory), Not(Contains(stale)));
  EXPECT_EQ(cache->usage().entries, 9u);
}

TEST_F(CacheEvictionCost, StoresRescanEveryFewHundredWrites) {
  ASSERT_TRUE(cache->store("first", "x")); // scans: the size is unknown
  std::string stale = plant_stale_temporary(directory);
  // Small entries never come near the cap.
  for (uint64_t i = 1; i < rt::kRescanEveryWrites; ++i)
    ASSERT_TRUE(cache->store(std::to_string(i), "y"));
  EXPECT_THAT(files_in(directory), Contains(stale));
  // The periodic scan (it finds what the estimate cannot see, such as
  // entries deleted by hand).
  ASSERT_TRUE(cache->store("last", "y"));
  EXPECT_THAT(files_in(directory), Not(Contains(stale)));
}

// ------------------------------------------------- through the backend
/// Each BLOCK is a specialization of its own: an entry of its own.
std::map<int, uint64_t> entry_sizes(const std::string &directory,
                                    std::initializer_list<int> blocks) {
  ScopedEnvironment scratch("BLOCC_CACHE_DIR", directory);
  bl::cpu::clear_memory_cache_for_testing();
  std::map<int, uint64_t> sizes;
  auto scale = make_scale();
  for (int block : blocks) {
    auto before = entries_in(directory);
    run_scale(scale, block);
    for (const std::string &name : entries_in(directory))
      if (std::find(before.begin(), before.end(), name) == before.end())
        sizes[block] = std::filesystem::file_size(directory + "/" + name);
  }
  bl::cpu::clear_memory_cache_for_testing();
  return sizes;
}

TEST_F(CacheEviction, KernelsLeastRecentlyUsedGoFirst) {
  BLOCC_SEED_TRACE();
  std::map<int, uint64_t> size =
      entry_sizes(temporary / "sizes", {32, 64, 128});
  ASSERT_THAT(size, SizeIs(3));
  // Room for all three but one byte: the third compile evicts one.
  uint64_t cap = size[32] + size[64] + size[128] - 1;
  ScopedEnvironment max_size("BLOCC_CACHE_MAX_SIZE", std::to_string(cap));

  CounterDelta delta;
  auto scale = make_scale();
  run_scale(scale, 32);
  run_scale(scale, 64);
  EXPECT_THAT(entries_in(directory), SizeIs(2));
  // A fresh process uses 32 again (from disk): 64 is now the oldest.
  bl::cpu::clear_memory_cache_for_testing();
  auto fresh = make_scale();
  run_scale(fresh, 32);
  EXPECT_EQ(delta().disk_hits, 1u);
  run_scale(fresh, 128);
  ASSERT_THAT(entries_in(directory), SizeIs(2));
  EXPECT_LE(
      std::filesystem::file_size(directory + "/" + entries_in(directory)[0]) +
          std::filesystem::file_size(directory + "/" +
                                     entries_in(directory)[1]),
      cap);
  // 32 and 128 are on disk; 64 is compiled again.
  bl::cpu::clear_memory_cache_for_testing();
  auto third = make_scale();
  CounterDelta after;
  run_scale(third, 32);
  run_scale(third, 128);
  EXPECT_EQ(after().disk_hits, 2u);
  EXPECT_EQ(after().jit_compiles, 0u);
  run_scale(third, 64);
  EXPECT_EQ(after().jit_compiles, 1u);
  EXPECT_EQ(delta().disk_write_failures, 0u);
  EXPECT_EQ(delta().disk_rejected, 0u);
}

TEST_F(CacheEviction, ClearCompileCacheRemovesEveryKernel) {
  BLOCC_SEED_TRACE();
  auto scale = make_scale();
  for (int block : {16, 32, 64})
    run_scale(scale, block);
  EXPECT_THAT(entries_in(directory), SizeIs(3));
  EXPECT_EQ(bl::clear_compile_cache(), 3u);
  EXPECT_THAT(entries_in(directory), IsEmpty());
  // Kernels this process compiled still run; a new process compiles.
  run_scale(scale, 32);
  bl::cpu::clear_memory_cache_for_testing();
  CounterDelta delta;
  auto fresh = make_scale();
  run_scale(fresh, 32);
  EXPECT_EQ(delta().jit_compiles, 1u);
  EXPECT_EQ(delta().disk_writes, 1u);
  EXPECT_EQ(bl::clear_compile_cache(), 1u);
  ScopedEnvironment off("BLOCC_CACHE_DIR", "off");
  EXPECT_EQ(bl::clear_compile_cache(), 0u);
}

// ---------------------------------------------------------- concurrency
// Threads storing, loading, evicting (a cap of a few entries among 40 keys)
// and clearing at once: every load is a whole entry or a miss, never a
// rejected one, and every store succeeds.
TEST_F(CacheEvictionConcurrency, ThreadsStoreLoadEvictAndClearAtOnce) {
  BLOCC_SEED_TRACE();
  const uint64_t cap = 6 * kEntryBytes;
  const int threads = 8, rounds = 300;
  const uint64_t base = rng()();
  std::vector<std::string> errors(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::mt19937_64 engine(base + t);
      std::string got;
      for (int r = 0; r < rounds && errors[t].empty(); ++r) {
        std::string key = key_of(static_cast<int>(engine() % 40));
        if (t == 0 && r % 50 == 49) {
          cache->clear();
          continue;
        }
        switch (cache->load(key, got)) {
        case rt::CacheLookup::Hit:
          if (got != content_of(key))
            errors[t] = "wrong content for " + key;
          break;
        case rt::CacheLookup::Rejected:
          errors[t] = "rejected entry for " + key;
          break;
        case rt::CacheLookup::Missing:
          if (!cache->store(key, content_of(key), cap))
            errors[t] = "store failed for " + key;
          break;
        }
      }
    });
  for (auto &thread : pool)
    thread.join();
  for (int t = 0; t < threads; ++t)
    EXPECT_EQ(errors[t], "") << "thread " << t;
  EXPECT_THAT(temporaries_in(directory), IsEmpty());
  // A clear leaves the size unknown to the next store, which scans.
  put(0, cap);
  EXPECT_LE(cache->usage().bytes, cap);
}

} // namespace
