// Elementwise arithmetic of the reference interpreter at every element
// type, against host references computed independently: integers in C++
// with explicit wrap-around, f32/f64 arithmetic in their own precision and
// their math functions against long double results within ulp bounds (0
// for the exact ones, half an ulp for sqrt, glibc's bounds for the
// transcendental ones), f16 with the compiler's _Float16 conversions (where
// it has them), bf16 with the classic float bit trick. Inputs are random
// (fixed seeds) plus edge values; outputs are poisoned before each run.
#include "backends/interpreter/testing/map_kernel.h"
#include "ir/error.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <type_traits>

namespace blocc::interp {
namespace {

using namespace testing;

std::string op_name(OpCode op) { return std::string(ir::opcode_name(op)); }

MapBody binary_body(OpCode op) {
  return [op](KernelBuilder &k, const std::vector<Value *> &v) {
    return k.binary(op, v[0], v[1]);
  };
}
MapBody unary_body(OpCode op) {
  return [op](KernelBuilder &k, const std::vector<Value *> &v) {
    return k.unary(op, v[0]);
  };
}

// ------------------------------------------------------------- integers

template <typename T> T reference_integer(OpCode op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  constexpr int width = sizeof(T) * 8;
  // Wrap-around through uint64_t: no promotion to int can overflow.
  auto wrap = [](uint64_t v) { return static_cast<T>(static_cast<U>(v)); };
  const uint64_t ua = static_cast<U>(a), ub = static_cast<U>(b);
  switch (op) {
  case OpCode::Add:
    return wrap(ua + ub);
  case OpCode::Sub:
    return wrap(ua - ub);
  case OpCode::Mul:
    return wrap(ua * ub);
  case OpCode::Div:
    if (std::is_signed_v<T> && a == std::numeric_limits<T>::min() && b == T(-1))
      return a;
    return static_cast<T>(a / b);
  case OpCode::Rem:
    if (std::is_signed_v<T> && a == std::numeric_limits<T>::min() && b == T(-1))
      return 0;
    return static_cast<T>(a % b);
  case OpCode::And:
    return static_cast<T>(a & b);
  case OpCode::Or:
    return static_cast<T>(a | b);
  case OpCode::Xor:
    return static_cast<T>(a ^ b);
  case OpCode::Shl:
    return ub >= width ? T(0) : wrap(ua << ub);
  case OpCode::Shr:
    if (ub >= width)
      return a < T(0) ? T(-1) : T(0);
    return static_cast<T>(a >> ub); // arithmetic for signed in C++20
  case OpCode::Minimum:
    return std::min(a, b);
  case OpCode::Maximum:
    return std::max(a, b);
  case OpCode::Umulhi:
    return wrap(static_cast<uint64_t>(
        (static_cast<unsigned __int128>(ua) * ub) >> width));
  default:
    ADD_FAILURE() << "no reference for " << op_name(op);
    return 0;
  }
}

template <typename T> void check_integer_type(Scalar s) {
  std::mt19937_64 rng(42 + sizeof(T) * 2 + std::is_signed_v<T>);
  const T edges[] = {std::numeric_limits<T>::min(),
                     std::numeric_limits<T>::max(),
                     T(0),
                     T(1),
                     T(-1),
                     T(std::numeric_limits<T>::min() + 1),
                     T(std::numeric_limits<T>::max() - 1),
                     T(7)};
  std::vector<T> a, b;
  for (T x : edges)
    for (T y : edges) {
      a.push_back(x);
      b.push_back(y);
    }
  while (a.size() < 300) {
    a.push_back(static_cast<T>(rng()));
    // Small divisors and operands make the interesting cases likely.
    b.push_back(rng() % 3 == 0 ? static_cast<T>(rng() % 17) - T(8)
                               : static_cast<T>(rng()));
  }
  const int width = sizeof(T) * 8;
  for (OpCode op :
       {OpCode::Add, OpCode::Sub, OpCode::Mul, OpCode::Div, OpCode::Rem,
        OpCode::And, OpCode::Or, OpCode::Xor, OpCode::Shl, OpCode::Shr,
        OpCode::Minimum, OpCode::Maximum, OpCode::Umulhi}) {
    std::vector<T> rhs = b;
    for (size_t i = 0; i < rhs.size(); ++i) {
      if ((op == OpCode::Div || op == OpCode::Rem) && rhs[i] == 0)
        rhs[i] = 1;
      // Mostly amounts around the width, some far beyond or negative.
      if ((op == OpCode::Shl || op == OpCode::Shr) && i % 4 != 0)
        rhs[i] = static_cast<T>(rng() % (width + 4));
    }
    std::vector<T> got = typed<T>(
        run_map({{s, raw_of(a)}, {s, raw_of(rhs)}}, s, binary_body(op)));
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(got[i], reference_integer(op, a[i], rhs[i]))
          << op_name(op) << " " << ir::scalar_name(s) << " of " << +a[i] << ", "
          << +rhs[i];
  }
  for (OpCode op : {OpCode::Neg, OpCode::Not, OpCode::Abs}) {
    std::vector<T> got = typed<T>(run_map({{s, raw_of(a)}}, s, unary_body(op)));
    for (size_t i = 0; i < a.size(); ++i) {
      using U = std::make_unsigned_t<T>;
      T expected = op == OpCode::Not ? static_cast<T>(~a[i])
                   : op == OpCode::Neg || (std::is_signed_v<T> && a[i] < 0)
                       ? static_cast<T>(static_cast<U>(
                             0 - static_cast<uint64_t>(static_cast<U>(a[i]))))
                       : a[i];
      ASSERT_EQ(got[i], expected) << op_name(op) << " of " << +a[i];
    }
  }
}

TEST(InterpreterArith, I8) { check_integer_type<int8_t>(Scalar::I8); }
TEST(InterpreterArith, I16) { check_integer_type<int16_t>(Scalar::I16); }
TEST(InterpreterArith, I32) { check_integer_type<int32_t>(Scalar::I32); }
TEST(InterpreterArith, I64) { check_integer_type<int64_t>(Scalar::I64); }
TEST(InterpreterArith, U8) { check_integer_type<uint8_t>(Scalar::U8); }
TEST(InterpreterArith, U16) { check_integer_type<uint16_t>(Scalar::U16); }
TEST(InterpreterArith, U32) { check_integer_type<uint32_t>(Scalar::U32); }
TEST(InterpreterArith, U64) { check_integer_type<uint64_t>(Scalar::U64); }

TEST(InterpreterArith, BoolsAreOneBitUnsigned) {
  std::vector<uint8_t> a{0, 0, 1, 1}, b{0, 1, 0, 1};
  auto run = [&](OpCode op) {
    return typed<uint8_t>(
        run_map({{Scalar::I1, raw_of(a)}, {Scalar::I1, raw_of(b)}}, Scalar::I1,
                binary_body(op)));
  };
  EXPECT_EQ(run(OpCode::And), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(run(OpCode::Or), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(run(OpCode::Xor), (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(run(OpCode::Add), (std::vector<uint8_t>{0, 1, 1, 0})); // mod 2
  EXPECT_EQ(run(OpCode::Maximum), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(typed<uint8_t>(run_map({{Scalar::I1, raw_of(a)}}, Scalar::I1,
                                   unary_body(OpCode::Not))),
            (std::vector<uint8_t>{1, 1, 0, 0}));
}

TEST(InterpreterArith, ComparisonsBySignednessAndOrderedFloats) {
  std::vector<int32_t> a{-1, 1, 5, std::numeric_limits<int32_t>::min()};
  std::vector<int32_t> b{1, -1, 5, 0};
  auto compare = [](Scalar s, const std::vector<uint64_t> &x,
                    const std::vector<uint64_t> &y, const std::string &p) {
    return typed<uint8_t>(
        run_map({{s, x}, {s, y}}, Scalar::I1,
                [p](KernelBuilder &k, const std::vector<Value *> &v) {
                  return k.cmp(p, v[0], v[1]);
                }));
  };
  EXPECT_EQ(compare(Scalar::I32, raw_of(a), raw_of(b), "lt"),
            (std::vector<uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ(
      compare(Scalar::U32, raw_of(a), raw_of(b), "lt"), // same bits, unsigned
      (std::vector<uint8_t>{0, 1, 0, 0}));
  EXPECT_EQ(compare(Scalar::I32, raw_of(a), raw_of(b), "ge"),
            (std::vector<uint8_t>{0, 1, 1, 0}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{nan, 1, nan, -0.0f, 2};
  std::vector<float> y{1, nan, nan, 0.0f, 1};
  auto f = [&](const std::string &p) {
    return compare(Scalar::F32, raw_of(x), raw_of(y), p);
  };
  EXPECT_EQ(f("eq"), (std::vector<uint8_t>{0, 0, 0, 1, 0}));
  EXPECT_EQ(f("ne"), (std::vector<uint8_t>{1, 1, 1, 0, 1})); // unordered
  EXPECT_EQ(f("lt"), (std::vector<uint8_t>{0, 0, 0, 0, 0}));
  EXPECT_EQ(f("le"), (std::vector<uint8_t>{0, 0, 0, 1, 0}));
  EXPECT_EQ(f("gt"), (std::vector<uint8_t>{0, 0, 0, 0, 1}));
  EXPECT_EQ(f("ge"), (std::vector<uint8_t>{0, 0, 0, 1, 1}));
}

// ---------------------------------------------------------------- floats

template <typename F> bool same_float(F a, F b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::bit_cast<std::make_unsigned_t<
             std::conditional_t<sizeof(F) == 4, int32_t, int64_t>>>(a) ==
             std::bit_cast<std::make_unsigned_t<
                 std::conditional_t<sizeof(F) == 4, int32_t, int64_t>>>(b);
}

/// fmin/fmax with -0 ordered below +0, as the IR defines minimum/maximum.
template <typename F> F reference_min_max(bool max, F a, F b) {
  if (a == 0 && b == 0)
    return (std::signbit(a) != max) ? a : b;
  return max ? std::fmax(a, b) : std::fmin(a, b);
}

template <typename F> F reference_float(OpCode op, F a, F b) {
  switch (op) {
  case OpCode::Add:
    return a + b;
  case OpCode::Sub:
    return a - b;
  case OpCode::Mul:
    return a * b;
  case OpCode::Div:
    return a / b;
  case OpCode::Rem:
    return std::fmod(a, b);
  case OpCode::Minimum:
    return reference_min_max(false, a, b);
  case OpCode::Maximum:
    return reference_min_max(true, a, b);
  default:
    ADD_FAILURE() << "no reference for " << op_name(op);
    return 0;
  }
}

/// The exact result of `op` at `x`, from long double (64 significant
/// bits, 11 more than double's): a reference independent of the float and
/// double calls the interpreter makes.
long double reference_math(OpCode op, long double x) {
  switch (op) {
  case OpCode::Neg:
    return -x;
  case OpCode::Abs:
    return std::fabs(x);
  case OpCode::Exp:
    return std::exp(x);
  case OpCode::Exp2:
    return std::exp2(x);
  case OpCode::Log:
    return std::log(x);
  case OpCode::Log2:
    return std::log2(x);
  case OpCode::Sqrt:
    return std::sqrt(x);
  case OpCode::Rsqrt:
    return 1.0L / std::sqrt(x);
  case OpCode::Sin:
    return std::sin(x);
  case OpCode::Cos:
    return std::cos(x);
  case OpCode::Tanh:
    return std::tanh(x);
  case OpCode::Erf:
    return std::erf(x);
  case OpCode::Floor:
    return std::floor(x);
  case OpCode::Ceil:
    return std::ceil(x);
  default:
    ADD_FAILURE() << "no reference for " << op_name(op);
    return 0;
  }
}

/// The most units in the last place `op` may be off in the interpreter:
/// exact where IEEE 754 or the op's definition rounds once (sqrt to
/// nearest: half an ulp), within glibc's documented bounds for the
/// transcendental functions, and two roundings for rsqrt.
double ulp_bound(OpCode op) {
  switch (op) {
  case OpCode::Neg:
  case OpCode::Abs:
  case OpCode::Floor:
  case OpCode::Ceil:
    return 0;
  case OpCode::Sqrt:
    return 0.5;
  case OpCode::Exp:
  case OpCode::Exp2:
  case OpCode::Log:
  case OpCode::Log2:
    return 1;
  default:
    return 2; // rsqrt, sin, cos, tanh, erf
  }
}

/// How far `got` is from `want` in units in the last place of F at `want`;
/// 0 or infinity where `want` is NaN, infinite or zero, which `got` must
/// be exactly (the sign of a zero included).
template <typename F> double ulps_off(F got, long double want) {
  const F rounded = static_cast<F>(want);
  if (std::isnan(want))
    return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(rounded) || want == 0)
    return same_float(got, rounded) ? 0 : INFINITY;
  const F magnitude = std::fabs(rounded);
  const long double ulp = static_cast<long double>(std::nextafter(
                              magnitude, std::numeric_limits<F>::infinity())) -
                          magnitude;
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) /
                             ulp);
}

const OpCode kFloatBinary[] = {OpCode::Add,    OpCode::Sub, OpCode::Mul,
                               OpCode::Div,    OpCode::Rem, OpCode::Minimum,
                               OpCode::Maximum};
const OpCode kFloatUnary[] = {
    OpCode::Neg,  OpCode::Abs,  OpCode::Exp,   OpCode::Exp2, OpCode::Log,
    OpCode::Log2, OpCode::Sqrt, OpCode::Rsqrt, OpCode::Sin,  OpCode::Cos,
    OpCode::Tanh, OpCode::Erf,  OpCode::Floor, OpCode::Ceil};

/// Random operands with NaNs, infinities and signed zeros mixed in.
template <typename F>
void float_inputs(std::vector<F> &a, std::vector<F> &b, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<F> dist(-8, 8);
  const F nan = std::numeric_limits<F>::quiet_NaN(),
          inf = std::numeric_limits<F>::infinity();
  a = {nan, F(1), nan, F(-0.0), F(0.0), inf, -inf, F(3)};
  b = {F(1), nan, nan, F(0.0), F(-0.0), F(2), inf, F(0)};
  while (a.size() < 256) {
    a.push_back(dist(rng));
    b.push_back(dist(rng));
  }
}

template <typename F> void check_float_type(Scalar s) {
  std::vector<F> a, b;
  float_inputs(a, b, 7 + sizeof(F));
  for (OpCode op : kFloatBinary) {
    std::vector<F> got =
        typed<F>(run_map({{s, raw_of(a)}, {s, raw_of(b)}}, s, binary_body(op)));
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_TRUE(same_float(got[i], reference_float(op, a[i], b[i])))
          << op_name(op) << "(" << a[i] << ", " << b[i] << ") = " << got[i];
  }
  for (OpCode op : kFloatUnary) {
    std::vector<F> got = typed<F>(run_map({{s, raw_of(a)}}, s, unary_body(op)));
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_LE(ulps_off(got[i], reference_math(op, a[i])), ulp_bound(op))
          << op_name(op) << "(" << a[i] << ") = " << got[i];
  }
  std::vector<F> c(a.rbegin(), a.rend());
  std::vector<F> got =
      typed<F>(run_map({{s, raw_of(a)}, {s, raw_of(b)}, {s, raw_of(c)}}, s,
                       [](KernelBuilder &k, const std::vector<Value *> &v) {
                         return k.fma(v[0], v[1], v[2]);
                       }));
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_TRUE(same_float(got[i], std::fma(a[i], b[i], c[i])))
        << "fma at " << i;
}

TEST(InterpreterArith, F32) { check_float_type<float>(Scalar::F32); }
TEST(InterpreterArith, F64) { check_float_type<double>(Scalar::F64); }

// -------------------------------------------------------- f16 and bf16

float bf16_to_float(uint16_t bits) {
  return std::bit_cast<float>(uint32_t{bits} << 16);
}

/// float -> bf16, round to nearest even, by the usual bias trick (an
/// algorithm unlike the interpreter's, on purpose).
uint16_t float_to_bf16(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

bool same_narrow(uint16_t a, uint16_t b, bool bf16) {
  auto is_nan = [&](uint16_t v) {
    return bf16 ? (v & 0x7f80) == 0x7f80 && (v & 0x7f)
                : (v & 0x7c00) == 0x7c00 && (v & 0x3ff);
  };
  return a == b || (is_nan(a) && is_nan(b));
}

std::vector<uint16_t> random_narrow(bool bf16, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-6, 6);
  std::vector<uint16_t> v;
  // Specials first: NaN, +-inf, +-0, max finite, smallest subnormal.
  if (bf16)
    v = {0x7fc0, 0x7f80, 0xff80, 0x0000, 0x8000, 0x7f7f, 0x0001, 0x3f80};
  else
    v = {0x7e00, 0x7c00, 0xfc00, 0x0000, 0x8000, 0x7bff, 0x0001, 0x3c00};
  while (v.size() < 512) {
    float f = dist(rng);
    v.push_back(bf16 ? float_to_bf16(f) : [&] {
#ifdef __FLT16_MAX__
      return std::bit_cast<uint16_t>(static_cast<_Float16>(f));
#else
      return static_cast<uint16_t>(rng() & 0x7bff);
#endif
    }());
  }
  return v;
}

TEST(InterpreterArith, BF16MatchesDoubleRoundedOnce) {
  std::vector<uint16_t> a = random_narrow(true, 1), b = random_narrow(true, 2);
  std::reverse(b.begin(), b.end());
  for (OpCode op : kFloatBinary) {
    std::vector<uint16_t> got = typed<uint16_t>(
        run_map({{Scalar::BF16, raw_of(a)}, {Scalar::BF16, raw_of(b)}},
                Scalar::BF16, binary_body(op)));
    for (size_t i = 0; i < a.size(); ++i) {
      // Exact operation in double, then double -> float -> bf16: both
      // roundings are innocuous for + - * / (53 >= 2*24+2, 24 >= 2*8+2).
      double exact =
          reference_float<double>(op, bf16_to_float(a[i]), bf16_to_float(b[i]));
      uint16_t expected = float_to_bf16(static_cast<float>(exact));
      ASSERT_TRUE(same_narrow(got[i], expected, true))
          << op_name(op) << " bf16 0x" << std::hex << a[i] << ", 0x" << b[i]
          << " -> 0x" << got[i] << " expected 0x" << expected;
    }
  }
  std::vector<uint16_t> got = typed<uint16_t>(run_map(
      {{Scalar::BF16, raw_of(a)}}, Scalar::BF16, unary_body(OpCode::Sqrt)));
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_TRUE(same_narrow(got[i],
                            float_to_bf16(static_cast<float>(
                                std::sqrt(double(bf16_to_float(a[i]))))),
                            true));
}

#ifdef __FLT16_MAX__
_Float16 half_of(uint16_t bits) { return std::bit_cast<_Float16>(bits); }
uint16_t bits_of(_Float16 h) { return std::bit_cast<uint16_t>(h); }

/// ulps_off for a half given by its bits.
double half_ulps_off(uint16_t got, long double want) {
  const _Float16 rounded = static_cast<_Float16>(want);
  const _Float16 value = half_of(got);
  if (std::isnan(want))
    return std::isnan(static_cast<float>(value)) ? 0 : INFINITY;
  if (std::isinf(static_cast<float>(rounded)) || want == 0)
    return got == bits_of(rounded) ? 0 : INFINITY;
  const uint16_t magnitude = bits_of(rounded) & 0x7fff;
  const long double ulp =
      static_cast<long double>(half_of(static_cast<uint16_t>(magnitude + 1))) -
      static_cast<long double>(half_of(magnitude));
  return static_cast<double>(std::fabs(static_cast<long double>(value) - want) /
                             ulp);
}

TEST(InterpreterArith, F16MatchesCompilerHalfRoundedOnce) {
  std::vector<uint16_t> a = random_narrow(false, 3),
                        b = random_narrow(false, 4);
  std::reverse(b.begin(), b.end());
  for (OpCode op : kFloatBinary) {
    std::vector<uint16_t> got = typed<uint16_t>(
        run_map({{Scalar::F16, raw_of(a)}, {Scalar::F16, raw_of(b)}},
                Scalar::F16, binary_body(op)));
    for (size_t i = 0; i < a.size(); ++i) {
      double exact =
          reference_float<double>(op, static_cast<double>(half_of(a[i])),
                                  static_cast<double>(half_of(b[i])));
      uint16_t expected = bits_of(static_cast<_Float16>(exact));
      ASSERT_TRUE(same_narrow(got[i], expected, false))
          << op_name(op) << " f16 0x" << std::hex << a[i] << ", 0x" << b[i]
          << " -> 0x" << got[i] << " expected 0x" << expected;
    }
  }
  for (OpCode op : kFloatUnary) {
    std::vector<uint16_t> got = typed<uint16_t>(
        run_map({{Scalar::F16, raw_of(a)}}, Scalar::F16, unary_body(op)));
    for (size_t i = 0; i < a.size(); ++i) {
      // Computed in float, rounded to half (the documented precision): the
      // exact result rounded to half, but where it lies within float's
      // error of a tie between two halves.
      const long double exact =
          reference_math(op, static_cast<long double>(half_of(a[i])));
      ASSERT_LE(half_ulps_off(got[i], exact),
                op == OpCode::Neg || op == OpCode::Abs || op == OpCode::Floor ||
                        op == OpCode::Ceil
                    ? 0.0
                    : 0.5 + 0x1p-9)
          << op_name(op) << " f16 0x" << std::hex << a[i] << " -> 0x" << got[i];
    }
  }
  // fma, rounded once: with these small operands the exact result fits a
  // long double, so rounding it to half is the correctly rounded fma.
  std::vector<uint16_t> c = random_narrow(false, 5);
  std::vector<uint16_t> got = typed<uint16_t>(
      run_map({{Scalar::F16, raw_of(a)},
               {Scalar::F16, raw_of(b)},
               {Scalar::F16, raw_of(c)}},
              Scalar::F16, [](KernelBuilder &k, const std::vector<Value *> &v) {
                return k.fma(v[0], v[1], v[2]);
              }));
  for (size_t i = 0; i < a.size(); ++i) {
    long double exact = static_cast<long double>(half_of(a[i])) *
                            static_cast<long double>(half_of(b[i])) +
                        static_cast<long double>(half_of(c[i]));
    ASSERT_TRUE(
        same_narrow(got[i], bits_of(static_cast<_Float16>(exact)), false))
        << "fma at " << i;
  }
}
#endif

/// fma differs from a multiply then an add exactly when rounding the
/// product first moves a result off a tie; these cases pin single rounding.
TEST(InterpreterArith, NarrowFmaRoundsOnce) {
  auto fma16 = [](Scalar s, uint16_t a, uint16_t b, uint16_t c) {
    return typed<uint16_t>(
        run_map({{s, {a}}, {s, {b}}, {s, {c}}}, s,
                [](KernelBuilder &k, const std::vector<Value *> &v) {
                  return k.fma(v[0], v[1], v[2]);
                }))[0];
  };
  // f16: (1 + 2^-6) * 2^-11 (1 - 2^-6) + (1 + 2^-10) is just below the tie
  // between 1 + 2^-10 and 1 + 2^-9: it rounds down. Rounding the product
  // first makes it a tie, which rounds to even (up).
  EXPECT_EQ(fma16(Scalar::F16, 0x3c10, 0x0fe0, 0x3c01), 0x3c01);
  // The same product rounded first: 2^-11 exactly, a tie, rounds up.
  EXPECT_EQ(fma16(Scalar::F16, 0x3c00, 0x1000, 0x3c01), 0x3c02);
  // bf16: 3 * 2^50 times (1 + 2^-7) * 2^50 is a tie at 2^101; a tiny
  // negative addend (2^-100) must break it downwards, which rounding the
  // exact sum to double first would lose.
  uint16_t three_2_50 = float_to_bf16(std::ldexp(3.0f, 50));
  uint16_t y = float_to_bf16(std::ldexp(1.0f + 1.0f / 128, 50));
  uint16_t tiny = float_to_bf16(-std::ldexp(1.0f, -100));
  uint16_t got = fma16(Scalar::BF16, three_2_50, y, tiny);
  EXPECT_EQ(bf16_to_float(got), std::ldexp(1.5f + 1.0f / 128, 101));
  // Without the addend the tie goes to even.
  EXPECT_EQ(bf16_to_float(fma16(Scalar::BF16, three_2_50, y, 0)),
            std::ldexp(1.5f + 2.0f / 128, 101));
}

TEST(InterpreterArith, Fp8HasNoArithmetic) {
  try {
    run_map({{Scalar::F8E4M3, {0x38}}, {Scalar::F8E4M3, {0x38}}},
            Scalar::F8E4M3, binary_body(OpCode::Add), "fp8_add");
    ADD_FAILURE() << "expected an error";
  } catch (const Error &e) {
    std::string m = e.what();
    EXPECT_NE(m.find("kernel 'fp8_add'"), std::string::npos) << m;
    EXPECT_NE(m.find("fp8 elements have no arithmetic"), std::string::npos)
        << m;
  }
}

TEST(InterpreterArith, SelectPicksPerLane) {
  std::vector<uint8_t> c{1, 0, 1, 0};
  std::vector<int64_t> a{1, 2, 3, 4}, b{-1, -2, -3, -4};
  std::vector<int64_t> got = typed<int64_t>(
      run_map({{Scalar::I1, raw_of(c)},
               {Scalar::I64, raw_of(a)},
               {Scalar::I64, raw_of(b)}},
              Scalar::I64, [](KernelBuilder &k, const std::vector<Value *> &v) {
                return k.select(v[0], v[1], v[2]);
              }));
  EXPECT_EQ(got, (std::vector<int64_t>{1, -2, 3, -4}));
}

} // namespace
} // namespace blocc::interp
