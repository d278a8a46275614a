// Checked mode (LaunchOptions::check, BLOCC_CHECK) on the CPU backend:
// every kind of planted fault (contiguous, gather, store, atomic, scalar,
// in a loop, in a 2-D block, in one program of a grid) is reported with
// the interpreter's exact message before the faulting access touches
// memory; write races between programs are reported, benign same-value
// stores and atomics are not; BLOCC_CHECK is parsed strictly; checks are
// off by default and do not change a correct kernel's results.
#include "cpu/cache_support.h"
#include "cpu/support.h"

#include "backends/cpu/cpu_backend.h"
#include "backends/interpreter/interpreter.h"
#include "ir/parser.h"

#include <cstdio>
#include <span>

namespace bl = blocc;
using namespace blocc::cpu_testing;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

using ScopedEnv = blocc::cache_testing::ScopedEnvironment;

bl::LaunchOptions options(bl::Backend backend, bl::Check check) {
  bl::LaunchOptions o;
  o.backend = backend;
  o.check = check;
  return o;
}
const bl::LaunchOptions kChecked = options(bl::Backend::Cpu, bl::Check::Bounds);
const bl::LaunchOptions kRaces = options(bl::Backend::Cpu, bl::Check::Races);
const bl::LaunchOptions kUnchecked = options(bl::Backend::Cpu, bl::Check::Off);
const bl::LaunchOptions kReference =
    options(bl::Backend::Interpreter, bl::Check::Bounds);
const bl::LaunchOptions kReferenceRaces =
    options(bl::Backend::Interpreter, bl::Check::Races);

std::string hex(const void *p) {
  char buffer[32];
  std::snprintf(
      buffer, sizeof buffer, "0x%016llx",
      static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buffer;
}

/// "argument 1 'arg1' [0x..., 0x...) of N bytes", as messages give a buffer.
template <typename T>
std::string buffer(int argument, const T *data, size_t count) {
  return "argument " + std::to_string(argument) + " 'arg" +
         std::to_string(argument) + "' [" + hex(data) + ", " +
         hex(data + count) + ") of " + std::to_string(count * sizeof(T)) +
         " bytes";
}

/// "checked_mode_test.cpp:LINE".
std::string line_of(int line) {
  return "checked_mode_test.cpp:" + std::to_string(line);
}

/// A buffer of `n` elements followed by a guard region, all poisoned; the
/// kernel sees only the first n (a span), so that a write past them shows
/// in the guard.
template <typename T> struct Guarded {
  static constexpr size_t kGuard = 64;
  explicit Guarded(size_t n) : n(n), storage(poisoned<T>(n + kGuard)) {}
  std::span<T> span() { return {storage.data(), n}; }
  T *data() { return storage.data(); }
  bool guard_untouched() const {
    std::vector<T> fresh = poisoned<T>(kGuard);
    return std::memcmp(storage.data() + n, fresh.data(), kGuard * sizeof(T)) ==
           0;
  }
  bool untouched(size_t from, size_t to) const {
    std::vector<T> fresh = poisoned<T>(to - from);
    return std::memcmp(storage.data() + from, fresh.data(),
                       (to - from) * sizeof(T)) == 0;
  }
  size_t n;
  std::vector<T> storage;
};

// ------------------------------------------------------------ loads
int tail_load_line;
auto tail_load = bl::kernel(
    "tail_load", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
      auto offs = bl::program_id(0) * 64 + bl::arange(0, 64);
      auto mask = offs <= n; // off by one: reads x[n]
      auto v = (tail_load_line = __LINE__, bl::load(x + offs, mask));
      bl::store(out + offs, v * 2.f, offs < n);
    });

TEST(CheckedLoads, ContiguousMaskedTailOffByOne) {
  BLOCC_SEED_TRACE();
  const int n = 101; // program 1, lane 37 reads x[101]
  auto x = random_values<float>(n, -1, 1);
  Guarded<float> out(128);
  std::string cpu =
      error_of([&] { tail_load[{2}].with(kChecked)(x, out.span(), n); });
  EXPECT_EQ(cpu, "kernel 'tail_load', program (1, 0, 0), load at " +
                     line_of(tail_load_line) +
                     ": out-of-bounds load: lane 37 reads 4 bytes at " +
                     hex(x.data() + n) + ", outside " +
                     buffer(0, x.data(), x.size()) +
                     " (element offset 101 of 101)");
  // The failing program stored nothing.
  EXPECT_TRUE(out.untouched(64, 128 + Guarded<float>::kGuard));
  std::string reference =
      error_of([&] { tail_load[{2}].with(kReference)(x, out.span(), n); });
  EXPECT_EQ(cpu, reference);
  // With the right mask there is nothing to report, and the result is
  // that of the unchecked kernel.
  Guarded<float> checked(128), unchecked(128);
  tail_load[{2}].with(kChecked)(x, checked.span(), n - 1);
  tail_load[{2}].with(kUnchecked)(x, unchecked.span(), n - 1);
  EXPECT_TRUE(same(checked.storage, unchecked.storage));
  EXPECT_EQ(checked.storage[99], 2 * x[99]);
}

int gather_line;
auto gather =
    bl::kernel("gather", [](bl::Ptr<int32_t> index, bl::Ptr<float> table,
                            bl::Ptr<float> out, bl::i32 n) {
      auto offs = bl::program_id(0) * 32 + bl::arange(0, 32);
      auto mask = offs < n;
      auto i = bl::load(index + offs, mask);
      auto v = (gather_line = __LINE__, bl::load(table + i, mask));
      bl::store(out + offs, v, mask);
    });

TEST(CheckedLoads, GatherPastTheEndAndBeforeTheStart) {
  BLOCC_SEED_TRACE();
  const int n = 77, size = 50;
  auto table = random_values<float>(size, -1, 1);
  for (int planted : {size, -3}) {
    auto index = random_values<int32_t>(n, 0, size - 1);
    index[45] = planted; // program 1, lane 13
    auto out = poisoned<float>(n);
    std::string cpu = error_of([&] {
      gather[{bl::cdiv(n, 32)}].with(kChecked)(index, table, out, n);
    });
    EXPECT_EQ(cpu, "kernel 'gather', program (1, 0, 0), load at " +
                       line_of(gather_line) +
                       ": out-of-bounds load: lane 13 reads 4 bytes at " +
                       hex(table.data() + planted) + ", outside " +
                       buffer(1, table.data(), table.size()) +
                       " (element offset " + std::to_string(planted) +
                       " of 50)");
    EXPECT_EQ(cpu, error_of([&] {
                gather[{bl::cdiv(n, 32)}].with(kReference)(index, table, out,
                                                           n);
              }));
    std::vector<float> program_1(out.begin() + 32, out.begin() + 64);
    EXPECT_TRUE(same(program_1, poisoned<float>(32)));
  }
}

int loop_line;
auto rows_in_loop = bl::kernel(
    "rows_in_loop", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 rows) {
      auto col = bl::arange(0, 16);
      auto p = x + col; // advanced through the loop: provenance carried
      for (auto r : bl::range(0, rows)) {
        auto v = (loop_line = __LINE__, bl::load(p));
        bl::store(out + r * 16 + col, v + 1.f);
        p = p + 16;
      }
    });

TEST(CheckedLoads, InALoopAtIterationK) {
  BLOCC_SEED_TRACE();
  // 5 rows and 3 elements of a sixth: iteration 5 reads past the end at
  // its lane 3.
  auto x = random_values<float>(5 * 16 + 3, -1, 1);
  auto out = poisoned<float>(8 * 16);
  std::string cpu =
      error_of([&] { rows_in_loop[{1}].with(kChecked)(x, out, 8); });
  EXPECT_EQ(cpu, "kernel 'rows_in_loop', program (0, 0, 0), load at " +
                     line_of(loop_line) +
                     ": out-of-bounds load: lane 3 reads 4 bytes at " +
                     hex(x.data() + 83) + ", outside " +
                     buffer(0, x.data(), x.size()) +
                     " (element offset 83 of 83)");
  EXPECT_EQ(cpu, error_of([&] {
              auto again = poisoned<float>(8 * 16);
              rows_in_loop[{1}].with(kReference)(x, again, 8);
            }));
  // Iterations 0..4 ran, iteration 5 stopped before its store.
  for (int i = 0; i < 5 * 16; ++i)
    ASSERT_EQ(out[i], x[i] + 1.f) << i;
  std::vector<float> rest(out.begin() + 5 * 16, out.end());
  EXPECT_TRUE(same(rest, poisoned<float>(3 * 16)));
}

int tile_line;
auto tile =
    bl::kernel("tile", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 ld) {
      auto i = bl::expand_dims(bl::arange(0, 8), 1);
      auto j = bl::expand_dims(bl::arange(0, 16), 0);
      auto v = (tile_line = __LINE__, bl::load(x + i * ld + j));
      bl::store(out + i * 16 + j, v);
    });

TEST(CheckedLoads, TwoDimensionalBlockNamesTheIndex) {
  BLOCC_SEED_TRACE();
  // Rows of 16 with a leading dimension of 20: the last row ends at
  // element 7 * 20 + 15 = 155; the buffer holds 150.
  auto x = random_values<float>(150, -1, 1);
  auto out = poisoned<float>(128);
  std::string cpu = error_of([&] { tile[{1}].with(kChecked)(x, out, 20); });
  EXPECT_EQ(cpu,
            "kernel 'tile', program (0, 0, 0), load at " + line_of(tile_line) +
                ": out-of-bounds load: lane 122 (index (7, 10)) reads 4 "
                "bytes at " +
                hex(x.data() + 150) + ", outside " +
                buffer(0, x.data(), x.size()) + " (element offset 150 of 150)");
  EXPECT_EQ(cpu, error_of([&] { tile[{1}].with(kReference)(x, out, 20); }));
  EXPECT_TRUE(same(out, poisoned<float>(128)));
  tile[{1}].with(kChecked)(x, out, 16); // 8 x 16 of 150: in bounds
  for (int k = 0; k < 128; ++k)
    ASSERT_EQ(out[k], x[k]) << k;
}

int grid_line;
auto grid_2d =
    bl::kernel("grid_2d", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
      auto pid = bl::program_id(1) * bl::num_programs(0) + bl::program_id(0);
      auto offs = pid * 16 + bl::arange(0, 16);
      auto v = (grid_line = __LINE__, bl::load(x + offs)); // no mask
      bl::store(out + offs, v, offs < n);
    });

TEST(CheckedLoads, ProgramIdOfTheFaultingProgram) {
  BLOCC_SEED_TRACE();
  // A 3 x 2 grid over 90 elements: only program (2, 1, 0), the last,
  // reads past the end (from element 90, its lane 10).
  auto x = random_values<float>(90, -1, 1);
  auto out = poisoned<float>(96);
  std::string cpu = error_of([&] {
    grid_2d[{3, 2}].with(kChecked)(x, out, 90);
  });
  EXPECT_EQ(cpu, "kernel 'grid_2d', program (2, 1, 0), load at " +
                     line_of(grid_line) +
                     ": out-of-bounds load: lane 10 reads 4 bytes at " +
                     hex(x.data() + 90) + ", outside " +
                     buffer(0, x.data(), x.size()) +
                     " (element offset 90 of 90)");
  EXPECT_EQ(cpu, error_of([&] {
              grid_2d[{3, 2}].with(kReference)(x, out, 90);
            }));
}

// ----------------------------------------------------------- stores
int store_line;
auto fill =
    bl::kernel("fill", [](bl::Ptr<float> out, bl::i32 n, bl::f32 value) {
      auto offs = bl::program_id(0) * 64 + bl::arange(0, 64);
      (store_line = __LINE__, bl::store(out + offs, value, offs < n + 3));
    });

TEST(CheckedStores, NothingIsWrittenPastTheBuffer) {
  // The mask lets 3 lanes past n: the store is checked before it writes,
  // so neither the buffer nor the memory just past it changes.
  for (int n : {1, 61, 64, 97}) {
    SCOPED_TRACE(n);
    Guarded<float> out(n);
    int programs = static_cast<int>(bl::cdiv(n + 3, 64));
    std::string cpu =
        error_of([&] { fill[{programs}].with(kChecked)(out.span(), n, 7.f); });
    // The program holding element n fails at it.
    int last = n / 64, lane = n % 64;
    EXPECT_EQ(cpu, "kernel 'fill', program (" + std::to_string(last) +
                       ", 0, 0), store at " + line_of(store_line) +
                       ": out-of-bounds store: lane " + std::to_string(lane) +
                       " writes 4 bytes at " + hex(out.data() + n) +
                       ", outside " + buffer(0, out.data(), n) +
                       " (element offset " + std::to_string(n) + " of " +
                       std::to_string(n) + ")");
    EXPECT_TRUE(out.guard_untouched());
    // The failing program wrote none of its in-bounds lanes either.
    EXPECT_TRUE(out.untouched(static_cast<size_t>(last) * 64, n));
    EXPECT_EQ(cpu, error_of([&] {
                fill[{programs}].with(kReference)(out.span(), n, 7.f);
              }));
    EXPECT_TRUE(out.guard_untouched());
  }
}

int scatter_line;
auto scatter = bl::kernel(
    "scatter", [](bl::Ptr<int32_t> index, bl::Ptr<int64_t> out, bl::i32 n) {
      auto offs = bl::arange(0, 128);
      auto mask = offs < n;
      auto i = bl::load(index + offs, mask);
      auto v = bl::cast(offs, bl::int64);
      (scatter_line = __LINE__, bl::store(out + i, v, mask));
    });

TEST(CheckedStores, ScatterPastTheEnd) {
  BLOCC_SEED_TRACE();
  const int n = 113, size = 40;
  auto index = random_values<int32_t>(n, 0, size - 1);
  index[111] = size + 1;
  Guarded<int64_t> out(size);
  std::string cpu =
      error_of([&] { scatter[{1}].with(kChecked)(index, out.span(), n); });
  EXPECT_EQ(cpu, "kernel 'scatter', program (0, 0, 0), store at " +
                     line_of(scatter_line) +
                     ": out-of-bounds store: lane 111 writes 8 bytes at " +
                     hex(out.data() + size + 1) + ", outside " +
                     buffer(1, out.data(), size) +
                     " (element offset 41 of 40)");
  EXPECT_TRUE(out.untouched(0, size + Guarded<int64_t>::kGuard));
}

int atomic_line;
auto count_into = bl::kernel(
    "count_into", [](bl::Ptr<int32_t> bins, bl::Ptr<int32_t> keys, bl::i32 n) {
      auto offs = bl::program_id(0) * 32 + bl::arange(0, 32);
      auto mask = offs < n;
      auto key = bl::load(keys + offs, mask);
      (atomic_line = __LINE__, bl::atomic_add(bins + key, 1, mask));
    });

TEST(CheckedAtomics, OutOfBoundsAtomicUpdatesNothing) {
  BLOCC_SEED_TRACE();
  const int n = 70, size = 10;
  auto keys = random_values<int32_t>(n, 0, size - 1);
  keys[35] = size; // program 1, lane 3
  Guarded<int32_t> bins(size);
  std::fill(bins.data(), bins.data() + size, 0);
  std::string cpu = error_of([&] {
    count_into[{bl::cdiv(n, 32)}].with(kChecked)(bins.span(), keys, n);
  });
  EXPECT_EQ(cpu, "kernel 'count_into', program (1, 0, 0), atomic_rmw at " +
                     line_of(atomic_line) +
                     ": out-of-bounds atomic: lane 3 updates 4 bytes at " +
                     hex(bins.data() + size) + ", outside " +
                     buffer(0, bins.data(), size) +
                     " (element offset 10 of 10)");
  EXPECT_TRUE(bins.guard_untouched());
  // Program 1 applied none of its lanes; programs 0 and 2 (if they ran
  // before the launch stopped) applied theirs, so at most 70 - 32 updates.
  int total = 0;
  for (int b = 0; b < size; ++b)
    total += bins.data()[b];
  EXPECT_LE(total, n - 32);
  std::fill(bins.data(), bins.data() + size, 0);
  keys[35] = 3;
  count_into[{bl::cdiv(n, 32)}].with(kChecked)(bins.span(), keys, n);
  std::vector<int32_t> want(size, 0);
  for (int key : keys)
    ++want[key];
  EXPECT_TRUE(
      same(std::vector<int32_t>(bins.data(), bins.data() + size), want));
}

// ----------------------------------------------- scalar and provenance
int scalar_line;
auto last_element = bl::kernel(
    "last_element", [](bl::Ptr<double> x, bl::Ptr<double> out, bl::i32 n) {
      auto v = (scalar_line = __LINE__, bl::load(x + n)); // x[n]: one past
      bl::store(out, v);
    });

TEST(CheckedScalars, ScalarLoadPastTheEnd) {
  std::vector<double> x(9, 1.0), out(1, 0.0);
  std::string cpu =
      error_of([&] { last_element[{1}].with(kChecked)(x, out, 9); });
  EXPECT_EQ(cpu, "kernel 'last_element', program (0, 0, 0), load at " +
                     line_of(scalar_line) +
                     ": out-of-bounds load: lane 0 reads 8 bytes at " +
                     hex(x.data() + 9) + ", outside " + buffer(0, x.data(), 9) +
                     " (element offset 9 of 9)");
  EXPECT_EQ(cpu,
            error_of([&] { last_element[{1}].with(kReference)(x, out, 9); }));
  last_element[{1}].with(kChecked)(x, out, 8);
  EXPECT_EQ(out[0], 1.0);
}

auto either = bl::kernel("either", [](bl::Ptr<float> a, bl::Ptr<float> b,
                                      bl::Ptr<float> out, bl::i32 n,
                                      bl::i32 which) {
  auto offs = bl::arange(0, 32);
  auto mask = offs < n;
  auto p = bl::where(bl::full({32}, which, bl::int32) == 0, a + offs, b + offs);
  bl::store(out + offs, bl::load(p, mask), mask);
});

TEST(CheckedProvenance, PointersFromSeveralArguments) {
  BLOCC_SEED_TRACE();
  auto a = random_values<float>(20, -1, 1), b = random_values<float>(30, -1, 1);
  auto out = poisoned<float>(32);
  either[{1}].with(kChecked)(a, b, out, 20, 0);
  EXPECT_TRUE(same(std::vector<float>(out.begin(), out.begin() + 20), a));
  // `which` is 2, not 1: a 1 would be traced as the constant it is, and
  // the pointer known to come from b alone.
  either[{1}].with(kChecked)(a, b, out, 30, 2);
  EXPECT_TRUE(same(std::vector<float>(out.begin(), out.begin() + 30), b));
  // Lane 30 of b's pointer lies in neither buffer: which one the lane's
  // pointer came from is not known per lane, so both are named.
  std::string cpu =
      error_of([&] { either[{1}].with(kChecked)(a, b, out, 31, 2); });
  EXPECT_THAT(cpu, HasSubstr("out-of-bounds load: lane 30 reads 4 bytes at " +
                             hex(b.data() + 30) +
                             ", outside every buffer the pointer may derive "
                             "from: " +
                             buffer(0, a.data(), 20) + " and " +
                             buffer(1, b.data(), 30)));
}

/// Pointers made from integers (the eDSL has no int_to_ptr: textual IR).
const char *kThroughInteger = R"(
func @through_integer(%x: ptr<i32>, %out: ptr<i32>, %shift: i64) {
  %r = arange {end = 8, start = 0} : tensor<8xi32>
  %p = splat %x : tensor<8xptr<i32>>
  %q = addptr %p, %r : tensor<8xptr<i32>>
  %a = ptr_to_int %q : tensor<8xi64>
  %s = splat %shift : tensor<8xi64>
  %b = add %a, %s : tensor<8xi64>
  %c = int_to_ptr %b : tensor<8xptr<i32>>
  %v = load %c : tensor<8xi32> loc("through_integer.cpp":9)
  %o = splat %out : tensor<8xptr<i32>>
  %w = addptr %o, %r : tensor<8xptr<i32>>
  store %w, %v
  return
}
)";

TEST(CheckedProvenance, PointersMadeFromIntegers) {
  auto functions = blocc::ir::parse_module(kThroughInteger);
  const blocc::ir::Function &f = *functions[0];
  auto checked = bl::cpu::compile(f, {.check_bounds = true});
  std::vector<int32_t> x(8, 5), out(8, 0);
  auto args = [&](std::vector<int32_t> &into, int64_t shift) {
    return std::vector<bl::KernelArg>{
        bl::KernelArg::of_pointer(x.data(), x.size() * 4),
        bl::KernelArg::of_pointer(into.data(), into.size() * 4),
        bl::KernelArg::of_int(shift)};
  };
  bl::cpu::run(*checked, {1}, args(out, 0));
  EXPECT_EQ(out, x);
  // Shifted by two elements, lane 6 reads the first address past x's
  // buffer, which lies in no buffer: as the interpreter words it.
  std::string cpu =
      error_of([&] { bl::cpu::run(*checked, {1}, args(out, 8)); });
  EXPECT_EQ(cpu,
            error_of([&] { blocc::interp::interpret(f, {1}, args(out, 8)); }));
  EXPECT_EQ(cpu, "kernel 'through_integer', program (0, 0, 0), load at "
                 "through_integer.cpp:9: invalid load: lane 6 reads 4 bytes "
                 "at " +
                     hex(x.data() + 8) +
                     ", which derives from no pointer argument (it was made "
                     "by int_to_ptr) and lies in no argument's buffer");
  // Shifted by 30 bytes, lane 0 starts in x's buffer and runs past its end.
  cpu = error_of([&] { bl::cpu::run(*checked, {1}, args(out, 30)); });
  EXPECT_EQ(cpu,
            error_of([&] { blocc::interp::interpret(f, {1}, args(out, 30)); }));
  EXPECT_THAT(cpu, HasSubstr("out-of-bounds load: lane 0 reads 4 bytes at " +
                             hex(reinterpret_cast<char *>(x.data()) + 30) +
                             ", outside argument 0 'x' [" + hex(x.data()) +
                             ", " + hex(x.data() + 8) +
                             ") of 32 bytes (byte offset 30 of 32)"));
  // Shifted by 2 bytes, every lane is in bounds but misaligned.
  cpu = error_of([&] { bl::cpu::run(*checked, {1}, args(out, 2)); });
  EXPECT_EQ(cpu,
            error_of([&] { blocc::interp::interpret(f, {1}, args(out, 2)); }));
  EXPECT_THAT(cpu, HasSubstr("misaligned load: lane 0 reads 4 bytes at " +
                             hex(reinterpret_cast<char *>(x.data()) + 2) +
                             ", which is not a multiple of the element size "
                             "(4)"));
  // An address in another argument's buffer is that buffer's element:
  // here the kernel copies out onto itself.
  std::vector<int32_t> nines(8, 9);
  int64_t into_out = reinterpret_cast<int64_t>(nines.data()) -
                     reinterpret_cast<int64_t>(x.data());
  bl::cpu::run(*checked, {1}, args(nines, into_out));
  EXPECT_EQ(nines, std::vector<int32_t>(8, 9));
  // In no buffer at all, with every buffer sized: it cannot be valid.
  std::vector<int32_t> elsewhere(64, 1);
  int64_t away = reinterpret_cast<int64_t>(elsewhere.data()) -
                 reinterpret_cast<int64_t>(x.data());
  cpu = error_of([&] { bl::cpu::run(*checked, {1}, args(out, away)); });
  EXPECT_EQ(cpu, error_of([&] {
              blocc::interp::interpret(f, {1}, args(out, away));
            }));
  EXPECT_THAT(cpu, HasSubstr("invalid load: lane 0 reads 4 bytes at " +
                             hex(elsewhere.data()) +
                             ", which derives from no pointer argument"));
}

auto raw_read =
    bl::kernel("raw_read", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
      auto offs = bl::arange(0, 16);
      bl::store(out + offs, bl::load(x + offs, offs < n), offs < n);
    });

TEST(CheckedProvenance, RawPointersAreCheckedOnlyForNull) {
  // A raw pointer's extent is unknown: reading 16 elements through it is
  // not reported (here they exist: the vector holds 16).
  std::vector<float> x(16, 3.f), out(16, 0.f);
  raw_read[{1}].with(kChecked)(x.data(), out, 16);
  EXPECT_EQ(out, x);
  const float *null = nullptr;
  std::string cpu =
      error_of([&] { raw_read[{1}].with(kChecked)(null, out, 16); });
  EXPECT_THAT(cpu, HasSubstr("null pointer load: lane 0 reads 4 bytes at "
                             "0x0000000000000000"));
  EXPECT_EQ(cpu,
            error_of([&] { raw_read[{1}].with(kReference)(null, out, 16); }));
  raw_read[{1}].with(kChecked)(null, out, 0); // no active lane: nothing read
}

// ------------------------------------------------------------ races
int race_line;
auto racy = bl::kernel("racy", [](bl::Ptr<float> out, bl::f32 scale) {
  auto offs = bl::arange(0, 16);
  // Every program writes all 16 elements: the same values when scale is 0.
  auto v = bl::cast(offs, bl::float32) +
           bl::cast(bl::program_id(0), bl::float32) * scale;
  (race_line = __LINE__, bl::store(out + offs, v));
});

TEST(CheckedRaces, DifferentValuesFromTwoProgramsAreReported) {
  auto out = poisoned<float>(16);
  {
    // One thread runs the programs in order: program 1 meets program 0's
    // stores, as in the interpreter.
    ScopedEnv threads("BLOCC_NUM_THREADS", "1");
    std::string cpu = error_of([&] { racy[{4}].with(kRaces)(out, 1.f); });
    EXPECT_EQ(cpu, "kernel 'racy', program (1, 0, 0), store at " +
                       line_of(race_line) +
                       ": write race: lane 0 writes 1 to " + hex(out.data()) +
                       " (argument 0 'arg0', element offset 0 of 16), where "
                       "program (0, 0, 0) wrote 0 (store at " +
                       line_of(race_line) +
                       ", lane 0) in the same launch; programs that store to "
                       "one address must store the same value (use an "
                       "atomic, or a mask so that one program writes each "
                       "element)");
    EXPECT_EQ(cpu,
              error_of([&] { racy[{4}].with(kReferenceRaces)(out, 1.f); }));
  }
  // On every thread count, some pair of programs is reported.
  for (int repeat = 0; repeat < 3; ++repeat) {
    std::string cpu = error_of([&] { racy[{64}].with(kRaces)(out, 1.f); });
    EXPECT_THAT(cpu, HasSubstr("write race: lane "));
    EXPECT_THAT(cpu, HasSubstr("store at " + line_of(race_line)));
  }
}

TEST(CheckedRaces, SameValuesAreBenign) {
  auto out = poisoned<float>(16);
  racy[{64}].with(kRaces)(out, 0.f);
  for (int i = 0; i < 16; ++i)
    ASSERT_EQ(out[i], static_cast<float>(i));
  racy[{64}].with(kReferenceRaces)(out, 0.f);
}

TEST(CheckedRaces, OffUnlessAskedFor) {
  auto out = poisoned<float>(16);
  racy[{8}].with(kChecked)(out, 1.f); // bounds only: the race is not looked for
  racy[{8}].with(kUnchecked)(out, 1.f);
  racy[{8}].with(kReference)(out, 1.f);
}

auto histogram =
    bl::kernel("histogram", [](bl::Ptr<int32_t> keys, bl::Ptr<int32_t> bins,
                               bl::i32 n, bl::Ptr<int32_t> last) {
      auto offs = bl::program_id(0) * 64 + bl::arange(0, 64);
      auto mask = offs < n;
      bl::atomic_add(bins + bl::load(keys + offs, mask), 1, mask);
      bl::atomic_max(last, bl::program_id(0)); // every program: atomics
    });

TEST(CheckedRaces, AtomicsAreNotRaces) {
  BLOCC_SEED_TRACE();
  const int n = 1009;
  auto keys = random_values<int32_t>(n, 0, 6);
  std::vector<int32_t> bins(7, 0), last(1, -1);
  histogram[{bl::cdiv(n, 64)}].with(kRaces)(keys, bins, n, last);
  std::vector<int32_t> want(7, 0);
  for (int k : keys)
    ++want[k];
  EXPECT_EQ(bins, want);
  EXPECT_EQ(last[0], 15);
}

auto write_pid = bl::kernel("write_pid", [](bl::Ptr<int32_t> out) {
  // Each program writes its own element, then every program writes
  // element 0 of a second half with its id: a race in element 16.
  auto pid = bl::program_id(0);
  bl::store(out + pid, pid);
  bl::store(out + 16, pid * 0 + 7); // the same value: benign
});

TEST(CheckedRaces, ScalarStores) {
  std::vector<int32_t> out(17, -1);
  write_pid[{16}].with(kRaces)(out);
  for (int i = 0; i < 16; ++i)
    ASSERT_EQ(out[i], i);
  EXPECT_EQ(out[16], 7);
}

// -------------------------------------------------------- environment
TEST(CheckedEnvironment, BloccCheckSelectsTheMode) {
  std::vector<float> x(100, 1.f);
  auto out = poisoned<float>(128);
  bl::LaunchOptions cpu = options(bl::Backend::Cpu, bl::Check::Default);
  for (const char *on : {"1", "bounds", "races"}) {
    ScopedEnv env("BLOCC_CHECK", on);
    EXPECT_THAT(error_of([&] { tail_load[{2}].with(cpu)(x, out, 100); }),
                HasSubstr("out-of-bounds load: lane 36"))
        << on;
  }
  {
    ScopedEnv env("BLOCC_CHECK", "races");
    EXPECT_THAT(error_of([&] { racy[{2}].with(cpu)(out, 1.f); }),
                HasSubstr("write race"));
  }
  {
    ScopedEnv env("BLOCC_CHECK", "bounds");
    racy[{2}].with(cpu)(out, 1.f); // races are not looked for
  }
  {
    ScopedEnv env("BLOCC_CHECK", "on please");
    EXPECT_EQ(error_of([&] { racy[{2}].with(cpu)(out, 1.f); }),
              "BLOCC_CHECK='on please' is not a check mode; expected '1' or "
              "'bounds' (bounds checks), 'races' (bounds checks and "
              "write-race detection), or '0' (off)");
    // An explicit mode does not read the variable.
    racy[{2}].with(kUnchecked)(out, 1.f);
  }
  {
    // The launch's option wins over the environment.
    ScopedEnv env("BLOCC_CHECK", "1");
    racy[{2}].with(kUnchecked)(out, 1.f);
    EXPECT_THAT(error_of([&] { racy[{2}].with(kRaces)(out, 1.f); }),
                HasSubstr("write race"));
  }
}

TEST(CheckedEnvironment, OffByDefault) {
  // An off-by-one read that stays inside the allocation (the kernel sees a
  // span of 100 of 164 elements): unchecked, it reads the guard element.
  Guarded<float> x(100);
  for (int i = 0; i < 164; ++i)
    x.data()[i] = static_cast<float>(i);
  std::vector<float> out(128, 0.f);
  bl::LaunchOptions cpu = options(bl::Backend::Cpu, bl::Check::Default);
  for (const char *off : {static_cast<const char *>(nullptr), "", "0", "off"}) {
    ScopedEnv env("BLOCC_CHECK", off);
    out.assign(128, 0.f);
    tail_load[{2}].with(cpu)(x.span(), out, 101);
    // The store is masked by offs < n: element 100 (the guard's first) was
    // read but not stored; the kernel ran unchecked to the end.
    EXPECT_EQ(out[99], 198.f);
    EXPECT_THAT(
        error_of([&] { tail_load[{2}].with(kChecked)(x.span(), out, 101); }),
        HasSubstr("element offset 100 of 100"));
  }
}

// ------------------------------------------- correct kernels, unchanged
auto vector_add =
    bl::kernel("vector_add", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                bl::Ptr<float> out, bl::i32 n) {
      auto offs = bl::program_id(0) * 1024 + bl::arange(0, 1024);
      auto mask = offs < n;
      bl::store(out + offs, bl::load(x + offs, mask) + bl::load(y + offs, mask),
                mask);
    });

TEST(CheckedResults, VectorAddIsTheSameWithChecksOnAndOff) {
  BLOCC_SEED_TRACE();
  for (int n : {1, 1021, 100003}) {
    auto x = random_values<float>(n, -10, 10),
         y = random_values<float>(n, -10, 10);
    std::vector<std::vector<float>> results;
    for (const bl::LaunchOptions &o : {kUnchecked, kChecked, kRaces}) {
      auto out = poisoned<float>(n);
      vector_add[{bl::cdiv(n, 1024)}].with(o)(x, y, out, n);
      results.push_back(out);
    }
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(results[0][i], x[i] + y[i]) << i;
    EXPECT_TRUE(same(results[1], results[0]));
    EXPECT_TRUE(same(results[2], results[0]));
  }
}

auto softmax = bl::kernel("softmax", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                        bl::i32 cols, bl::Const<int> BLOCK) {
  auto row = bl::program_id(0);
  auto offs = bl::arange(0, BLOCK);
  auto mask = offs < cols;
  auto v = bl::load(x + row * cols + offs, mask, -INFINITY);
  auto e = bl::exp(v - bl::max(v, 0));
  bl::store(out + row * cols + offs, e / bl::sum(e, 0), mask);
});

TEST(CheckedResults, SoftmaxIsTheSameWithChecksOnAndOff) {
  BLOCC_SEED_TRACE();
  const int rows = 37, cols = 781;
  auto x = random_values<float>(rows * cols, -5, 5);
  std::vector<std::vector<float>> results;
  for (const bl::LaunchOptions &o : {kUnchecked, kChecked, kRaces}) {
    auto out = poisoned<float>(rows * cols);
    softmax[{rows}].with(o)(x, out, cols, 1024);
    results.push_back(out);
  }
  EXPECT_TRUE(same(results[1], results[0]));
  EXPECT_TRUE(same(results[2], results[0]));
  auto reference = poisoned<float>(rows * cols);
  softmax[{rows}].with(kReference)(x, reference, cols, 1024);
  EXPECT_TRUE(close(results[0], reference, 1e-5, 1e-7));
}

// --------------------------------------------------- compiled variants
TEST(CheckedVariants, CheckedKernelsAreSeparateSpecializations) {
  static auto scaled = bl::kernel(
      "checked_variants", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto offs = bl::program_id(0) * 256 + bl::arange(0, 256);
        auto mask = offs < n;
        bl::store(out + offs, bl::load(x + offs, mask) * 3.f, mask);
      });
  std::vector<float> x(300, 1.f), out(300);
  size_t before = bl::cpu::num_compiled_kernels();
  scaled[{2}].with(kUnchecked)(x, out, 300);
  scaled[{2}].with(kChecked)(x, out, 300);
  scaled[{2}].with(kRaces)(x, out, 300);
  EXPECT_EQ(bl::cpu::num_compiled_kernels(), before + 3);
  scaled[{2}].with(kUnchecked)(x, out, 300);
  scaled[{2}].with(kChecked)(x, out, 300);
  EXPECT_EQ(bl::cpu::num_compiled_kernels(), before + 3);
  // Only the checked variants call the checking hooks.
  const auto &function =
      scaled.specialize({bl::detail::to_arg(x), bl::detail::to_arg(out),
                         bl::detail::to_arg(300)});
  std::string plain = bl::cpu::llvm_ir(function);
  bl::cpu::LlvmIrOptions checked_options;
  checked_options.check_bounds = true;
  std::string checked = bl::cpu::llvm_ir(function, checked_options);
  bl::cpu::LlvmIrOptions race_options;
  race_options.detect_races = true;
  std::string races = bl::cpu::llvm_ir(function, race_options);
  EXPECT_THAT(plain, Not(HasSubstr("blocc_cpu_access_fault")));
  EXPECT_THAT(plain, Not(HasSubstr("blocc_cpu_record_stores")));
  EXPECT_THAT(checked, HasSubstr("blocc_cpu_access_fault"));
  EXPECT_THAT(checked, Not(HasSubstr("blocc_cpu_record_stores")));
  EXPECT_THAT(races, HasSubstr("blocc_cpu_record_stores"));
  // The contiguous accesses stay vector accesses when checked.
  EXPECT_THAT(checked, HasSubstr("@llvm.masked.load"));
  EXPECT_THAT(checked, HasSubstr("@llvm.masked.store"));
}

TEST(CheckedVariants, LoadedFromTheDiskCacheTheyCheckAlike) {
  // A checked kernel from the disk cache (lowered again for its access
  // sites, its object code linked as stored) reports as the compiled one.
  blocc::cache_testing::TemporaryDirectory directory;
  ScopedEnv cache("BLOCC_CACHE_DIR", directory.path().c_str());
  // Other tests compiled this kernel into the memory cache, elsewhere.
  bl::cpu::clear_memory_cache_for_testing();
  auto functions = blocc::ir::parse_module(kThroughInteger);
  const blocc::ir::Function &f = *functions[0];
  std::vector<int32_t> x(8, 5), out(8, 0);
  std::vector<bl::KernelArg> args = {
      bl::KernelArg::of_pointer(x.data(), x.size() * 4),
      bl::KernelArg::of_pointer(out.data(), out.size() * 4),
      bl::KernelArg::of_int(30)};
  std::string compiled = error_of([&] {
    bl::cpu::run(*bl::cpu::compile(f, {.check_bounds = true}), {1}, args);
  });
  EXPECT_THAT(compiled, HasSubstr("out-of-bounds load: lane 0"));
  bl::cpu::clear_memory_cache_for_testing();
  blocc::cache_testing::CounterDelta delta;
  auto loaded = bl::cpu::compile(f, {.check_bounds = true});
  EXPECT_EQ(delta().disk_hits, 1u);
  EXPECT_EQ(delta().jit_compiles, 0u);
  EXPECT_EQ(error_of([&] { bl::cpu::run(*loaded, {1}, args); }), compiled);
  // The unchecked variant is another entry: compiled, not loaded.
  bl::cpu::compile(f);
  EXPECT_EQ(delta().jit_compiles, 1u);
}

} // namespace
