// cast and bitcast in the reference interpreter: every narrow float format
// against independent decoders and a brute-force nearest-value encoder,
// exhaustively where the format is small; the integer/float conversion
// rules (truncation, saturation, rounding from the exact integer); int to
// int by the source's signedness.
#include "backends/interpreter/testing/map_kernel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace blocc::interp {
namespace {

using namespace testing;

MapBody cast_to(Scalar to) {
  return [to](KernelBuilder &k, const std::vector<Value *> &v) {
    return k.cast(v[0], to);
  };
}
MapBody bitcast_to(Scalar to) {
  return [to](KernelBuilder &k, const std::vector<Value *> &v) {
    return k.bitcast(v[0], to);
  };
}

template <typename To, typename From>
std::vector<To> cast(Scalar from, const std::vector<From> &values, Scalar to) {
  return typed<To>(run_map({{from, raw_of(values)}}, to, cast_to(to)));
}

std::vector<uint64_t> all_patterns(int bits) {
  std::vector<uint64_t> v(size_t{1} << bits);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = i;
  return v;
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

// ------------------------------------------------------------------ fp8

struct Fp8 {
  Scalar scalar;
  int exponent_bits, mantissa_bits;
  bool has_infinity;
};
const Fp8 kE4M3{Scalar::F8E4M3, 4, 3, false};
const Fp8 kE5M2{Scalar::F8E5M2, 5, 2, true};

/// The OCP OFP8 tables, written out from the spec's definitions.
double fp8_value(const Fp8 &f, unsigned bits) {
  bool negative = bits & 0x80;
  unsigned e = (bits >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
  unsigned m = bits & ((1u << f.mantissa_bits) - 1);
  unsigned top = (1u << f.exponent_bits) - 1;
  int bias = (1 << (f.exponent_bits - 1)) - 1;
  double v;
  if (f.has_infinity && e == top)
    v = m == 0 ? INFINITY : NAN;
  else if (!f.has_infinity && e == top && m == (1u << f.mantissa_bits) - 1)
    v = NAN;
  else if (e == 0)
    v = std::ldexp(m, 1 - bias - f.mantissa_bits);
  else
    v = std::ldexp((1u << f.mantissa_bits) + m,
                   int(e) - bias - f.mantissa_bits);
  return negative ? -v : v;
}

/// Nearest fp8 value by search: ties to the even encoding, saturation to
/// the largest finite value, NaN to NaN.
unsigned fp8_nearest(const Fp8 &f, double x) {
  if (std::isnan(x))
    return std::signbit(x) ? 0xff : 0x7f; // checked as "is NaN" below
  // Saturation: beyond the largest finite value (infinities included)
  // is the largest finite value.
  double max_finite = 0;
  for (unsigned bits = 0; bits < 128; ++bits)
    if (std::isfinite(fp8_value(f, bits)))
      max_finite = std::max(max_finite, fp8_value(f, bits));
  x = std::clamp(x, -max_finite, max_finite);
  unsigned best = 0;
  double best_distance = INFINITY;
  for (unsigned bits = 0; bits < 256; ++bits) {
    double v = fp8_value(f, bits);
    if (!std::isfinite(v) || std::signbit(v) != std::signbit(x))
      continue;
    double d = std::fabs(v - x);
    if (d < best_distance || (d == best_distance && (bits & 1) == 0)) {
      best = bits;
      best_distance = d;
    }
  }
  return best;
}

void check_fp8(const Fp8 &f) {
  // Decode all 256 encodings.
  std::vector<uint64_t> patterns = all_patterns(8);
  std::vector<double> decoded = typed<double>(
      run_map({{f.scalar, patterns}}, Scalar::F64, cast_to(Scalar::F64)));
  for (unsigned bits = 0; bits < 256; ++bits)
    ASSERT_TRUE(same(decoded[bits], fp8_value(f, bits)))
        << ir::scalar_name(f.scalar) << " 0x" << std::hex << bits;
  // Every encoding survives fp8 -> f32 -> fp8: NaN stays NaN, and
  // infinities (E5M2) saturate to the largest finite value.
  std::vector<uint64_t> back =
      run_map({{f.scalar, patterns}}, f.scalar,
              [&](KernelBuilder &k, const std::vector<Value *> &v) {
                return k.cast(k.cast(v[0], Scalar::F32), f.scalar);
              });
  for (unsigned bits = 0; bits < 256; ++bits) {
    double v = fp8_value(f, bits);
    if (std::isnan(v))
      ASSERT_TRUE(std::isnan(fp8_value(f, static_cast<unsigned>(back[bits]))));
    else if (std::isinf(v))
      ASSERT_EQ(back[bits], (bits & 0x80) | 0x7b);
    else
      ASSERT_EQ(back[bits], bits)
          << ir::scalar_name(f.scalar) << " 0x" << std::hex << bits;
  }
  // Encoding from f32: random values across the whole range, every
  // midpoint between neighbours (ties), and specials.
  std::vector<float> xs = {0.0f, -0.0f, INFINITY, -INFINITY,
                           NAN,  1e30f, -1e30f};
  for (unsigned bits = 0; bits < 255; ++bits) {
    double v = fp8_value(f, bits), next = fp8_value(f, bits + 1);
    if (std::isfinite(v) && std::isfinite(next) && (bits & 0x7f) != 0x7f) {
      xs.push_back(static_cast<float>((v + next) / 2)); // exact in f32
      xs.push_back(
          std::nextafter(static_cast<float>((v + next) / 2), INFINITY));
    }
  }
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> exponent(-24, 18);
  while (xs.size() < 2000) {
    float x = std::exp2(exponent(rng)) * (rng() & 1 ? -1.0f : 1.0f);
    xs.push_back(x);
  }
  std::vector<uint8_t> encoded = cast<uint8_t>(Scalar::F32, xs, f.scalar);
  for (size_t i = 0; i < xs.size(); ++i) {
    unsigned expected = fp8_nearest(f, xs[i]);
    if (std::isnan(xs[i]))
      ASSERT_TRUE(std::isnan(fp8_value(f, encoded[i])));
    else
      ASSERT_EQ(encoded[i], expected) << ir::scalar_name(f.scalar) << " of "
                                      << xs[i] << " (index " << i << ")";
  }
}

TEST(InterpreterCast, Fp8E4M3MatchesOcpTableExhaustively) { check_fp8(kE4M3); }
TEST(InterpreterCast, Fp8E5M2MatchesOcpTableExhaustively) { check_fp8(kE5M2); }

TEST(InterpreterCast, Fp8SaturatesAndKeepsNaN) {
  std::vector<float> xs{448,           464,     1e6f,         INFINITY,
                        -INFINITY,     NAN,     0.001953125f, 0.0009765625f,
                        0.0029296875f, 1.0625f, 1.1875f};
  EXPECT_EQ(cast<uint8_t>(Scalar::F32, xs, Scalar::F8E4M3),
            (std::vector<uint8_t>{0x7e, 0x7e, 0x7e, 0x7e, 0xfe, 0x7f, 0x01,
                                  0x00, 0x02, 0x38, 0x3a}));
  std::vector<float> ys{57344, 61440, 1e6f, INFINITY, -INFINITY, 1.125f};
  std::vector<uint8_t> e5 = cast<uint8_t>(Scalar::F32, ys, Scalar::F8E5M2);
  EXPECT_EQ(e5, (std::vector<uint8_t>{0x7b, 0x7b, 0x7b, 0x7b, 0xfb, 0x3c}));
  std::vector<float> nan{NAN};
  uint8_t n5 = cast<uint8_t>(Scalar::F32, nan, Scalar::F8E5M2)[0];
  EXPECT_EQ(n5 & 0x7c, 0x7c);
  EXPECT_NE(n5 & 0x03, 0);
}

// ----------------------------------------------------------- f16, bf16

TEST(InterpreterCast, F16RoundingCases) {
  // Expected encodings worked out by hand.
  std::vector<float> xs{1.0f + 0x1p-11f,            // tie: to even, 1.0
                        1.0f + 3 * 0x1p-11f,        // tie: to even, up
                        1.0f + 0x1p-11f + 0x1p-20f, // above the tie
                        65504.0f,
                        65519.0f,
                        65520.0f,
                        -65520.0f,
                        1e-8f,
                        0x1p-24f,
                        0x1p-25f,            // tie with 0: to 0
                        0x1p-25f + 0x1p-35f, // above: smallest subnormal
                        3 * 0x1p-25f,        // tie: to 2^-23
                        -0.0f,
                        INFINITY};
  std::vector<uint16_t> expected{0x3c00, 0x3c02, 0x3c01, 0x7bff, 0x7bff,
                                 0x7c00, 0xfc00, 0x0000, 0x0001, 0x0000,
                                 0x0001, 0x0002, 0x8000, 0x7c00};
  EXPECT_EQ(cast<uint16_t>(Scalar::F32, xs, Scalar::F16), expected);
  // From f64 the rounding is direct: 1 + 2^-11 + 2^-40 is above the tie,
  // though it becomes the tie itself when rounded to f32 first.
  std::vector<double> ds{1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-8 + 0x1p-40};
  EXPECT_EQ(cast<uint16_t>(Scalar::F64, ds, Scalar::F16)[0], 0x3c01);
  EXPECT_EQ(cast<uint16_t>(Scalar::F64, ds, Scalar::BF16)[1], 0x3f81);
}

#ifdef __FLT16_MAX__
TEST(InterpreterCast, F16AgreesWithCompilerHalf) {
  std::vector<uint64_t> patterns = all_patterns(16);
  std::vector<float> decoded = typed<float>(
      run_map({{Scalar::F16, patterns}}, Scalar::F32, cast_to(Scalar::F32)));
  for (uint32_t bits = 0; bits < 65536; ++bits)
    ASSERT_TRUE(same(decoded[bits], static_cast<float>(std::bit_cast<_Float16>(
                                        static_cast<uint16_t>(bits)))))
        << std::hex << bits;
  // Random f32 bit patterns (all exponents, NaNs included) to f16.
  std::mt19937 rng(5);
  std::vector<float> xs(20000);
  for (float &x : xs)
    x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
  std::vector<uint16_t> got = cast<uint16_t>(Scalar::F32, xs, Scalar::F16);
  for (size_t i = 0; i < xs.size(); ++i) {
    uint16_t expected = std::bit_cast<uint16_t>(static_cast<_Float16>(xs[i]));
    if (std::isnan(xs[i]))
      ASSERT_TRUE((got[i] & 0x7c00) == 0x7c00 && (got[i] & 0x3ff) != 0);
    else
      ASSERT_EQ(got[i], expected) << xs[i];
  }
  // Narrow values between -70000 and 70000, where the rounding happens.
  std::uniform_real_distribution<float> dist(-70000, 70000);
  for (float &x : xs)
    x = dist(rng) *
        std::exp2(static_cast<float>(static_cast<int>(rng() % 40)) - 30);
  got = cast<uint16_t>(Scalar::F32, xs, Scalar::F16);
  for (size_t i = 0; i < xs.size(); ++i)
    ASSERT_EQ(got[i], std::bit_cast<uint16_t>(static_cast<_Float16>(xs[i])))
        << xs[i];
}
#endif

TEST(InterpreterCast, BF16AgreesWithBitTrick) {
  std::vector<uint64_t> patterns = all_patterns(16);
  std::vector<float> decoded = typed<float>(
      run_map({{Scalar::BF16, patterns}}, Scalar::F32, cast_to(Scalar::F32)));
  for (uint32_t bits = 0; bits < 65536; ++bits)
    ASSERT_TRUE(same(decoded[bits], std::bit_cast<float>(bits << 16)))
        << std::hex << bits;
  std::mt19937 rng(6);
  std::vector<float> xs(20000);
  for (float &x : xs)
    x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
  xs[0] = std::numeric_limits<float>::max(); // rounds up to infinity
  xs[1] = 1.0f + 0x1p-8f;                    // tie to even: 1
  xs[2] = 1.0f + 3 * 0x1p-8f;                // tie to even: up
  std::vector<uint16_t> got = cast<uint16_t>(Scalar::F32, xs, Scalar::BF16);
  for (size_t i = 0; i < xs.size(); ++i) {
    uint32_t bits = std::bit_cast<uint32_t>(xs[i]);
    if (std::isnan(xs[i])) {
      ASSERT_TRUE((got[i] & 0x7f80) == 0x7f80 && (got[i] & 0x7f) != 0);
      continue;
    }
    uint16_t expected =
        static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
    ASSERT_EQ(got[i], expected) << xs[i];
  }
  EXPECT_EQ(got[0], 0x7f80);
  EXPECT_EQ(got[1], 0x3f80);
  EXPECT_EQ(got[2], 0x3f82);
}

// -------------------------------------------------------- int <-> float

TEST(InterpreterCast, FloatToIntTruncatesSaturatesAndZeroesNaN) {
  std::vector<float> xs{2.7f,     -2.7f,     300,    -300,    NAN,
                        INFINITY, -INFINITY, 127.9f, -128.9f, 1e10f};
  EXPECT_EQ(
      cast<int8_t>(Scalar::F32, xs, Scalar::I8),
      (std::vector<int8_t>{2, -2, 127, -128, 0, 127, -128, 127, -128, 127}));
  EXPECT_EQ(cast<uint8_t>(Scalar::F32, xs, Scalar::U8),
            (std::vector<uint8_t>{2, 0, 255, 0, 0, 255, 0, 127, 0, 255}));
  const int32_t max32 = std::numeric_limits<int32_t>::max(),
                min32 = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(cast<int32_t>(Scalar::F32, xs, Scalar::I32),
            (std::vector<int32_t>{2, -2, 300, -300, 0, max32, min32, 127, -128,
                                  max32}));
  std::vector<double> ds{9.3e18,  -9.3e18,       0x1p63,
                         -0x1p63, 0x1p62 + 1024, -0.99};
  const int64_t max64 = std::numeric_limits<int64_t>::max(),
                min64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(cast<int64_t>(Scalar::F64, ds, Scalar::I64),
            (std::vector<int64_t>{max64, min64, max64, min64,
                                  (int64_t{1} << 62) + 1024, 0}));
  EXPECT_EQ(cast<uint64_t>(Scalar::F64, ds, Scalar::U64),
            (std::vector<uint64_t>{9300000000000000000ull, 0, uint64_t{1} << 63,
                                   0, (uint64_t{1} << 62) + 1024, 0}));
  std::vector<float> bools{0.0f, -0.0f, 0.5f, NAN, -3};
  EXPECT_EQ(cast<uint8_t>(Scalar::F32, bools, Scalar::I1),
            (std::vector<uint8_t>{0, 0, 1, 1, 1}));
}

TEST(InterpreterCast, IntToFloatRoundsOnceFromTheExactInteger) {
  std::vector<int32_t> is{16777217, 16777219, -16777217, 7};
  EXPECT_EQ(cast<float>(Scalar::I32, is, Scalar::F32),
            (std::vector<float>{16777216.0f, 16777220.0f, -16777216.0f, 7.0f}));
  std::vector<int64_t> ls{std::numeric_limits<int64_t>::max(),
                          std::numeric_limits<int64_t>::min(),
                          (int64_t{1} << 62) + (int64_t{1} << 54) + 1,
                          70000,
                          -70000,
                          2049};
  std::vector<float> f = cast<float>(Scalar::I64, ls, Scalar::F32);
  EXPECT_EQ(f[0], 0x1p63f);
  EXPECT_EQ(f[1], -0x1p63f);
  // bf16: 2^62 + 2^54 + 1 lies just above a tie; through double it would
  // be the tie itself and round to even (down).
  std::vector<uint16_t> b = cast<uint16_t>(Scalar::I64, ls, Scalar::BF16);
  EXPECT_EQ(std::bit_cast<float>(uint32_t{b[2]} << 16), 0x1p62f + 0x1p55f);
  std::vector<uint16_t> h = cast<uint16_t>(Scalar::I64, ls, Scalar::F16);
  EXPECT_EQ(h[3], 0x7c00); // 70000 overflows f16
  EXPECT_EQ(h[4], 0xfc00);
  EXPECT_EQ(h[5], 0x6800); // 2049 ties to even: 2048
  std::vector<uint64_t> us{~uint64_t{0}, uint64_t{1} << 63};
  std::vector<double> ud = cast<double>(Scalar::U64, us, Scalar::F64);
  EXPECT_EQ(ud[0], 0x1p64);
  EXPECT_EQ(ud[1], 0x1p63);
  std::vector<uint8_t> u8{200, 255};
  EXPECT_EQ(cast<uint16_t>(Scalar::U8, u8, Scalar::F16),
            (std::vector<uint16_t>{0x5a40, 0x5bf8}));
  std::vector<uint8_t> bools{0, 1};
  EXPECT_EQ(cast<float>(Scalar::I1, bools, Scalar::F32),
            (std::vector<float>{0.0f, 1.0f}));
}

TEST(InterpreterCast, IntToIntBySourceSignedness) {
  std::vector<int8_t> minus_one{-1, -128, 5};
  EXPECT_EQ(cast<uint32_t>(Scalar::I8, minus_one, Scalar::U32),
            (std::vector<uint32_t>{0xffffffffu, 0xffffff80u, 5}));
  EXPECT_EQ(cast<int64_t>(Scalar::I8, minus_one, Scalar::I64),
            (std::vector<int64_t>{-1, -128, 5}));
  std::vector<uint8_t> u{255, 128};
  EXPECT_EQ(cast<int32_t>(Scalar::U8, u, Scalar::I32),
            (std::vector<int32_t>{255, 128}));
  EXPECT_EQ(cast<int8_t>(Scalar::U8, u, Scalar::I8),
            (std::vector<int8_t>{-1, -128}));
  std::vector<int32_t> wide{0x12345, 0x1ff80, 2, 0};
  EXPECT_EQ(cast<int8_t>(Scalar::I32, wide, Scalar::I8),
            (std::vector<int8_t>{0x45, -128, 2, 0}));
  // To i1 is "nonzero", not truncation to the low bit.
  EXPECT_EQ(cast<uint8_t>(Scalar::I32, wide, Scalar::I1),
            (std::vector<uint8_t>{1, 1, 1, 0}));
  std::vector<uint8_t> bools{1, 0};
  EXPECT_EQ(cast<int32_t>(Scalar::I1, bools, Scalar::I32),
            (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(cast<int8_t>(Scalar::I1, bools, Scalar::I8),
            (std::vector<int8_t>{1, 0}));
}

TEST(InterpreterCast, FloatToFloatWidensExactlyAndNarrowsRounded) {
  std::vector<double> ds{0.1, 1e300, -1e-300, NAN};
  std::vector<float> f = cast<float>(Scalar::F64, ds, Scalar::F32);
  EXPECT_EQ(f[0], 0.1f);
  EXPECT_EQ(f[1], INFINITY);
  EXPECT_TRUE(f[2] == 0.0f && std::signbit(f[2]));
  EXPECT_TRUE(std::isnan(f[3]));
  std::vector<uint16_t> halves{0x3555, 0x0001, 0xfbff};
  std::vector<double> wide = cast<double>(Scalar::F16, halves, Scalar::F64);
  EXPECT_EQ(wide[0], 0x1.554p-2);
  EXPECT_EQ(wide[1], 0x1p-24);
  EXPECT_EQ(wide[2], -65504.0);
  // f16 -> bf16 rounds (bf16 has fewer mantissa bits) and keeps the range.
  EXPECT_EQ(cast<uint16_t>(Scalar::F16, halves, Scalar::BF16),
            (std::vector<uint16_t>{0x3eab, 0x3380, 0xc780}));
}

TEST(InterpreterCast, BitcastKeepsBitsIncludingNaNPayloads) {
  std::vector<uint32_t> patterns{0x7fa00001u, 0xffffffffu, 0x3f800000u,
                                 0x80000000u};
  std::vector<uint64_t> raw(patterns.begin(), patterns.end());
  std::vector<uint64_t> through = run_map(
      {{Scalar::U32, raw}}, Scalar::U32,
      [](KernelBuilder &k, const std::vector<Value *> &v) {
        return k.bitcast(k.bitcast(k.bitcast(v[0], Scalar::F32), Scalar::I32),
                         Scalar::U32);
      });
  EXPECT_EQ(through, raw);
  std::vector<int32_t> as_int = typed<int32_t>(
      run_map({{Scalar::F32, raw}}, Scalar::I32, bitcast_to(Scalar::I32)));
  EXPECT_EQ(as_int[1], -1);
  EXPECT_EQ(as_int[2], 0x3f800000);
  std::vector<uint64_t> h{0xbc00};
  EXPECT_EQ(typed<int16_t>(run_map({{Scalar::F16, h}}, Scalar::I16,
                                   bitcast_to(Scalar::I16)))[0],
            static_cast<int16_t>(0xbc00));
  std::vector<double> one{1.5};
  EXPECT_EQ(typed<uint64_t>(run_map({{Scalar::F64, raw_of(one)}}, Scalar::U64,
                                    bitcast_to(Scalar::U64)))[0],
            std::bit_cast<uint64_t>(1.5));
}

} // namespace
} // namespace blocc::interp
