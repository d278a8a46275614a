// bl::randint / rand / randn / philox: the traced IR, run by the reference
// interpreter, against an independent host Philox written from the SC'11
// paper (Salmon et al.) and Random123's constants, itself pinned by
// Random123's published known-answer vectors (tests/kat_vectors), so that a
// wrong host reference cannot agree with a wrong kernel.
#include "backends/interpreter/interpreter.h"
#include "blocc/blocc.h"
#include "blocc/trace.h"
#include "ir/passes.h"
#include "unit/tracing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

namespace bl = blocc;

namespace {

using blocc::Error;
using blocc::KernelArg;
using blocc::Tensor;
using blocc::ir::OpCode;
using blocc::ir::Scalar;
using blocc::ir::Type;
using ::testing::HasSubstr;

// ------------------------------------------------------------ host Philox

using Words32 = std::array<uint32_t, 4>;
using Words64 = std::array<uint64_t, 4>;

/// Philox 4x32-R: R rounds of the S-box (two 32x32->64 multiplies, words
/// 0 and 2, with the high halves xored into words 1 and 3 and the key),
/// the key bumped by the golden-ratio Weyl constants between rounds.
Words32 host_philox4x32(Words32 x, std::array<uint32_t, 2> key, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    if (r != 0) {
      key[0] += 0x9E3779B9u;
      key[1] += 0xBB67AE85u;
    }
    uint64_t p0 = uint64_t{0xD2511F53u} * x[0];
    uint64_t p2 = uint64_t{0xCD9E8D57u} * x[2];
    x = Words32{static_cast<uint32_t>(p2 >> 32) ^ x[1] ^ key[0],
                static_cast<uint32_t>(p2),
                static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key[1],
                static_cast<uint32_t>(p0)};
  }
  return x;
}

Words64 host_philox4x64(Words64 x, std::array<uint64_t, 2> key, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    if (r != 0) {
      key[0] += 0x9E3779B97F4A7C15u;
      key[1] += 0xBB67AE8584CAA73Bu;
    }
    unsigned __int128 p0 =
        static_cast<unsigned __int128>(0xD2E7470EE14C6C93u) * x[0];
    unsigned __int128 p2 =
        static_cast<unsigned __int128>(0xCA5A826395121157u) * x[2];
    x = Words64{static_cast<uint64_t>(p2 >> 64) ^ x[1] ^ key[0],
                static_cast<uint64_t>(p2),
                static_cast<uint64_t>(p0 >> 64) ^ x[3] ^ key[1],
                static_cast<uint64_t>(p0)};
  }
  return x;
}

/// Triton's key for a seed: its uint64 value split into 32-bit halves.
std::array<uint32_t, 2> seed_key(uint64_t seed) {
  return {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
}

/// tl.randint4x for one 64-bit offset pattern (low word, high word).
Words32 host_randint4x(uint64_t seed, uint64_t offset_bits, bool wide_offset,
                       int rounds = 10) {
  uint32_t hi = wide_offset ? static_cast<uint32_t>(offset_bits >> 32) : 0;
  return host_philox4x32({static_cast<uint32_t>(offset_bits), hi, 0, 0},
                         seed_key(seed), rounds);
}

float host_uniform(uint32_t bits) {
  int64_t x = static_cast<int32_t>(bits);
  if (x < 0)
    x = -x - 1;
  return static_cast<float>(x) * 4.6566127342e-10f;
}

std::pair<float, float> host_box_muller(float u1, float u2) {
  u1 = std::max(1.0e-7f, u1);
  float theta = 6.283185307179586f * u2;
  float r = std::sqrt(-2.0f * std::log(u1));
  return {r * std::cos(theta), r * std::sin(theta)};
}

// Random123, tests/kat_vectors: "philox4x32 R" lines (counter, key, result).
struct KnownAnswer {
  int rounds;
  Words32 counter;
  std::array<uint32_t, 2> key;
  Words32 expected;
};
const KnownAnswer kKnownAnswers[] = {
    {10,
     {0, 0, 0, 0},
     {0, 0},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {10,
     {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {10,
     {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    {7, {0, 0, 0, 0}, {0, 0}, {0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48}},
    {7,
     {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662}},
    {7,
     {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a}},
};
// "philox4x64 10" with counter 0 and key 0.
const Words64 kPhilox4x64ZeroAnswer = {0x16554d9eca36314c, 0xdb20fe9d672d0fdc,
                                       0xd7e772cee186176b, 0x7e68b68aec7ba23b};

TEST(HostPhilox, MatchesRandom123KnownAnswers) {
  for (const KnownAnswer &k : kKnownAnswers)
    EXPECT_EQ(host_philox4x32(k.counter, k.key, k.rounds), k.expected)
        << "rounds " << k.rounds << ", counter[0] " << std::hex << k.counter[0];
  EXPECT_EQ(host_philox4x64({0, 0, 0, 0}, {0, 0}, 10), kPhilox4x64ZeroAnswer);
  Words64 pi_answer = {0xa528f45403e61d95, 0x38c72dbd566e9788,
                       0xa5a1610e72fd18b5, 0x57bd43b5e52b7fe6};
  EXPECT_EQ(host_philox4x64({0x243f6a8885a308d3, 0x13198a2e03707344,
                             0xa4093822299f31d0, 0x082efa98ec4e6c89},
                            {0x452821e638d01377, 0xbe5466cf34e90c6c}, 10),
            pi_answer);
}

// ------------------------------------------------------------- tracing

using namespace blocc::unit_testing;

constexpr int64_t kBlock = 64;
constexpr uint32_t kPoison = 0xAAAAAAAAu;

/// A kernel storing randint4x(seed, offsets[i]) (word `word`) to out[i] for
/// i < n, with seed of type `seed_type` and offsets of type `offset_type`.
std::unique_ptr<blocc::ir::Function>
randint_kernel(Scalar seed_type, Scalar offset_type, int word, int n_rounds) {
  return trace({scalar(seed_type), pointer(offset_type), pointer(Scalar::U32),
                scalar(Scalar::I32)},
               [&](const Args &a) {
                 Tensor seed(a[0]), offsets_ptr(a[1]), out(a[2]), n(a[3]);
                 Tensor i = bl::arange(0, kBlock);
                 Tensor mask = i < n;
                 Tensor offsets = bl::load(offsets_ptr + i, mask);
                 auto words = bl::randint4x(seed, offsets, n_rounds);
                 bl::store(out + i, words[word], mask);
               });
}

// Offsets at the edges of their type and a length that is not a power of
// two, so that the masked tail is exercised too.
std::vector<int32_t> interesting_offsets32(int n) {
  std::vector<int32_t> v;
  for (int i = 0; i < n; ++i) {
    switch (i % 5) {
    case 0:
      v.push_back(i);
      break;
    case 1:
      v.push_back(std::numeric_limits<int32_t>::max() - i);
      break;
    case 2:
      v.push_back(std::numeric_limits<int32_t>::min() + i);
      break;
    case 3:
      v.push_back(-i);
      break;
    default:
      v.push_back(static_cast<int32_t>(0x9E3779B9u * static_cast<uint32_t>(i)));
      break;
    }
  }
  return v;
}

std::vector<int64_t> interesting_offsets64(int n) {
  std::vector<int64_t> v;
  for (int i = 0; i < n; ++i) {
    switch (i % 6) {
    case 0:
      v.push_back(i);
      break;
    case 1:
      v.push_back((int64_t{1} << 32) + i);
      break;
    case 2:
      v.push_back(std::numeric_limits<int64_t>::max() - i);
      break;
    case 3:
      v.push_back(std::numeric_limits<int64_t>::min() + i);
      break;
    case 4:
      v.push_back(-static_cast<int64_t>(i));
      break;
    default:
      v.push_back(
          static_cast<int64_t>(0x9E3779B97F4A7C15u * static_cast<uint64_t>(i)));
      break;
    }
  }
  return v;
}

const int64_t kSeeds[] = {0,
                          1,
                          42,
                          0xDEADBEEF,
                          -1,
                          0x123456789ABCDEF0,
                          std::numeric_limits<int64_t>::min()};

// -------------------------------------------------- values, interpreted

TEST(Random, RandintOfInt32OffsetsMatchesHostPhilox) {
  const int n = 37;
  auto fn = randint_kernel(Scalar::I64, Scalar::I32, 0, 10);
  std::vector<int32_t> offsets = interesting_offsets32(n);
  offsets.resize(kBlock, 0);
  for (int64_t seed : kSeeds) {
    std::vector<uint32_t> out(kBlock, kPoison);
    blocc::interp::interpret(*fn, blocc::Grid(1),
                             {KernelArg::of_int(seed), buffer(offsets),
                              buffer(out), KernelArg::of_int(n)});
    for (int i = 0; i < kBlock; ++i) {
      uint32_t want =
          i < n ? host_randint4x(static_cast<uint64_t>(seed),
                                 static_cast<uint32_t>(offsets[i]), false)[0]
                : kPoison;
      ASSERT_EQ(out[i], want)
          << "seed " << seed << ", lane " << i << ", offset " << offsets[i];
    }
  }
}

TEST(Random, RandintOfInt64OffsetsUsesTheHighWordAsCounter1) {
  const int n = 45;
  std::vector<int64_t> offsets = interesting_offsets64(n);
  offsets.resize(kBlock, 0);
  for (int word = 0; word < 4; ++word) {
    auto fn = randint_kernel(Scalar::I64, Scalar::I64, word, 10);
    for (int64_t seed :
         {int64_t{7}, int64_t{-2}, int64_t{0x0123456789ABCDEF}}) {
      std::vector<uint32_t> out(kBlock, kPoison);
      blocc::interp::interpret(*fn, blocc::Grid(1),
                               {KernelArg::of_int(seed), buffer(offsets),
                                buffer(out), KernelArg::of_int(n)});
      for (int i = 0; i < kBlock; ++i) {
        uint32_t want =
            i < n
                ? host_randint4x(static_cast<uint64_t>(seed),
                                 static_cast<uint64_t>(offsets[i]), true)[word]
                : kPoison;
        ASSERT_EQ(out[i], want) << "word " << word << ", seed " << seed
                                << ", lane " << i << ", offset " << offsets[i];
      }
    }
  }
}

TEST(Random, Randint4xWithSevenRoundsMatchesHostPhilox) {
  const int n = 64;
  std::vector<int32_t> offsets = interesting_offsets32(n);
  for (int word = 0; word < 4; ++word) {
    auto fn = randint_kernel(Scalar::I64, Scalar::I32, word, 7);
    std::vector<uint32_t> out(kBlock, kPoison);
    blocc::interp::interpret(*fn, blocc::Grid(1),
                             {KernelArg::of_int(99), buffer(offsets),
                              buffer(out), KernelArg::of_int(n)});
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(out[i], host_randint4x(99, static_cast<uint32_t>(offsets[i]),
                                       false, 7)[word])
          << "word " << word << ", lane " << i;
  }
}

TEST(Random, SeedIsExtendedToUint64ByItsSignedness) {
  // An int32 seed of -1 sign-extends (key = ffffffff ffffffff); a uint32
  // seed of 0xffffffff zero-extends (key = ffffffff 00000000).
  std::vector<int32_t> offsets = interesting_offsets32(kBlock);
  for (Scalar seed_type : {Scalar::I32, Scalar::U32, Scalar::I16}) {
    auto fn = randint_kernel(seed_type, Scalar::I32, 0, 10);
    std::vector<uint32_t> out(kBlock, kPoison);
    int64_t seed_arg = seed_type == Scalar::U32 ? 0xffffffff : -1;
    blocc::interp::interpret(*fn, blocc::Grid(1),
                             {KernelArg::of_int(seed_arg), buffer(offsets),
                              buffer(out), KernelArg::of_int(kBlock)});
    uint64_t key = seed_type == Scalar::U32 ? 0xffffffffu : ~uint64_t{0};
    for (int i = 0; i < kBlock; ++i)
      ASSERT_EQ(out[i], host_randint4x(key, static_cast<uint32_t>(offsets[i]),
                                       false)[0])
          << blocc::ir::scalar_name(seed_type) << " seed, lane " << i;
  }
}

TEST(Random, NumberSeedsAndScalarOffsetsWork) {
  // randint(seed literal, offset literal) is a scalar; randint(0, 0) is
  // Random123's first known answer.
  auto fn = trace({pointer(Scalar::U32)}, [](const Args &a) {
    Tensor out(a[0]);
    auto words = bl::randint4x(0, 0);
    for (int w = 0; w < 4; ++w) {
      EXPECT_EQ(words[w].rank(), 0);
      bl::store(out + w, words[w]);
    }
    bl::store(out + 4, bl::randint(0xDEADBEEFCAFEull, -5));
    bl::store(out + 5, bl::randint(-1, int64_t{1} << 40));
  });
  std::vector<uint32_t> out(6, kPoison);
  blocc::interp::interpret(*fn, blocc::Grid(1), {buffer(out)});
  Words32 first{out[0], out[1], out[2], out[3]};
  EXPECT_EQ(first, kKnownAnswers[0].expected);
  EXPECT_EQ(out[4], host_randint4x(0xDEADBEEFCAFEull, static_cast<uint32_t>(-5),
                                   false)[0]);
  EXPECT_EQ(out[5], host_randint4x(~uint64_t{0}, uint64_t{1} << 40, true)[0]);
}

TEST(Random, PhiloxOnExplicitCountersMatchesKnownAnswers) {
  for (const KnownAnswer &k : kKnownAnswers) {
    auto fn =
        trace({scalar(Scalar::I64), scalar(Scalar::U32), scalar(Scalar::U32),
               scalar(Scalar::U32), scalar(Scalar::U32), pointer(Scalar::U32)},
              [&](const Args &a) {
                Tensor seed(a[0]), out(a[5]);
                auto words = bl::philox(seed, Tensor(a[1]), Tensor(a[2]),
                                        Tensor(a[3]), Tensor(a[4]), k.rounds);
                for (int w = 0; w < 4; ++w)
                  bl::store(out + w, words[w]);
              });
    std::vector<uint32_t> out(4, kPoison);
    uint64_t seed = uint64_t{k.key[1]} << 32 | k.key[0];
    blocc::interp::interpret(*fn, blocc::Grid(1),
                             {KernelArg::of_int(static_cast<int64_t>(seed)),
                              KernelArg::of_int(k.counter[0]),
                              KernelArg::of_int(k.counter[1]),
                              KernelArg::of_int(k.counter[2]),
                              KernelArg::of_int(k.counter[3]), buffer(out)});
    EXPECT_EQ((Words32{out[0], out[1], out[2], out[3]}), k.expected)
        << "rounds " << k.rounds << ", counter[0] " << std::hex << k.counter[0];
  }
}

TEST(Random, PhiloxOnUint64CountersRunsPhilox4x64) {
  auto fn =
      trace({pointer(Scalar::U64), pointer(Scalar::U64)}, [](const Args &a) {
        Tensor in(a[0]), out(a[1]);
        Tensor i = bl::arange(0, 8);
        Tensor c = bl::load(in + i);
        auto words = bl::philox(5, c, 0, c, 0);
        for (int w = 0; w < 4; ++w) {
          EXPECT_EQ(words[w].dtype(), bl::uint64);
          bl::store(out + i * 4 + w, words[w]);
        }
        auto zero = bl::philox(0, bl::scalar(0, bl::uint64), 0, 0, 0);
        for (int w = 0; w < 4; ++w)
          bl::store(out + 32 + w, zero[w]);
      });
  std::vector<uint64_t> in = {0,          1,     2,  0xffffffffffffffff,
                              1ull << 40, 12345, 99, 1ull << 63};
  std::vector<uint64_t> out(36, 0);
  blocc::interp::interpret(*fn, blocc::Grid(1), {buffer(in), buffer(out)});
  for (int i = 0; i < 8; ++i) {
    Words64 want = host_philox4x64({in[i], 0, in[i], 0}, {5, 0}, 10);
    for (int w = 0; w < 4; ++w)
      ASSERT_EQ(out[i * 4 + w], want[w]) << "lane " << i << ", word " << w;
  }
  EXPECT_EQ((Words64{out[32], out[33], out[34], out[35]}),
            kPhilox4x64ZeroAnswer);
}

TEST(Random, RandIsTritonsUniformFloatOfRandint) {
  const int n = 53;
  std::vector<int32_t> offsets = interesting_offsets32(kBlock);
  auto fn =
      trace({scalar(Scalar::I64), pointer(Scalar::I32), pointer(Scalar::F32),
             pointer(Scalar::F32), scalar(Scalar::I32)},
            [](const Args &a) {
              Tensor seed(a[0]), offsets_ptr(a[1]), out(a[2]), out4(a[3]),
                  n(a[4]);
              Tensor i = bl::arange(0, kBlock);
              Tensor mask = i < n;
              Tensor offs = bl::load(offsets_ptr + i, mask);
              Tensor u = bl::rand(seed, offs);
              EXPECT_EQ(u.dtype(), bl::float32);
              bl::store(out + i, u, mask);
              auto u4 = bl::rand4x(seed, offs);
              for (int w = 0; w < 4; ++w)
                bl::store(out4 + i * 4 + w, u4[w], mask);
            });
  for (int64_t seed : kSeeds) {
    std::vector<float> out(kBlock, -1.0f), out4(kBlock * 4, -1.0f);
    blocc::interp::interpret(*fn, blocc::Grid(1),
                             {KernelArg::of_int(seed), buffer(offsets),
                              buffer(out), buffer(out4), KernelArg::of_int(n)});
    for (int i = 0; i < kBlock; ++i) {
      if (i >= n) {
        ASSERT_EQ(out[i], -1.0f);
        continue;
      }
      Words32 bits = host_randint4x(static_cast<uint64_t>(seed),
                                    static_cast<uint32_t>(offsets[i]), false);
      ASSERT_EQ(out[i], host_uniform(bits[0]))
          << "seed " << seed << ", lane " << i;
      ASSERT_GE(out[i], 0.0f);
      ASSERT_LT(out[i], 1.0f);
      for (int w = 0; w < 4; ++w)
        ASSERT_EQ(out4[i * 4 + w], host_uniform(bits[w]))
            << "lane " << i << ", word " << w;
    }
  }
}

TEST(Random, UniformFloatOfExtremeBitsStaysBelowOne) {
  auto fn =
      trace({pointer(Scalar::U32), pointer(Scalar::F32)}, [](const Args &a) {
        Tensor in(a[0]), out(a[1]);
        Tensor i = bl::arange(0, 8);
        bl::store(out + i, bl::uint_to_uniform_float(bl::load(in + i)));
      });
  std::vector<uint32_t> in = {0,          1,          0x7fffffff, 0x80000000,
                              0xffffffff, 0xfffffffe, 0x40000000, 12345};
  std::vector<float> out(8, -1.0f);
  blocc::interp::interpret(*fn, blocc::Grid(1), {buffer(in), buffer(out)});
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(out[i], host_uniform(in[i])) << "bits " << std::hex << in[i];
    EXPECT_LT(out[i], 1.0f);
    EXPECT_GE(out[i], 0.0f);
  }
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[2], out[3]); // 0x80000000 folds onto 0x7fffffff
}

TEST(Random, RandnIsBoxMullerOfTheFirstTwoWords) {
  std::vector<int32_t> offsets = interesting_offsets32(kBlock);
  auto fn = trace({scalar(Scalar::I64), pointer(Scalar::I32),
                   pointer(Scalar::F32), pointer(Scalar::F32)},
                  [](const Args &a) {
                    Tensor seed(a[0]), offsets_ptr(a[1]), out(a[2]), out4(a[3]);
                    Tensor i = bl::arange(0, kBlock);
                    Tensor offs = bl::load(offsets_ptr + i);
                    bl::store(out + i, bl::randn(seed, offs));
                    auto n4 = bl::randn4x(seed, offs);
                    for (int w = 0; w < 4; ++w)
                      bl::store(out4 + i * 4 + w, n4[w]);
                  });
  for (int64_t seed : {int64_t{3}, int64_t{-77}}) {
    std::vector<float> out(kBlock), out4(kBlock * 4);
    blocc::interp::interpret(
        *fn, blocc::Grid(1),
        {KernelArg::of_int(seed), buffer(offsets), buffer(out), buffer(out4)});
    for (int i = 0; i < kBlock; ++i) {
      Words32 bits = host_randint4x(static_cast<uint64_t>(seed),
                                    static_cast<uint32_t>(offsets[i]), false);
      // The interpreter's log/sin/cos and the host's may differ in the last
      // bit; everything before them is bit-exact (see the rand test).
      auto [n1, n2] =
          host_box_muller(host_uniform(bits[0]), host_uniform(bits[1]));
      auto [n3, n4] =
          host_box_muller(host_uniform(bits[2]), host_uniform(bits[3]));
      EXPECT_NEAR(out[i], n1, 2e-5 + 1e-5 * std::abs(n1)) << "lane " << i;
      float want4[4] = {n1, n2, n3, n4};
      for (int w = 0; w < 4; ++w)
        EXPECT_NEAR(out4[i * 4 + w], want4[w], 2e-5 + 1e-5 * std::abs(want4[w]))
            << "lane " << i << ", word " << w;
    }
  }
}

TEST(Random, GridProgramsDrawDisjointStreams) {
  // The dropout pattern: each program uses pid * BLOCK + arange offsets; the
  // concatenated output is randint of 0 .. 4*BLOCK-1, odd tail masked.
  const int n = 4 * kBlock - 9;
  auto fn =
      trace({scalar(Scalar::I64), pointer(Scalar::U32), scalar(Scalar::I32)},
            [](const Args &a) {
              Tensor seed(a[0]), out(a[1]), n(a[2]);
              Tensor offs = bl::program_id(0) * kBlock + bl::arange(0, kBlock);
              bl::store(out + offs, bl::randint(seed, offs), offs < n);
            });
  std::vector<uint32_t> out(4 * kBlock, kPoison);
  blocc::interp::interpret(
      *fn, blocc::Grid(4),
      {KernelArg::of_int(2024), buffer(out), KernelArg::of_int(n)});
  for (int i = 0; i < 4 * kBlock; ++i)
    ASSERT_EQ(out[i],
              i < n ? host_randint4x(2024, static_cast<uint32_t>(i), false)[0]
                    : kPoison)
        << "element " << i;
}

// ------------------------------------------------------------ structure

TEST(Random, ResultTypesFollowTriton) {
  trace({scalar(Scalar::I32)}, [](const Args &a) {
    Tensor seed(a[0]);
    Tensor offs = bl::arange(0, 16);
    Tensor wide = bl::zeros({4, 8}, bl::int64);
    EXPECT_EQ(bl::randint(seed, offs).type().str(), "tensor<16xu32>");
    EXPECT_EQ(bl::randint(seed, wide).type().str(), "tensor<4x8xu32>");
    for (const Tensor &t : bl::randint4x(seed, wide))
      EXPECT_EQ(t.type().str(), "tensor<4x8xu32>");
    EXPECT_EQ(bl::rand(seed, offs).type().str(), "tensor<16xf32>");
    EXPECT_EQ(bl::randn(seed, wide).type().str(), "tensor<4x8xf32>");
    EXPECT_EQ(bl::randint(seed, 3).type().str(), "u32");
    EXPECT_EQ(bl::rand(7, seed).type().str(), "f32");
    for (const Tensor &t : bl::randn4x(seed, offs))
      EXPECT_EQ(t.type().str(), "tensor<16xf32>");
  });
}

TEST(Random, RoundsAreTraceTimeConstants) {
  for (int rounds : {1, 7, 10, 13}) {
    auto fn = trace({scalar(Scalar::I64)}, [&](const Args &a) {
      Tensor seed(a[0]);
      Tensor r = bl::randint(seed, bl::arange(0, 8), rounds);
      (void)r;
    });
    // Two multiply-high per round; no loop in the IR.
    EXPECT_EQ(count_ops(*fn, OpCode::Umulhi), 2 * rounds)
        << rounds << " rounds";
    EXPECT_EQ(count_ops(*fn, OpCode::For), 0);
  }
}

TEST(Random, EveryOpNamesTheCallersLine) {
  int line = 0;
  auto fn = trace({scalar(Scalar::I64)}, [&](const Args &a) {
    Tensor seed(a[0]);
    Tensor offs = bl::arange(0, 8);
    line = __LINE__ + 1;
    Tensor r = bl::randn(seed, offs);
    (void)r;
  });
  int checked = 0;
  fn->walk([&](blocc::ir::Operation &op) {
    if (op.code() == OpCode::Arange || op.code() == OpCode::Return)
      return;
    EXPECT_EQ(op.loc().file, "random_test.cpp") << op.describe();
    EXPECT_EQ(op.loc().line, line) << op.describe();
    ++checked;
  });
  EXPECT_GT(checked, 100);
}

// --------------------------------------------------------------- errors

TEST(RandomErrors, SeedMustBeAScalar) {
  std::string m = trace_error({}, [](const Args &) {
    bl::randint(bl::arange(0, 8), bl::arange(0, 8));
  });
  EXPECT_THAT(m, HasSubstr("random_test.cpp:"));
  EXPECT_THAT(
      m,
      HasSubstr("bl::randint: the seed must be a scalar, got tensor<8xi32>"));
  EXPECT_THAT(m, HasSubstr("vary the offsets per element"));
}

TEST(RandomErrors, SeedMustBeAnInteger) {
  std::string m =
      trace_error({}, [](const Args &) { bl::rand(1.5, bl::arange(0, 8)); });
  EXPECT_THAT(
      m,
      HasSubstr("bl::rand: the seed must be an integer, got float constant"));
  m = trace_error({scalar(Scalar::F32)}, [](const Args &a) {
    bl::randn(Tensor(a[0]), bl::arange(0, 8));
  });
  EXPECT_THAT(m, HasSubstr("bl::randn: the seed must be an integer, got f32"));
}

TEST(RandomErrors, OffsetsMustBeIntegers) {
  std::string m = trace_error({}, [](const Args &) {
    bl::randint(1, bl::cast(bl::arange(0, 8), bl::float32));
  });
  EXPECT_THAT(m, HasSubstr("random_test.cpp:"));
  EXPECT_THAT(
      m, HasSubstr(
             "bl::randint: the offsets must be integers, got tensor<8xf32>"));
  EXPECT_THAT(m, HasSubstr("bl::arange"));
  m = trace_error({},
                  [](const Args &) { bl::randint4x(1, bl::arange(0, 8) < 3); });
  EXPECT_THAT(
      m, HasSubstr(
             "bl::randint4x: the offsets must be integers, got tensor<8xi1>"));
  m = trace_error({pointer(Scalar::F32)}, [](const Args &a) {
    bl::rand(1, Tensor(a[0]) + bl::arange(0, 4));
  });
  EXPECT_THAT(
      m, HasSubstr(
             "bl::rand: the offsets must be integers, got tensor<4xptr<f32>>"));
}

TEST(RandomErrors, RoundsMustBePositive) {
  std::string m = trace_error(
      {}, [](const Args &) { bl::randint(1, bl::arange(0, 8), 0); });
  EXPECT_THAT(m, HasSubstr("random_test.cpp:"));
  EXPECT_THAT(m, HasSubstr("bl::randint: n_rounds must be at least 1, got 0"));
  m = trace_error({}, [](const Args &) { bl::philox(1, 0, 0, 0, 0, -3); });
  EXPECT_THAT(m, HasSubstr("bl::philox: n_rounds must be at least 1, got -3"));
}

TEST(RandomErrors, PhiloxCountersShareOneWidth) {
  std::string m = trace_error({}, [](const Args &) {
    bl::philox(1, bl::arange(0, 8), bl::cast(bl::arange(0, 8), bl::int64), 0,
               0);
  });
  EXPECT_THAT(m, HasSubstr("bl::philox: all four counters must have one width, "
                           "got tensor<8xi32> and tensor<8xi64>"));
  m = trace_error({}, [](const Args &) {
    bl::philox(1, bl::cast(bl::arange(0, 8), bl::int16), 0, 0, 0);
  });
  EXPECT_THAT(m,
              HasSubstr("bl::philox: counters must be 32- or 64-bit integers"));
}

TEST(RandomErrors, PhiloxCountersAreIntegers) {
  std::string m =
      trace_error({}, [](const Args &) { bl::philox(1, 0, 1.5, 0, 0); });
  EXPECT_THAT(m, HasSubstr("random_test.cpp:"));
  EXPECT_THAT(m, HasSubstr("bl::philox: the counters must be integers, got "
                           "float constant"));
}

TEST(RandomErrors, UniformFloatNeedsWideIntegers) {
  std::string m = trace_error({}, [](const Args &) {
    bl::uint_to_uniform_float(bl::cast(bl::arange(0, 8), bl::uint16));
  });
  EXPECT_THAT(m, HasSubstr("random_test.cpp:"));
  EXPECT_THAT(m, HasSubstr("bl::uint_to_uniform_float needs 32- or 64-bit "
                           "integers, got tensor<8xu16>"));
  m = trace_error({}, [](const Args &) {
    bl::uint_to_uniform_float(bl::cast(bl::arange(0, 8), bl::float32));
  });
  EXPECT_THAT(
      m,
      HasSubstr("bl::uint_to_uniform_float: its operand must be integer bits"));
}

TEST(RandomErrors, BoxMullerNeedsFloats) {
  std::string m = trace_error({}, [](const Args &) {
    bl::pair_uniform_to_normal(bl::arange(0, 8), bl::arange(0, 8));
  });
  EXPECT_THAT(m, HasSubstr("bl::pair_uniform_to_normal needs floating-point "
                           "operands"));
}

} // namespace
