// The CPU backend's disk compile cache (runtime/cpu/disk_cache.h): a cold
// compile writes one entry; a process with an empty in-memory cache loads
// it without compiling and computes the same bits; corrupt, truncated and
// foreign entries are recompiled and rewritten, never run; the directory
// is created private and a directory other users could write is refused;
// an unusable directory costs the cache, never the launch; BLOCC_CACHE_DIR,
// XDG_CACHE_HOME and HOME choose the directory. Every test uses a
// temporary directory of its own and starts from an empty in-memory cache
// (clear_memory_cache_for_testing: what a fresh process sees).
#include "cpu/cache_support.h"
#include "cpu/support.h"

#include "runtime/cpu/disk_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <functional>

namespace bl = blocc;
using namespace blocc::cpu_testing;
using namespace blocc::cache_testing;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

namespace {

/// A fresh kernel object each call, with the same IR each time (the lambda
/// sits on one line): a later call is the same kernel in a "new process"
/// once the backend's in-memory cache is cleared, since the JIT keeps
/// compiled kernels per kernel object.
auto make_axpy() {
  return bl::kernel("disk_axpy", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                    bl::Ptr<float> out, bl::i32 n, bl::f32 a,
                                    bl::Const<int> BLOCK) {
    auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
    auto mask = offs < n;
    bl::store(out + offs,
              bl::load(x + offs, mask) * a + bl::load(y + offs, mask), mask);
  });
}
using Axpy = decltype(make_axpy());

struct AxpyRun {
  std::vector<float> x, y, out;
};

/// Launches `axpy` on fresh inputs (n elements, BLOCK per program) and
/// checks the result against a float64 reference.
AxpyRun run_axpy(Axpy &axpy, int n, int block = 128,
                 bl::LaunchOptions options = kCpu) {
  AxpyRun r{random_values<float>(n, -4, 4), random_values<float>(n, -4, 4),
            poisoned<float>(n)};
  axpy[{bl::cdiv(n, block)}].with(options)(r.x, r.y, r.out, n, 1.5f, block);
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i)
    want[i] = double(r.x[i]) * 1.5 + double(r.y[i]);
  EXPECT_TRUE(close(r.out, want, 1e-6, 1e-6));
  return r;
}

/// The same inputs through another kernel object: bitwise the same output.
void expect_same_bits(Axpy &axpy, const AxpyRun &before, int block = 128) {
  int n = static_cast<int>(before.x.size());
  auto out = poisoned<float>(n);
  axpy[{bl::cdiv(n, block)}].with(kCpu)(before.x, before.y, out, n, 1.5f,
                                        block);
  EXPECT_TRUE(same(out, before.out));
}

using DiskCacheTest = FreshCacheTest;

// ------------------------------------------------------- hits and misses
TEST_F(DiskCacheTest, ColdCompileWritesOneEntry) {
  BLOCC_SEED_TRACE();
  auto axpy = make_axpy();
  CounterDelta delta;
  run_axpy(axpy, 1000);
  EXPECT_EQ(delta().jit_compiles, 1u);
  EXPECT_EQ(delta().disk_hits, 0u);
  EXPECT_EQ(delta().disk_writes, 1u);
  EXPECT_THAT(entries_in(directory), SizeIs(1));
  // No temporary file left behind; beside the entry only the size
  // estimate (runtime/cpu/disk_cache_size.h).
  EXPECT_THAT(temporaries_in(directory), IsEmpty());
  EXPECT_THAT(
      files_in(directory),
      ::testing::ElementsAre(".blocc-cache-size", entries_in(directory)[0]));
  EXPECT_EQ(bl::cpu::disk_cache_directory(), directory);
  // A relaunch is served from memory: the disk is not consulted again.
  run_axpy(axpy, 1000);
  EXPECT_EQ(delta().jit_compiles, 1u);
  EXPECT_EQ(delta().disk_hits, 0u);
}

TEST_F(DiskCacheTest, FreshProcessLoadsFromDiskWithoutCompiling) {
  BLOCC_SEED_TRACE();
  auto compiled = make_axpy();
  AxpyRun first = run_axpy(compiled, 1001); // odd: a masked tail
  std::string entry = read_file(directory + "/" + entries_in(directory)[0]);

  bl::cpu::clear_memory_cache_for_testing();
  CounterDelta delta;
  auto loaded = make_axpy();
  expect_same_bits(loaded, first);
  EXPECT_EQ(delta().jit_compiles, 0u);
  EXPECT_EQ(delta().disk_hits, 1u);
  EXPECT_EQ(delta().disk_writes, 0u);
  run_axpy(loaded, 7919); // fresh data, a prime size, the same kernel
  EXPECT_EQ(delta().jit_compiles, 0u);
  // The entry is read, not rewritten.
  EXPECT_EQ(read_file(directory + "/" + entries_in(directory)[0]), entry);
}

TEST_F(DiskCacheTest, EachSpecializationIsAnEntryOfItsOwn) {
  BLOCC_SEED_TRACE();
  auto axpy = make_axpy();
  CounterDelta delta;
  run_axpy(axpy, 1024, 128);
  run_axpy(axpy, 1000, 128); // n % 16 != 0: another specialization
  run_axpy(axpy, 1024, 64);  // another BLOCK
  run_axpy(axpy, 1024, 64,
           {.backend = bl::Backend::Cpu,
            .check = bl::Check::Bounds}); // checked code
  EXPECT_EQ(delta().jit_compiles, 4u);
  EXPECT_THAT(entries_in(directory), SizeIs(4));

  bl::cpu::clear_memory_cache_for_testing();
  auto again = make_axpy();
  run_axpy(again, 1000, 128);
  run_axpy(again, 1024, 64,
           {.backend = bl::Backend::Cpu, .check = bl::Check::Bounds});
  EXPECT_EQ(delta().jit_compiles, 4u);
  EXPECT_EQ(delta().disk_hits, 2u);
}

// A loaded kernel knows its fault sites as the compiled one did: the
// lowering that runs on a hit numbers them as the compile did.
auto make_divide() {
  return bl::kernel("disk_divide", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> y,
                                      bl::Ptr<int32_t> out, bl::i32 n) {
    auto offs = bl::program_id(0) * 64 + bl::arange(0, 64);
    auto mask = offs < n;
    bl::store(out + offs,
              bl::load(x + offs, mask) / bl::load(y + offs, mask, 1), mask);
  });
}

TEST_F(DiskCacheTest, LoadedKernelsReportFaultsAsCompiledOnesDo) {
  BLOCC_SEED_TRACE();
  int n = 300;
  auto x = random_values<int32_t>(n, -1000, 1000);
  auto y = random_values<int32_t>(n, 1, 9);
  y[131] = 0;
  auto out = poisoned<int32_t>(n);
  auto compiled = make_divide();
  std::string compiled_fault =
      error_of([&] { compiled[{bl::cdiv(n, 64)}].with(kCpu)(x, y, out, n); });
  // Checked code: an out-of-bounds read (n larger than the buffers).
  bl::LaunchOptions checked{.backend = bl::Backend::Cpu,
                            .check = bl::Check::Bounds};
  y[131] = 1;
  std::string compiled_bounds = error_of(
      [&] { compiled[{bl::cdiv(n, 64)}].with(checked)(x, y, out, n + 5); });
  EXPECT_THAT(compiled_fault, HasSubstr("integer division by zero"));
  EXPECT_THAT(compiled_bounds, HasSubstr("out-of-bounds load"));

  bl::cpu::clear_memory_cache_for_testing();
  CounterDelta delta;
  auto loaded = make_divide();
  y[131] = 0;
  EXPECT_EQ(
      error_of([&] { loaded[{bl::cdiv(n, 64)}].with(kCpu)(x, y, out, n); }),
      compiled_fault);
  y[131] = 1;
  EXPECT_EQ(error_of([&] {
              loaded[{bl::cdiv(n, 64)}].with(checked)(x, y, out, n + 5);
            }),
            compiled_bounds);
  EXPECT_EQ(delta().disk_hits, 2u);
  EXPECT_EQ(delta().jit_compiles, 0u);
  loaded[{bl::cdiv(n, 64)}].with(kCpu)(x, y, out, n);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[i], x[i] / y[i]) << i;
}

// BLOCC_DUMP compiles the text it prints for itself (jit/stages.cpp),
// so a kernel the disk cache holds is still printed, and still loaded
// from the disk rather than compiled again for the launch.
TEST_F(DiskCacheTest, DumpingLlvmIrPrintsAKernelTheDiskHolds) {
  auto axpy = make_axpy();
  run_axpy(axpy, 100);
  bl::cpu::clear_memory_cache_for_testing();
  ScopedEnvironment dump("BLOCC_DUMP", "llvm");
  CounterDelta delta;
  auto again = make_axpy();
  ::testing::internal::CaptureStderr();
  run_axpy(again, 100);
  std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(printed, HasSubstr("// ===== blocc: llir of kernel 'disk_axpy'"));
  EXPECT_THAT(printed, HasSubstr("define "));
  EXPECT_EQ(delta().jit_compiles, 0u);
  EXPECT_EQ(delta().disk_hits, 1u);
}

// ------------------------------------------------------ untrusted entries
/// What a test does to the one entry in the cache before a fresh process
/// looks it up.
struct Damage {
  const char *name;
  std::function<std::string(const std::string &entry, const std::string &other)>
      apply;
};

/// Entry header offsets (disk_cache.h): magic 0, version 8, header size 12,
/// key hash 16, key length 24, content length 32, content hash 40, key 48.
std::string flip(std::string bytes, size_t at) {
  bytes.at(at) = static_cast<char>(bytes.at(at) ^ 0x20);
  return bytes;
}
uint64_t key_length(const std::string &entry) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(entry.at(24 + i));
  return v;
}
size_t random_below(size_t n) {
  return std::uniform_int_distribution<size_t>(0, n - 1)(rng());
}

const Damage kDamages[] = {
    {"a flipped byte in the object code",
     [](const std::string &e, const std::string &) {
       size_t content = 48 + key_length(e);
       return flip(e, content + random_below(e.size() - content));
     }},
    {"a flipped byte in the stored key",
     [](const std::string &e, const std::string &) {
       return flip(e, 48 + random_below(key_length(e)));
     }},
    {"a flipped byte in the header",
     [](const std::string &e, const std::string &) {
       return flip(e, random_below(48));
     }},
    {"a wrong magic",
     [](const std::string &e, const std::string &) {
       return "NOTBLOCC" + e.substr(8);
     }},
    {"another format version",
     [](const std::string &e, const std::string &) {
       std::string v = e;
       v[8] = static_cast<char>(v[8] + 1);
       return v;
     }},
    {"the last byte cut off",
     [](const std::string &e, const std::string &) {
       return e.substr(0, e.size() - 1);
     }},
    {"cut in the middle",
     [](const std::string &e, const std::string &) {
       return e.substr(0, e.size() / 2);
     }},
    {"cut inside the header",
     [](const std::string &e, const std::string &) { return e.substr(0, 20); }},
    {"an empty file",
     [](const std::string &, const std::string &) { return std::string(); }},
    {"a byte appended",
     [](const std::string &e, const std::string &) { return e + "x"; }},
    {"another kernel's entry",
     [](const std::string &, const std::string &other) { return other; }},
};

TEST_F(DiskCacheTest, DamagedEntriesAreRecompiledAndRewritten) {
  BLOCC_SEED_TRACE();
  // A valid entry of another kernel (another BLOCK), for the foreign-entry
  // case: its own key, under this kernel's file name.
  auto axpy = make_axpy();
  run_axpy(axpy, 1000, 64);
  std::string other = read_file(directory + "/" + entries_in(directory)[0]);
  std::filesystem::remove(directory + "/" + entries_in(directory)[0]);

  for (const Damage &damage : kDamages) {
    SCOPED_TRACE(damage.name);
    bl::cpu::clear_memory_cache_for_testing();
    auto cold = make_axpy();
    AxpyRun first = run_axpy(cold, 1000, 128);
    ASSERT_THAT(entries_in(directory), SizeIs(1));
    std::string path = directory + "/" + entries_in(directory)[0];
    std::string good = read_file(path);
    write_file(path, damage.apply(good, other));

    bl::cpu::clear_memory_cache_for_testing();
    CounterDelta delta;
    auto fresh = make_axpy();
    expect_same_bits(fresh, first);
    EXPECT_EQ(delta().disk_rejected, 1u);
    EXPECT_EQ(delta().disk_hits, 0u);
    EXPECT_EQ(delta().jit_compiles, 1u);
    EXPECT_EQ(delta().disk_writes, 1u);
    // Rewritten whole (code generation is deterministic): the next fresh
    // process loads it.
    EXPECT_EQ(read_file(path), good);
    bl::cpu::clear_memory_cache_for_testing();
    auto next = make_axpy();
    expect_same_bits(next, first);
    EXPECT_EQ(delta().disk_hits, 1u);
    EXPECT_EQ(delta().jit_compiles, 1u);
    std::filesystem::remove(path);
  }
}

TEST_F(DiskCacheTest, ASymlinkInPlaceOfAnEntryIsNotFollowed) {
  BLOCC_SEED_TRACE();
  auto axpy = make_axpy();
  AxpyRun first = run_axpy(axpy, 500);
  std::string path = directory + "/" + entries_in(directory)[0];
  std::string planted = temporary / "planted.blocc";
  std::filesystem::rename(path, planted); // a valid entry, elsewhere
  std::filesystem::create_symlink(planted, path);
  bl::cpu::clear_memory_cache_for_testing();
  CounterDelta delta;
  auto fresh = make_axpy();
  expect_same_bits(fresh, first);
  EXPECT_EQ(delta().disk_rejected, 1u);
  EXPECT_EQ(delta().jit_compiles, 1u);
  // The rename replaced the link itself with a regular file.
  EXPECT_TRUE(
      std::filesystem::is_regular_file(std::filesystem::symlink_status(path)));
}

// ---------------------------------------------------------- directories
mode_t mode_of(const std::string &path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST_F(DiskCacheTest, DirectoriesAreCreatedPrivate) {
  std::string nested = temporary / "a/b/blocc";
  ScopedEnvironment env("BLOCC_CACHE_DIR", nested);
  mode_t old = ::umask(0); // the modes are blocc's, not the umask's
  auto axpy = make_axpy();
  run_axpy(axpy, 33);
  ::umask(old);
  EXPECT_EQ(mode_of(temporary / "a"), 0700u);
  EXPECT_EQ(mode_of(temporary / "a/b"), 0700u);
  EXPECT_EQ(mode_of(nested), 0700u);
  EXPECT_THAT(entries_in(nested), SizeIs(1));
  struct stat st {};
  ASSERT_EQ(::stat((nested + "/" + entries_in(nested)[0]).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

/// Launches a fresh kernel with the cache in `dir` and returns what it
/// wrote to stderr; the launch must succeed and compute the right values.
std::string launch_with_cache_in(const std::string &dir,
                                 const CounterDelta &delta) {
  ScopedEnvironment env("BLOCC_CACHE_DIR", dir);
  bl::cpu::clear_memory_cache_for_testing();
  auto axpy = make_axpy();
  ::testing::internal::CaptureStderr();
  run_axpy(axpy, 77);
  std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(delta().jit_compiles, 1u);
  EXPECT_EQ(delta().disk_writes, 0u);
  return warning;
}

TEST_F(DiskCacheTest, DirectoryOthersCanWriteIsNotUsed) {
  std::string shared = temporary / "shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  CounterDelta delta;
  std::string warning = launch_with_cache_in(shared, delta);
  EXPECT_THAT(warning, HasSubstr("not using the compile cache directory '" +
                                 shared + "'"));
  EXPECT_THAT(warning, HasSubstr("writable by other users (mode 0777)"));
  EXPECT_THAT(warning, HasSubstr("chmod 700"));
  EXPECT_THAT(warning, HasSubstr("BLOCC_CACHE_DIR"));
  EXPECT_THAT(files_in(shared), IsEmpty());
  {
    ScopedEnvironment env("BLOCC_CACHE_DIR", shared);
    EXPECT_EQ(bl::cpu::disk_cache_directory(), "");
  }
  // Said once per process.
  EXPECT_THAT(launch_with_cache_in(shared, CounterDelta()), IsEmpty());
  // Group-writable is refused too.
  std::string group = temporary / "group";
  ASSERT_EQ(::mkdir(group.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(group.c_str(), 0770), 0);
  EXPECT_THAT(launch_with_cache_in(group, CounterDelta()),
              HasSubstr("writable by other users (mode 0770)"));
}

TEST_F(DiskCacheTest, DirectoryOfAnotherUserIsNotUsed) {
  // Root can give a directory away; anyone else finds one that is not
  // theirs at "/".
  std::string foreign = "/";
  if (::geteuid() == 0) {
    foreign = temporary / "foreign";
    ASSERT_EQ(::mkdir(foreign.c_str(), 0700), 0);
    ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
  }
  CounterDelta delta;
  EXPECT_THAT(launch_with_cache_in(foreign, delta),
              HasSubstr("belongs to another user"));
  if (foreign != "/") {
    EXPECT_THAT(files_in(foreign), IsEmpty());
  }
}

TEST_F(DiskCacheTest, UncreatableDirectoryOnlyCostsTheCache) {
  std::string file = temporary / "a-file";
  write_file(file, "not a directory");
  CounterDelta delta;
  std::string warning = launch_with_cache_in(file + "/cache", delta);
  EXPECT_THAT(warning, HasSubstr("cannot create '" + file + "/cache'"));
  EXPECT_THAT(warning, HasSubstr("BLOCC_CACHE_DIR=off"));
}

TEST_F(DiskCacheTest, UnwritableDirectoryOnlyCostsTheCache) {
  // /proc/self is this process's own directory (so it passes the owner and
  // mode checks), and not even root can create files in it.
  CounterDelta delta;
  std::string warning = launch_with_cache_in("/proc/self", delta);
  EXPECT_THAT(warning, HasSubstr("cannot write to the compile cache "
                                 "directory '/proc/self'"));
  EXPECT_EQ(delta().disk_write_failures, 1u);
}

// ---------------------------------------------------------- environment
TEST_F(DiskCacheTest, OffTurnsTheDiskCacheOff) {
  for (const char *off : {"off", "0"}) {
    ScopedEnvironment env("BLOCC_CACHE_DIR", off);
    EXPECT_EQ(bl::cpu::disk_cache_directory(), "");
    bl::cpu::clear_memory_cache_for_testing();
    CounterDelta delta;
    auto axpy = make_axpy();
    run_axpy(axpy, 64);
    EXPECT_EQ(delta().jit_compiles, 1u);
    EXPECT_EQ(delta().disk_writes, 0u);
    EXPECT_FALSE(std::filesystem::exists(off));
  }
}

TEST_F(DiskCacheTest, XdgCacheHomeThenHomeWhenUnset) {
  std::string xdg = temporary / "xdg", home = temporary / "home";
  ScopedEnvironment home_env("HOME", home);
  {
    ScopedEnvironment unset("BLOCC_CACHE_DIR", nullptr);
    ScopedEnvironment xdg_env("XDG_CACHE_HOME", xdg);
    EXPECT_EQ(bl::cpu::disk_cache_directory(), xdg + "/blocc");
    EXPECT_EQ(mode_of(xdg + "/blocc"), 0700u);
  }
  {
    ScopedEnvironment empty("BLOCC_CACHE_DIR", ""); // empty means unset
    ScopedEnvironment relative("XDG_CACHE_HOME", "relative/dir"); // ignored
    EXPECT_EQ(bl::cpu::disk_cache_directory(), home + "/.cache/blocc");
    auto axpy = make_axpy();
    run_axpy(axpy, 50);
    EXPECT_THAT(entries_in(home + "/.cache/blocc"), SizeIs(1));
  }
}

TEST(DiskCacheFormat, EntriesRoundTripAndCheckTheKey) {
  TemporaryDirectory temporary;
  auto cache = bl::runtime::cpu::DiskCache::open(temporary / "c");
  ASSERT_NE(cache, nullptr);
  std::string content = "object\0code"; // bytes, not text
  content.push_back('\0');
  ASSERT_TRUE(cache->store("key one", content));
  std::string got;
  EXPECT_EQ(cache->load("key one", got), bl::runtime::cpu::CacheLookup::Hit);
  EXPECT_EQ(got, content);
  EXPECT_EQ(cache->load("key two", got),
            bl::runtime::cpu::CacheLookup::Missing);
  // The same file under another key's name is not that key's entry.
  std::filesystem::copy_file(
      temporary / ("c/" + bl::runtime::cpu::DiskCache::entry_name("key one")),
      temporary / ("c/" + bl::runtime::cpu::DiskCache::entry_name("key two")));
  EXPECT_EQ(cache->load("key two", got),
            bl::runtime::cpu::CacheLookup::Rejected);
  // Opening the directory again gives the same cache.
  EXPECT_EQ(bl::runtime::cpu::DiskCache::open(temporary / "c"), cache);
}

} // namespace
