// Atomics end to end, from many programs at once. The checks hold for any
// interleaving a parallel backend may choose: final memory is compared with
// the order-free result, and the old values the atomics return are checked
// for what every order guarantees (the increments of one counter hand out
// each of its values once; an exchange chain returns every value but the
// last; an old value of max never exceeds the final one, ...).
#include "e2e/support.h"

#include <gmock/gmock.h>

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>

namespace bl = blocc;
using namespace blocc::testing;

namespace {

// ------------------------------------------------------------- histogram
// hist[bin[i]] += 1 for every i < n; old[i] receives the count before.
auto histogram = bl::kernel(
    "histogram", [](bl::Ptr<int32_t> bins, bl::Ptr<int32_t> hist,
                    bl::Ptr<int32_t> old, bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto bin = bl::load(bins + offs, mask);
      auto before = bl::atomic_add(hist + bin, 1, mask);
      bl::store(old + offs, before, mask);
    });

class Histogram : public ::testing::TestWithParam<int> {};

TEST_P(Histogram, CountsEveryValueAndHandsOutEachCountOnce) {
  const int n = GetParam(), num_bins = 37;
  auto bins = random_ints<int32_t>(n, 0, num_bins - 1);
  auto hist = random_ints<int32_t>(num_bins, -1000, 1000); // starting counts
  const auto start = hist;
  std::vector<int32_t> old(n, INT32_MIN); // poison
  histogram[{bl::cdiv(n, 64)}](bins, hist, old, n, 64);
  std::map<int, std::vector<int32_t>> olds_of_bin;
  for (int i = 0; i < n; ++i)
    olds_of_bin[bins[i]].push_back(old[i]);
  for (int b = 0; b < num_bins; ++b) {
    auto &olds = olds_of_bin[b];
    ASSERT_EQ(hist[b], start[b] + int32_t(olds.size())) << "bin " << b;
    // The increments of one bin returned start, start + 1, ..., in some
    // order: each exactly once.
    std::sort(olds.begin(), olds.end());
    for (size_t k = 0; k < olds.size(); ++k)
      ASSERT_EQ(olds[k], start[b] + int32_t(k)) << "bin " << b;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Histogram,
                         ::testing::Values(1, 7, 64, 65, 1000, 4099));

// ----------------------------------------------------- float atomic_add
// Row sums of an n x 8 matrix into 8 totals, one block per program.
auto column_sums =
    bl::kernel("column_sums", [](bl::Ptr<float> x, bl::Ptr<float> totals,
                                 bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n * 8;
      bl::atomic_add(totals + offs % 8, bl::load(x + offs, mask), mask);
    });

TEST(AtomicAddFloat, SumsColumnsFromEveryProgram) {
  const int rows = 301;
  auto x = random_floats(rows * 8);
  auto totals = random_floats(8);
  std::vector<double> want(totals.begin(), totals.end()), scale(8);
  for (int i = 0; i < rows * 8; ++i) {
    want[i % 8] += x[i];
    scale[i % 8] += std::abs(x[i]);
  }
  column_sums[{bl::cdiv(rows * 8, 128)}](x, totals, rows, 128);
  // One float32 rounding per addition, in any order.
  for (int c = 0; c < 8; ++c)
    EXPECT_NEAR(totals[c], want[c], (rows + 1) * 0x1p-24 * (scale[c] + 1))
        << "column " << c;
}

// --------------------------------------------------------- max and min
// Every program folds its block into out_max[g] / out_min[g], g = i % G.
template <typename T> auto &extrema_kernel() {
  static auto k = bl::kernel("extrema", [](bl::Ptr<T> x, bl::Ptr<T> out_max,
                                           bl::Ptr<T> out_min,
                                           bl::Ptr<T> old_max,
                                           bl::Ptr<T> old_min, bl::i32 n,
                                           bl::Const<int> GROUPS,
                                           bl::Const<int> BLOCK) {
    auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
    auto mask = offs < n;
    auto v = bl::load(x + offs, mask);
    auto group = offs % GROUPS;
    bl::store(old_max + offs, bl::atomic_max(out_max + group, v, mask), mask);
    bl::store(old_min + offs, bl::atomic_min(out_min + group, v, mask), mask);
  });
  return k;
}

template <typename T> std::vector<T> random_values(size_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    auto f = random_floats(n, -100, 100);
    return std::vector<T>(f.begin(), f.end());
  } else if constexpr (std::is_signed_v<T>) {
    return random_ints<T>(n, -1000000, 1000000);
  } else {
    // Above 2^31 too, where a signed comparison would go wrong.
    return random_ints<T>(n, 0, int64_t{std::numeric_limits<T>::max()});
  }
}

template <typename T> void check_extrema(int n) {
  const int groups = 5;
  auto x = random_values<T>(n);
  auto out_max = random_values<T>(groups), out_min = random_values<T>(groups);
  const auto init_max = out_max, init_min = out_min;
  std::vector<T> old_max(n), old_min(n);
  extrema_kernel<T>()[{bl::cdiv(n, 32)}](x, out_max, out_min, old_max, old_min,
                                         n, groups, 32);
  for (int g = 0; g < groups; ++g) {
    T want_max = init_max[g], want_min = init_min[g];
    std::vector<T> seen_max{init_max[g]}, seen_min{init_min[g]};
    for (int i = g; i < n; i += groups) {
      want_max = std::max(want_max, x[i]);
      want_min = std::min(want_min, x[i]);
      seen_max.push_back(x[i]);
      seen_min.push_back(x[i]);
    }
    ASSERT_EQ(out_max[g], want_max) << "group " << g;
    ASSERT_EQ(out_min[g], want_min) << "group " << g;
    // An old value is what the cell held: its start or some update, and
    // never beyond the final extremum.
    for (int i = g; i < n; i += groups) {
      EXPECT_THAT(seen_max, ::testing::Contains(old_max[i])) << "lane " << i;
      EXPECT_THAT(seen_min, ::testing::Contains(old_min[i])) << "lane " << i;
      EXPECT_LE(old_max[i], want_max);
      EXPECT_GE(old_min[i], want_min);
    }
  }
}

TEST(AtomicMaxMin, Int32WithNegatives) { check_extrema<int32_t>(523); }
TEST(AtomicMaxMin, UInt32AboveTwoToThe31) { check_extrema<uint32_t>(523); }
TEST(AtomicMaxMin, Int64) { check_extrema<int64_t>(97); }
TEST(AtomicMaxMin, Float32WithNegatives) { check_extrema<float>(523); }
TEST(AtomicMaxMin, Float64) { check_extrema<double>(64); }

// ------------------------------------------------------ and / or / xor
// Bit i % 32 of word i / 32: `or` sets the bits of the chosen lanes, `and`
// clears them in an all-ones word, `xor` flips them (the chosen lanes are
// distinct, so each flip happens once).
auto bit_ops = bl::kernel(
    "bit_ops", [](bl::Ptr<int8_t> chosen, bl::Ptr<uint32_t> set_words,
                  bl::Ptr<uint32_t> clear_words, bl::Ptr<uint32_t> flip_words,
                  bl::Ptr<uint32_t> old_set, bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = (offs < n) && (bl::load(chosen + offs, offs < n) != 0);
      auto bit = bl::cast(1, bl::uint32) << bl::cast(offs % 32, bl::uint32);
      auto word = offs / 32;
      bl::store(old_set + offs, bl::atomic_or(set_words + word, bit, mask),
                mask);
      bl::atomic_and(clear_words + word, ~bit, mask);
      bl::atomic_xor(flip_words + word, bit, mask);
    });

TEST(AtomicBitwise, SetClearAndFlipChosenBits) {
  const int n = 1000, words = bl::cdiv(n, 32);
  auto chosen = random_ints<int8_t>(n, 0, 1);
  auto flip = random_ints<uint32_t>(words, 0, UINT32_MAX);
  const auto flip_start = flip;
  std::vector<uint32_t> set(words, 0), clear(words, UINT32_MAX);
  std::vector<uint32_t> old_set(n, 0xdeadbeef);
  bit_ops[{bl::cdiv(n, 128)}](chosen, set, clear, flip, old_set, n, 128);
  for (int w = 0; w < words; ++w) {
    uint32_t bits = 0;
    for (int i = w * 32; i < std::min(n, w * 32 + 32); ++i)
      if (chosen[i])
        bits |= 1u << (i % 32);
    EXPECT_EQ(set[w], bits) << "word " << w;
    EXPECT_EQ(clear[w], ~bits) << "word " << w;
    EXPECT_EQ(flip[w], flip_start[w] ^ bits) << "word " << w;
  }
  // Before a lane's `or`, its own bit was clear and the word held only bits
  // of other chosen lanes.
  for (int i = 0; i < n; ++i) {
    if (!chosen[i])
      continue;
    EXPECT_EQ(old_set[i] & (1u << (i % 32)), 0u) << "lane " << i;
    EXPECT_EQ(old_set[i] & ~set[i / 32], 0u) << "lane " << i;
  }
}

// --------------------------------------------------------------- xchg
// Every program swaps its id into one slot: the returned values and the
// final content are the start value and all ids, each once.
auto swap_in =
    bl::kernel("swap_in", [](bl::Ptr<int32_t> slot, bl::Ptr<int32_t> old) {
      auto pid = bl::program_id(0);
      bl::store(old + pid, bl::atomic_xchg(slot, pid));
    });

TEST(AtomicXchg, HandsOnEveryValueOnce) {
  const int programs = 77;
  std::vector<int32_t> slot{-5}, old(programs, INT32_MIN);
  swap_in[{programs}](slot, old);
  std::vector<int32_t> all = old;
  all.push_back(slot[0]);
  std::sort(all.begin(), all.end());
  std::vector<int32_t> want(programs);
  std::iota(want.begin(), want.end(), 0);
  want.insert(want.begin(), -5);
  EXPECT_EQ(all, want);
}

// ------------------------------------------------ a scalar ticket counter
auto take_ticket = bl::kernel("take_ticket", [](bl::Ptr<uint64_t> counter,
                                                bl::Ptr<uint64_t> ticket) {
  auto pid = bl::program_id(0) + bl::program_id(1) * bl::num_programs(0);
  bl::store(ticket + pid,
            bl::atomic_add(counter, 1, {.sem = bl::MemorySemantic::Relaxed}));
});

TEST(AtomicAddScalar, EveryProgramGetsOneTicket) {
  std::vector<uint64_t> counter{uint64_t{1} << 40}, ticket(6 * 7, UINT64_MAX);
  take_ticket[{6, 7}](counter, ticket);
  EXPECT_EQ(counter[0], (uint64_t{1} << 40) + 42);
  std::sort(ticket.begin(), ticket.end());
  for (int i = 0; i < 42; ++i)
    EXPECT_EQ(ticket[i], (uint64_t{1} << 40) + i);
}

// ---------------------------------------------------------------- cas
// Slot claiming: each of P programs walks the P slots and claims the first
// free one (0) with compare-and-swap. A program that already holds a slot
// compares against -1, which no slot holds, so it writes nothing. In any
// order every program ends with a slot of its own.
auto claim_slot = bl::kernel("claim_slot", [](bl::Ptr<int32_t> slots,
                                              bl::Ptr<int32_t> claimed,
                                              bl::i32 num_slots) {
  auto pid = bl::program_id(0);
  bl::Tensor mine = bl::scalar(-1, bl::int32);
  for (auto k : bl::range(0, num_slots)) {
    auto searching = mine < 0;
    auto old = bl::atomic_cas(slots + k, bl::where(searching, 0, -1), pid + 1);
    mine = bl::where(searching && old == 0, k, mine);
  }
  bl::store(claimed + pid, mine);
});

TEST(AtomicCas, EveryProgramClaimsADistinctSlot) {
  const int programs = 23;
  std::vector<int32_t> slots(programs, 0), claimed(programs, INT32_MIN);
  claim_slot[{programs}](slots, claimed, programs);
  std::vector<int32_t> owners = slots;
  std::sort(owners.begin(), owners.end());
  for (int i = 0; i < programs; ++i)
    EXPECT_EQ(owners[i], i + 1); // every slot taken, by distinct programs
  for (int p = 0; p < programs; ++p) {
    ASSERT_GE(claimed[p], 0) << "program " << p;
    ASSERT_LT(claimed[p], programs) << "program " << p;
    EXPECT_EQ(slots[claimed[p]], p + 1) << "program " << p;
  }
}

// Lane-wise cas on floats: lanes whose memory equals `compare` bit for bit
// take the new value; -0.0 does not match +0.0.
auto cas_lanes =
    bl::kernel("cas_lanes", [](bl::Ptr<float> memory, bl::Ptr<float> compare,
                               bl::Ptr<float> value, bl::Ptr<float> old,
                               bl::Const<int> BLOCK) {
      auto offs = bl::arange(0, BLOCK);
      bl::store(old + offs,
                bl::atomic_cas(memory + offs, bl::load(compare + offs),
                               bl::load(value + offs)));
    });

TEST(AtomicCas, SwapsOnlyBitwiseEqualLanes) {
  const int n = 64;
  auto memory = random_floats(n), value = random_floats(n);
  std::vector<float> compare = random_floats(n);
  for (int i = 0; i < n; i += 2)
    compare[i] = memory[i];             // even lanes match
  memory[1] = 0.0f, compare[1] = -0.0f; // equal as numbers, not as bits
  const auto before = memory;
  auto old = poisoned(n);
  cas_lanes[{1}](memory, compare, value, old, n);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(old[i]),
              std::bit_cast<uint32_t>(before[i]))
        << "lane " << i;
    float want = i % 2 == 0 ? value[i] : before[i];
    EXPECT_EQ(std::bit_cast<uint32_t>(memory[i]), std::bit_cast<uint32_t>(want))
        << "lane " << i;
  }
}

// ------------------------------------------------------ masked-off lanes
// Masked-off lanes point at live memory (and, past n, outside the buffer):
// none of it may change.
auto masked_add =
    bl::kernel("masked_add", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> old,
                                bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = (offs < n) && (offs % 3 != 0);
      bl::store(old + offs, bl::atomic_add(x + offs, 10, mask), mask);
    });

TEST(AtomicMask, MaskedOffLanesTouchNothing) {
  const int n = 101;
  auto x = random_ints<int32_t>(n, -50, 50);
  const auto before = x;
  std::vector<int32_t> old(n, INT32_MIN);
  masked_add[{bl::cdiv(n, 32)}](x, old, n, 32);
  for (int i = 0; i < n; ++i) {
    bool active = i % 3 != 0;
    EXPECT_EQ(x[i], active ? before[i] + 10 : before[i]) << "lane " << i;
    EXPECT_EQ(old[i], active ? before[i] : INT32_MIN) << "lane " << i;
  }
}

// ----------------------------------------------------- value conversion
// As in Triton, the value is converted to the pointee type: float values
// into an int32 counter truncate, a scalar value is broadcast.
auto convert_add =
    bl::kernel("convert_add",
               [](bl::Ptr<int32_t> x, bl::Ptr<float> y, bl::Const<int> BLOCK) {
                 auto offs = bl::arange(0, BLOCK);
                 bl::atomic_add(x + offs, bl::load(y + offs));
                 bl::atomic_add(x + offs, 100);
               });

TEST(AtomicConversion, ValueTakesThePointeeType) {
  std::vector<int32_t> x(16, 1);
  auto y = random_floats(16, -50, 50);
  convert_add[{1}](x, y, 16);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(x[i], 1 + static_cast<int32_t>(y[i]) + 100) << "lane " << i;
}

// ---------------------------------------------------------------- the IR
auto ordered = bl::kernel("ordered", [](bl::Ptr<int32_t> x) {
  bl::atomic_add(x, 1);
  bl::atomic_max(
      x, 2,
      {.sem = bl::MemorySemantic::Acquire, .scope = bl::MemoryScope::Cta});
  bl::atomic_cas(
      x, 0, 1,
      {.sem = bl::MemorySemantic::Release, .scope = bl::MemoryScope::System});
});

TEST(AtomicIR, RecordsSemanticAndScope) {
  std::vector<int32_t> x(1);
  std::string ir = ordered.ir_for(x);
  using ::testing::HasSubstr;
  EXPECT_THAT(ir,
              HasSubstr("kind = \"add\", scope = \"gpu\", sem = \"acq_rel\""));
  EXPECT_THAT(ir,
              HasSubstr("kind = \"max\", scope = \"cta\", sem = \"acquire\""));
  EXPECT_THAT(ir, HasSubstr("scope = \"sys\", sem = \"release\""));
}

} // namespace
