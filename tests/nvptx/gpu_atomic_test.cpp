// Atomics on the GPU against the CPU backend: every read-modify-write kind
// on every element type the frontend accepts, compare-and-swap on 16-, 32-
// and 64-bit elements, masks (masked-off lanes touch nothing and return
// 0), scalar atomics with each memory semantic and scope, blocks smaller
// than the CTA (replicas must not apply an element twice), 2-D blocks, and
// heavy contention (a histogram of 2^20 elements into 16 bins, float sums
// whose every partial sum is exact, float max through the compare-and-swap
// loop with NaNs and signed zeros). Results compare bit for bit with the
// CPU backend (any NaN matches any NaN: the GPU's float add makes the
// canonical NaN) and with host references. The PTX is checked and
// ptxas-assembled for sm_80 and sm_90 everywhere; the runs skip (reported
// as skipped) without a GPU.
#include "nvptx/support.h"

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

enum Kind { Add, Max, Min, And, Or, Xor, Xchg };
const char *kind_names[] = {"add", "max", "min", "and", "or", "xor", "xchg"};

bl::Tensor rmw(int kind, bl::Tensor pointer, bl::Tensor value, bl::Tensor mask,
               bl::AtomicOptions options = {}) {
  switch (kind) {
  case Add:
    return bl::atomic_add(pointer, value, mask, options);
  case Max:
    return bl::atomic_max(pointer, value, mask, options);
  case Min:
    return bl::atomic_min(pointer, value, mask, options);
  case And:
    return bl::atomic_and(pointer, value, mask, options);
  case Or:
    return bl::atomic_or(pointer, value, mask, options);
  case Xor:
    return bl::atomic_xor(pointer, value, mask, options);
  default:
    return bl::atomic_xchg(pointer, value, mask, options);
  }
}

// One atomic of KIND per element at distinct addresses; every lane's old
// value is stored (masked-off lanes: what the atomic returns there).
template <typename T> auto &every_lane_kernel() {
  static auto k = bl::kernel(
      "every_lane", [](bl::Ptr<T> memory, bl::Ptr<T> values, bl::Ptr<T> old,
                       bl::i32 n, bl::Const<int> KIND, bl::Const<int> BLOCK) {
        auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
        auto in_range = offs < n;
        auto mask = in_range && (offs % 5 != 2);
        auto v = bl::load(values + offs, in_range);
        bl::store(old + offs, rmw(KIND, memory + offs, v, mask), in_range);
      });
  return k;
}

template <typename T> bool is_nan(T x) {
  if constexpr (std::is_same_v<T, bl::half>)
    return (x.bits & 0x7c00) == 0x7c00 && (x.bits & 0x3ff) != 0;
  else if constexpr (std::is_same_v<T, bl::bfloat16_t>)
    return (x.bits & 0x7f80) == 0x7f80 && (x.bits & 0x7f) != 0;
  else if constexpr (std::is_floating_point_v<T>)
    return std::isnan(x);
  else
    return false;
}

/// same_bits, except that any NaN matches any NaN.
template <typename T>
::testing::AssertionResult same_values(std::vector<T> gpu,
                                       const std::vector<T> &cpu) {
  if (gpu.size() == cpu.size())
    for (size_t i = 0; i < gpu.size(); ++i)
      if (is_nan(gpu[i]) && is_nan(cpu[i]))
        gpu[i] = cpu[i];
  return same_bits(gpu, cpu);
}

/// Random elements with the special values of floats mixed in.
template <typename T> std::vector<T> inputs(size_t n, bool specials) {
  if constexpr (std::is_same_v<T, bl::half> ||
                std::is_same_v<T, bl::bfloat16_t>) {
    std::vector<float> f = random_values<float>(n, -100, 100);
    std::vector<T> out;
    for (float x : f)
      out.push_back(T(x));
    return out;
  } else if constexpr (std::is_floating_point_v<T>) {
    std::vector<T> v = random_values<T>(n, -1e6, 1e6);
    const T special[] = {T(NAN), T(0.0), T(-0.0), T(INFINITY), T(-INFINITY)};
    if (specials)
      for (size_t i = 3; i < n; i += 7)
        v[i] = special[(i / 7) % 5];
    return v;
  } else if constexpr (std::is_signed_v<T>) {
    return random_values<T>(n, double(std::numeric_limits<T>::min()),
                            double(std::numeric_limits<T>::max() / 2));
  } else {
    std::vector<T> v(n);
    for (auto &x : v)
      x = static_cast<T>(rng()()); // above 2^31 (2^63) too
    return v;
  }
}

template <typename T> void check_every_lane(int kind, int n, int block) {
  SCOPED_TRACE(std::string("atomic_") + kind_names[kind] +
               " n=" + std::to_string(n) + " block=" + std::to_string(block));
  // NaN and inf in an add give NaNs of other payloads on the GPU; max/min
  // and xchg must keep their bits.
  const bool specials = kind != Add;
  auto memory = inputs<T>(n, specials), values = inputs<T>(n, specials);
  auto &k = every_lane_kernel<T>();
  DeviceBuffer<T> dmemory(memory), dvalues(values);
  auto dold = poisoned_on_gpu<T>(n);
  k[{bl::cdiv(n, block)}](dmemory, dvalues, dold, n, kind, block);
  auto old = poisoned<T>(n);
  k[{bl::cdiv(n, block)}].with(kCpu)(memory, values, old, n, kind, block);
  std::vector<T> gpu_old = dold.to_host();
  EXPECT_TRUE(same_values(dmemory.to_host(), memory));
  EXPECT_TRUE(same_values(gpu_old, old));
  // Masked-off lanes return 0 (memory kept: compared above).
  const T zero{};
  for (int i = 2; i < n; i += 5)
    ASSERT_EQ(std::memcmp(&gpu_old[i], &zero, sizeof(T)), 0) << "lane " << i;
}

template <typename T> void check_kinds(std::vector<int> kinds) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  for (int kind : kinds)
    for (auto [n, block] : {std::pair{1, 16}, {613, 128}, {4099, 1024}})
      check_every_lane<T>(kind, n, block);
}

const std::vector<int> integer_kinds{Add, Max, Min, And, Or, Xor, Xchg};
const std::vector<int> float_kinds{Add, Max, Min, Xchg};

TEST(GpuAtomic, EveryKindOnInt32) { check_kinds<int32_t>(integer_kinds); }
TEST(GpuAtomic, EveryKindOnUInt32) { check_kinds<uint32_t>(integer_kinds); }
TEST(GpuAtomic, EveryKindOnInt64) { check_kinds<int64_t>(integer_kinds); }
TEST(GpuAtomic, EveryKindOnUInt64) { check_kinds<uint64_t>(integer_kinds); }
TEST(GpuAtomic, FloatKindsOnFloat32WithNaNsAndSignedZeros) {
  check_kinds<float>(float_kinds);
}
TEST(GpuAtomic, FloatKindsOnFloat64WithNaNsAndSignedZeros) {
  check_kinds<double>(float_kinds);
}
TEST(GpuAtomic, AddOnFloat16) { check_kinds<bl::half>({Add}); }
TEST(GpuAtomic, AddOnBFloat16) { check_kinds<bl::bfloat16_t>({Add}); }

/// The PTX instruction each kind and element type becomes.
template <typename T>
void expect_atom(int kind, const std::string &instruction) {
  SCOPED_TRACE(std::string("atomic_") + kind_names[kind]);
  std::vector<T> x(64);
  const ir::Function &f =
      specialization(every_lane_kernel<T>(), x, x, x, int32_t{64}, kind, 128);
  expect_ptx_assembles(f);
  EXPECT_THAT(ptx_for(f), ::testing::HasSubstr(instruction));
}

TEST(GpuAtomicPtx, EachKindIsOneAtomOrACompareAndSwapLoop) {
  expect_atom<int32_t>(Add, "atom.acq_rel.gpu.global.add.u32");
  expect_atom<int32_t>(Max, "atom.acq_rel.gpu.global.max.s32");
  expect_atom<uint32_t>(Min, "atom.acq_rel.gpu.global.min.u32");
  expect_atom<int64_t>(Min, "atom.acq_rel.gpu.global.min.s64");
  expect_atom<uint64_t>(Max, "atom.acq_rel.gpu.global.max.u64");
  expect_atom<int64_t>(And, "atom.acq_rel.gpu.global.and.b64");
  expect_atom<uint32_t>(Or, "atom.acq_rel.gpu.global.or.b32");
  expect_atom<int32_t>(Xor, "atom.acq_rel.gpu.global.xor.b32");
  expect_atom<float>(Xchg, "atom.acq_rel.gpu.global.exch.b32");
  expect_atom<double>(Xchg, "atom.acq_rel.gpu.global.exch.b64");
  expect_atom<float>(Add, "atom.acq_rel.gpu.global.add.f32");
  expect_atom<double>(Add, "atom.acq_rel.gpu.global.add.f64");
  expect_atom<bl::half>(Add, "atom.acq_rel.gpu.global.add.noftz.f16");
  expect_atom<bl::bfloat16_t>(Add, "atom.acq_rel.gpu.global.add.noftz.bf16");
  // No atom for these: compare-and-swap loops (bf16 add before sm_90).
  std::vector<bl::bfloat16_t> b(64);
  EXPECT_THAT(ptx_for(specialization(every_lane_kernel<bl::bfloat16_t>(), b, b,
                                     b, int32_t{64}, int(Add), 128),
                      "sm_80"),
              ::testing::HasSubstr("atom.acq_rel.gpu.global.cas.b16"));
  expect_atom<float>(Max, "atom.acq_rel.gpu.global.cas.b32");
  expect_atom<double>(Min, "atom.acq_rel.gpu.global.cas.b64");
}

// ------------------------------------------------------------------- cas
template <typename T> auto &cas_kernel() {
  static auto k = bl::kernel(
      "cas_lanes", [](bl::Ptr<T> memory, bl::Ptr<T> compare, bl::Ptr<T> value,
                      bl::Ptr<T> old, bl::i32 n, bl::Const<int> BLOCK) {
        // cas takes no mask: n is a multiple of the block.
        auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
        auto c = bl::load(compare + offs), v = bl::load(value + offs);
        bl::store(old + offs, bl::atomic_cas(memory + offs, c, v));
      });
  return k;
}

template <typename T> void check_cas(int n, int block) {
  SCOPED_TRACE("n=" + std::to_string(n) + " block=" + std::to_string(block));
  auto memory = inputs<T>(n, true), value = inputs<T>(n, true);
  auto compare = inputs<T>(n, true);
  for (int i = 0; i < n; i += 2)
    compare[i] = memory[i]; // even lanes match, NaNs by their bits too
  if (n > 1 && std::is_floating_point_v<T>) {
    memory[1] = T(0.0), compare[1] = T(-0.0); // equal numbers, not bits
  }
  auto &k = cas_kernel<T>();
  DeviceBuffer<T> dmemory(memory), dcompare(compare), dvalue(value);
  auto dold = poisoned_on_gpu<T>(n);
  k[{n / block}](dmemory, dcompare, dvalue, dold, n, block);
  auto old = poisoned<T>(n);
  k[{n / block}].with(kCpu)(memory, compare, value, old, n, block);
  EXPECT_TRUE(same_bits(dmemory.to_host(), memory));
  EXPECT_TRUE(same_bits(dold.to_host(), old));
}

template <typename T> void check_cas_sizes() {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  check_cas<T>(16, 16);
  check_cas<T>(1024 * 3, 1024);
}

TEST(GpuAtomicCas, UInt16) { check_cas_sizes<uint16_t>(); }
TEST(GpuAtomicCas, Float16) { check_cas_sizes<bl::half>(); }
TEST(GpuAtomicCas, Int32) { check_cas_sizes<int32_t>(); }
TEST(GpuAtomicCas, Float32ComparesBits) { check_cas_sizes<float>(); }
TEST(GpuAtomicCas, Int64) { check_cas_sizes<int64_t>(); }
TEST(GpuAtomicCas, Float64ComparesBits) { check_cas_sizes<double>(); }

TEST(GpuAtomicPtx, CasOnEachWidth) {
  std::vector<uint16_t> s(64);
  std::vector<float> f(64);
  std::vector<double> d(64);
  for (auto [function, instruction] :
       {std::pair{&specialization(cas_kernel<uint16_t>(), s, s, s, s,
                                  int32_t{64}, 64),
                  "atom.acq_rel.gpu.global.cas.b16"},
        {&specialization(cas_kernel<float>(), f, f, f, f, int32_t{64}, 64),
         "atom.acq_rel.gpu.global.cas.b32"},
        {&specialization(cas_kernel<double>(), d, d, d, d, int32_t{64}, 64),
         "atom.acq_rel.gpu.global.cas.b64"}}) {
    expect_ptx_assembles(*function);
    EXPECT_THAT(ptx_for(*function), ::testing::HasSubstr(instruction));
  }
}

// ------------------------------------------------------------- contention
// hist[bin[i]] += 1 for 2^20 elements into 16 bins; old[i] gets the count
// before. Every bin's old values are its start, start + 1, ... once each.
auto histogram = bl::kernel(
    "histogram", [](bl::Ptr<int32_t> bins, bl::Ptr<int32_t> hist,
                    bl::Ptr<int32_t> old, bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto bin = bl::load(bins + offs, mask);
      bl::store(old + offs, bl::atomic_add(hist + bin, 1, mask), mask);
    });

TEST(GpuAtomicContention, HistogramOfAMillionElementsInSixteenBins) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int n = (1 << 20) + 3, num_bins = 16;
  auto bins = random_values<int32_t>(n, 0, num_bins - 1);
  auto start = random_values<int32_t>(num_bins, -1000, 1000);
  DeviceBuffer<int32_t> dbins(bins), dhist(start);
  auto dold = poisoned_on_gpu<int32_t>(n);
  histogram[{bl::cdiv(n, 1024)}](dbins, dhist, dold, n, 1024);
  std::vector<int32_t> hist = dhist.to_host(), old = dold.to_host();
  std::vector<int32_t> cpu_hist = start, cpu_old(n);
  histogram[{bl::cdiv(n, 1024)}].with(kCpu)(bins, cpu_hist, cpu_old, n, 1024);
  EXPECT_TRUE(same_bits(hist, cpu_hist));
  std::vector<std::vector<int32_t>> olds(num_bins);
  for (int i = 0; i < n; ++i)
    olds[bins[i]].push_back(old[i]);
  for (int b = 0; b < num_bins; ++b) {
    ASSERT_EQ(hist[b], start[b] + int32_t(olds[b].size())) << "bin " << b;
    std::sort(olds[b].begin(), olds[b].end());
    for (size_t k = 0; k < olds[b].size(); ++k)
      ASSERT_EQ(olds[b][k], start[b] + int32_t(k)) << "bin " << b;
  }
}

// Sums into 7 cells of values whose every partial sum is exact in T (small
// integers), so that any order of the additions gives the same bits.
template <typename T> auto &exact_sums_kernel() {
  static auto k = bl::kernel("exact_sums", [](bl::Ptr<T> x, bl::Ptr<T> sums,
                                              bl::i32 n, bl::Const<int> BLOCK) {
    auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
    auto mask = offs < n;
    bl::atomic_add(sums + offs % 7, bl::load(x + offs, mask), mask);
  });
  return k;
}

template <typename T> double to_double(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<double>(x);
  else
    return static_cast<double>(static_cast<float>(x));
}

template <typename T> void check_exact_sums(int n, int magnitude) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  std::vector<int32_t> ints = random_values<int32_t>(n, -magnitude, magnitude);
  std::vector<T> x;
  std::vector<double> want(7, 0.0);
  for (int i = 0; i < n; ++i) {
    x.push_back(T(static_cast<float>(ints[i])));
    want[i % 7] += ints[i];
  }
  std::vector<T> zeros(7, T(0.0f));
  DeviceBuffer<T> dx(x), dsums(zeros);
  exact_sums_kernel<T>()[{bl::cdiv(n, 256)}](dx, dsums, n, 256);
  std::vector<T> sums = dsums.to_host(), cpu = zeros;
  exact_sums_kernel<T>()[{bl::cdiv(n, 256)}].with(kCpu)(x, cpu, n, 256);
  EXPECT_TRUE(same_bits(sums, cpu));
  for (int c = 0; c < 7; ++c)
    EXPECT_EQ(to_double(sums[c]), want[c]) << "cell " << c;
}

TEST(GpuAtomicContention, Float32SumsFromEveryProgram) {
  check_exact_sums<float>((1 << 18) + 5, 8);
}
TEST(GpuAtomicContention, Float64SumsFromEveryProgram) {
  check_exact_sums<double>((1 << 18) + 5, 1000);
}
TEST(GpuAtomicContention, Float16SumsFromEveryProgram) {
  check_exact_sums<bl::half>(4099, 2); // |sums| < 2048: exact
}
TEST(GpuAtomicContention, BFloat16SumsFromEveryProgram) {
  check_exact_sums<bl::bfloat16_t>(701, 1); // |sums| < 256: exact
}

// Everything into 3 cells: max and min through the compare-and-swap loop
// (floats) or atom.max/min (integers); the final values do not depend on
// the order, NaNs (ignored) and -0 < +0 included.
template <typename T> auto &extrema_kernel() {
  static auto k =
      bl::kernel("extrema", [](bl::Ptr<T> x, bl::Ptr<T> high, bl::Ptr<T> low,
                               bl::i32 n, bl::Const<int> BLOCK) {
        auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
        auto mask = offs < n;
        auto v = bl::load(x + offs, mask);
        bl::atomic_max(high + offs % 3, v, mask);
        bl::atomic_min(low + offs % 3, v, mask);
      });
  return k;
}

template <typename T> void check_extrema() {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int n = (1 << 18) + 1;
  std::vector<T> x = inputs<T>(n, true);
  std::vector<T> high = inputs<T>(3, false), low = inputs<T>(3, false);
  if constexpr (std::is_floating_point_v<T>) {
    high = {T(NAN), T(-0.0), T(-1e30)}; // NaN memory takes the value
    low = {T(0.0), T(NAN), T(1e30)};
  }
  DeviceBuffer<T> dx(x), dhigh(high), dlow(low);
  extrema_kernel<T>()[{bl::cdiv(n, 512)}](dx, dhigh, dlow, n, 512);
  extrema_kernel<T>()[{bl::cdiv(n, 512)}].with(kCpu)(x, high, low, n, 512);
  EXPECT_TRUE(same_bits(dhigh.to_host(), high));
  EXPECT_TRUE(same_bits(dlow.to_host(), low));
}

TEST(GpuAtomicContention, Float32MaxMin) { check_extrema<float>(); }
TEST(GpuAtomicContention, Float64MaxMin) { check_extrema<double>(); }
TEST(GpuAtomicContention, Int64MaxMin) { check_extrema<int64_t>(); }
TEST(GpuAtomicContention, UInt64MaxMin) { check_extrema<uint64_t>(); }

// ------------------------------------------------------ scalar atomics
// A ticket counter taken with each memory semantic and scope; the ticket
// (the old value, which every thread needs) goes to memory and to a loop.
const bl::MemorySemantic semantics[] = {
    bl::MemorySemantic::Relaxed, bl::MemorySemantic::Acquire,
    bl::MemorySemantic::Release, bl::MemorySemantic::AcqRel};
const char *semantic_names[] = {"relaxed", "acquire", "release", "acq_rel"};
const bl::MemoryScope scopes[] = {bl::MemoryScope::Cta, bl::MemoryScope::Gpu,
                                  bl::MemoryScope::System};
const char *scope_names[] = {"cta", "gpu", "sys"};

auto tickets = bl::kernel(
    "tickets", [](bl::Ptr<uint32_t> counter, bl::Ptr<uint32_t> ticket,
                  bl::Ptr<uint32_t> spread, bl::Const<int> SEM,
                  bl::Const<int> SCOPE, bl::Const<int> BLOCK) {
      auto pid = bl::program_id(0);
      auto t = bl::atomic_add(
          counter, 1,
          {.sem = semantics[int(SEM)], .scope = scopes[int(SCOPE)]});
      bl::store(ticket + pid, t);
      // Each thread holds the ticket: a block of it.
      auto offs = pid * BLOCK + bl::arange(0, BLOCK);
      bl::store(spread + offs, t + bl::arange(0, BLOCK));
    });

TEST(GpuAtomicPtx, EverySemanticAndScopeIsSpelledOut) {
  std::vector<uint32_t> one(1), many(8), spread(8 * 64);
  for (int sem = 0; sem < 4; ++sem)
    for (int scope = 0; scope < 3; ++scope) {
      std::string atom = std::string("atom.") + semantic_names[sem] + "." +
                         scope_names[scope] + ".global.add.u32";
      SCOPED_TRACE(atom);
      const ir::Function &f =
          specialization(tickets, one, many, spread, sem, scope, 64);
      expect_ptx_assembles(f);
      EXPECT_THAT(ptx_for(f), ::testing::HasSubstr(atom));
    }
}

TEST(GpuAtomicScalar, EverySemanticAndScopeHandsOutEachTicketOnce) {
  BLOCC_REQUIRE_GPU();
  const int programs = 301, block = 64;
  for (int sem = 0; sem < 4; ++sem)
    for (int scope = 0; scope < 3; ++scope) {
      SCOPED_TRACE(std::string(semantic_names[sem]) + " " + scope_names[scope]);
      // cta scope orders nothing between programs, but an atom is still
      // one indivisible update of its address.
      DeviceBuffer<uint32_t> dcounter(std::vector<uint32_t>{1000});
      auto dticket = poisoned_on_gpu<uint32_t>(programs);
      auto dspread = poisoned_on_gpu<uint32_t>(programs * block);
      tickets[{programs}](dcounter, dticket, dspread, sem, scope, block);
      EXPECT_EQ(dcounter.to_host()[0], 1000u + programs);
      std::vector<uint32_t> t = dticket.to_host(), s = dspread.to_host();
      for (int p = 0; p < programs; ++p)
        for (int i = 0; i < block; ++i)
          ASSERT_EQ(s[p * block + i], t[p] + i) << "program " << p;
      std::sort(t.begin(), t.end());
      for (int p = 0; p < programs; ++p)
        ASSERT_EQ(t[p], 1000u + p);
    }
}

// -------------------------------------------- replicas and 2-D blocks
// A block of 16 on 4 warps (128 threads: 8 copies of each element) and a
// 2-D block: each element is applied once, and every copy gets its old
// value.
auto small_and_square = bl::kernel(
    "small_and_square",
    [](bl::Ptr<int32_t> counts, bl::Ptr<int32_t> old, bl::Ptr<int32_t> grid,
       bl::Ptr<int32_t> grid_old, bl::Const<int> BLOCK) {
      auto offs = bl::arange(0, BLOCK);
      auto before = bl::atomic_add(counts + offs, offs + 1);
      bl::store(old + offs, before * 2); // a use in another layout too
      auto r = bl::expand_dims(bl::arange(0, 8), 1);
      auto c = bl::expand_dims(bl::arange(0, 32), 0);
      auto cell = grid + r * 32 + c;
      bl::store(grid_old + r * 32 + c, bl::atomic_xor(cell, r * 100 + c));
    });

TEST(GpuAtomicLayouts, ReplicasApplyEachElementOnce) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  for (int block : {1, 16, 32}) {
    SCOPED_TRACE("block " + std::to_string(block));
    auto counts = random_values<int32_t>(block, -50, 50);
    auto grid = random_values<int32_t>(256, -5000, 5000);
    DeviceBuffer<int32_t> dcounts(counts), dgrid(grid);
    auto dold = poisoned_on_gpu<int32_t>(block);
    auto dgrid_old = poisoned_on_gpu<int32_t>(256);
    small_and_square[{1}](dcounts, dold, dgrid, dgrid_old, block);
    auto old = poisoned<int32_t>(block), grid_old = poisoned<int32_t>(256);
    small_and_square[{1}].with(kCpu)(counts, old, grid, grid_old, block);
    EXPECT_TRUE(same_bits(dcounts.to_host(), counts));
    EXPECT_TRUE(same_bits(dold.to_host(), old));
    EXPECT_TRUE(same_bits(dgrid.to_host(), grid));
    EXPECT_TRUE(same_bits(dgrid_old.to_host(), grid_old));
  }
}

TEST(GpuAtomicPtx, ReplicasAndTwoDimensionsAssemble) {
  std::vector<int32_t> a(32), b(32), c(256), d(256);
  expect_ptx_assembles(specialization(small_and_square, a, b, c, d, 16));
  expect_ptx_assembles(specialization(small_and_square, a, b, c, d, 32), 1);
}

} // namespace
