#include "ir/passes/constant_element.h"

#include <cmath>
#include <limits>

namespace blocc::ir {

namespace {

/// Rounds to a binary format with `mantissa_bits` stored fraction bits and
/// normal exponents in [min_exponent, max_exponent], without going through
/// an intermediate format: rounding twice (double -> float -> half) can land
/// on the wrong neighbour when the first rounding creates a tie.
double round_binary(double v, int mantissa_bits, int min_exponent,
                    int max_exponent) {
  if (std::isnan(v) || std::isinf(v) || v == 0.0)
    return v;
  int exponent = std::max(std::ilogb(v), min_exponent);
  // The spacing of representable values around v; below the normal range
  // it stays at the subnormal spacing.
  double quantum = std::ldexp(1.0, exponent - mantissa_bits);
  // v / quantum and the product below are exact (powers of two); nearbyint
  // rounds ties to even in the default rounding mode.
  double rounded = std::nearbyint(v / quantum) * quantum;
  double max_finite =
      std::ldexp(2.0 - std::ldexp(1.0, -mantissa_bits), max_exponent);
  if (std::fabs(rounded) > max_finite)
    return std::copysign(std::numeric_limits<double>::infinity(), v);
  return rounded;
}

bool is_computable_float(Scalar s) { return is_float(s) && !is_fp8(s); }

uint64_t width_mask(int bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

ConstantElement integer(int64_t v, Scalar s) {
  return ConstantElement::of_integer(wrap_integer(v, s));
}
ConstantElement integer(uint64_t v, Scalar s) {
  return integer(static_cast<int64_t>(v), s);
}
ConstantElement real(double v, Scalar s) {
  // The sign and payload of a NaN produced by the host's arithmetic are not
  // portable (x86 makes 0/0 negative); fold to the one canonical quiet NaN
  // so the IR text does not depend on the machine that compiled it.
  if (std::isnan(v))
    return ConstantElement::of_real(std::numeric_limits<double>::quiet_NaN());
  return ConstantElement::of_real(round_to_format(v, s));
}
ConstantElement boolean(bool v) { return ConstantElement::of_integer(v); }

/// An integer's value converted to a float format with one rounding.
std::optional<ConstantElement> integer_to_float(int64_t v, bool is_unsigned_v,
                                                Scalar to) {
  // Below 2^53 the conversion to double is exact, so rounding to the target
  // afterwards is the only rounding.
  constexpr double kExact = 9007199254740992.0; // 2^53
  double magnitude = is_unsigned_v
                         ? static_cast<double>(static_cast<uint64_t>(v))
                         : std::fabs(static_cast<double>(v));
  if (magnitude < kExact) {
    double exact = is_unsigned_v ? static_cast<double>(static_cast<uint64_t>(v))
                                 : static_cast<double>(v);
    return real(exact, to);
  }
  // Larger values: convert straight to the target where C++ can (one
  // rounding); f16/bf16 would round twice, so leave those to the backend.
  if (to == Scalar::F64)
    return ConstantElement::of_real(
        is_unsigned_v ? static_cast<double>(static_cast<uint64_t>(v))
                      : static_cast<double>(v));
  if (to == Scalar::F32)
    return ConstantElement::of_real(
        is_unsigned_v ? static_cast<float>(static_cast<uint64_t>(v))
                      : static_cast<float>(v));
  return std::nullopt;
}

std::optional<ConstantElement> fold_integer_binary(OpCode code, Scalar s,
                                                   int64_t a, int64_t b) {
  int bits = scalar_bits(s);
  bool sign = is_signed(s);
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (code) {
  case OpCode::Add:
    return integer(ua + ub, s);
  case OpCode::Sub:
    return integer(ua - ub, s);
  case OpCode::Mul:
    return integer(ua * ub, s);
  case OpCode::Div:
  case OpCode::Rem: {
    if (b == 0)
      return std::nullopt; // undefined: the backend traps or returns garbage
    int64_t min_signed = bits >= 64 ? std::numeric_limits<int64_t>::min()
                                    : -(int64_t{1} << (bits - 1));
    if (sign && a == min_signed && b == -1)
      return std::nullopt; // the quotient overflows: undefined
    if (sign)
      return integer(code == OpCode::Div ? a / b : a % b, s);
    return integer(code == OpCode::Div ? ua / ub : ua % ub, s);
  }
  case OpCode::And:
    return integer(ua & ub, s);
  case OpCode::Or:
    return integer(ua | ub, s);
  case OpCode::Xor:
    return integer(ua ^ ub, s);
  case OpCode::Shl:
  case OpCode::Shr: {
    // Shifting by the width or more (or by a negative amount) is poison in
    // LLVM: there is no value to fold to.
    bool out_of_range = sign ? (b < 0 || b >= bits) : ub >= uint64_t(bits);
    if (out_of_range)
      return std::nullopt;
    if (code == OpCode::Shl)
      return integer(ua << ub, s);
    return sign ? integer(a >> b, s) : integer(ua >> ub, s);
  }
  case OpCode::Minimum:
    return integer(sign ? std::min(a, b) : std::min(ua, ub), s);
  case OpCode::Maximum:
    return integer(sign ? std::max(a, b) : std::max(ua, ub), s);
  case OpCode::Umulhi: {
    unsigned __int128 product =
        static_cast<unsigned __int128>(ua & width_mask(bits)) *
        static_cast<unsigned __int128>(ub & width_mask(bits));
    return integer(static_cast<uint64_t>(product >> bits), s);
  }
  default:
    return std::nullopt;
  }
}

std::optional<ConstantElement> fold_float_binary(OpCode code, Scalar s,
                                                 double a, double b) {
  // Computing in double and rounding once to f32, f16 or bf16 gives the
  // correctly rounded result for + - * / (double has more than twice their
  // precision plus two bits, so the double rounding is innocuous).
  switch (code) {
  case OpCode::Add:
    return real(a + b, s);
  case OpCode::Sub:
    return real(a - b, s);
  case OpCode::Mul:
    return real(a * b, s);
  case OpCode::Div:
    return real(a / b, s);
  case OpCode::Rem:
    return real(std::fmod(a, b), s); // exact in every format
  case OpCode::Minimum:
  case OpCode::Maximum: {
    // opcode.h: a NaN operand yields the other operand. Zeros of both signs
    // are ordered -0 < +0 so the fold does not depend on operand order.
    if (std::isnan(a))
      return ConstantElement::of_real(b);
    if (std::isnan(b))
      return ConstantElement::of_real(a);
    bool pick_a;
    if (a == b)
      pick_a = (code == OpCode::Minimum) == std::signbit(a);
    else
      pick_a = (code == OpCode::Minimum) == (a < b);
    return ConstantElement::of_real(pick_a ? a : b);
  }
  default:
    return std::nullopt;
  }
}

} // namespace

int64_t wrap_integer(int64_t v, Scalar s) {
  int bits = scalar_bits(s);
  if (bits >= 64)
    return v;
  uint64_t u = static_cast<uint64_t>(v) & width_mask(bits);
  if (is_signed(s) && (u >> (bits - 1)) != 0)
    u |= ~width_mask(bits); // sign-extend
  return static_cast<int64_t>(u);
}

double round_to_format(double v, Scalar s) {
  switch (s) {
  case Scalar::F64:
    return v;
  case Scalar::F32:
    return static_cast<double>(static_cast<float>(v));
  case Scalar::F16:
    return round_binary(v, 10, -14, 15);
  case Scalar::BF16:
    return round_binary(v, 7, -126, 127);
  default:
    return v;
  }
}

std::optional<ConstantElement> element_from_attribute(int64_t v, Scalar s) {
  if (is_integer(s))
    return integer(v, s);
  if (is_computable_float(s))
    return integer_to_float(v, false, s);
  return std::nullopt;
}

std::optional<ConstantElement> element_from_attribute(double v, Scalar s) {
  if (is_computable_float(s))
    return real(v, s);
  return std::nullopt;
}

std::optional<ConstantElement> fold_unary(OpCode code, Scalar s,
                                          ConstantElement a) {
  if (is_integer(s)) {
    uint64_t u = static_cast<uint64_t>(a.integer);
    switch (code) {
    case OpCode::Neg:
      return integer(uint64_t{0} - u, s);
    case OpCode::Not:
      return integer(~u, s);
    case OpCode::Abs:
      return is_signed(s) && a.integer < 0 ? integer(uint64_t{0} - u, s) : a;
    default:
      return std::nullopt;
    }
  }
  if (!is_computable_float(s))
    return std::nullopt;
  switch (code) {
  case OpCode::Neg:
    return ConstantElement::of_real(-a.real);
  case OpCode::Abs:
    return ConstantElement::of_real(std::fabs(a.real));
  case OpCode::Floor:
    return ConstantElement::of_real(std::floor(a.real));
  case OpCode::Ceil:
    return ConstantElement::of_real(std::ceil(a.real));
  case OpCode::Sqrt:
    return real(std::sqrt(a.real), s); // correctly rounded, like the devices
  default:
    // exp, log, sin, tanh, ...: the backends use fast approximations, so a
    // folded value could differ from the unfolded one.
    return std::nullopt;
  }
}

std::optional<ConstantElement>
fold_binary(OpCode code, Scalar s, ConstantElement a, ConstantElement b) {
  if (is_integer(s))
    return fold_integer_binary(code, s, a.integer, b.integer);
  if (is_computable_float(s)) {
    if (code == OpCode::Umulhi)
      return std::nullopt;
    return fold_float_binary(code, s, a.real, b.real);
  }
  return std::nullopt;
}

std::optional<ConstantElement> fold_fma(Scalar s, ConstantElement a,
                                        ConstantElement b, ConstantElement c) {
  // std::fma rounds once in double and std::fmaf once in float. For f16 and
  // bf16 a double fma followed by a second rounding is not always correct,
  // so those stay unfolded.
  if (s == Scalar::F64)
    return ConstantElement::of_real(std::fma(a.real, b.real, c.real));
  if (s == Scalar::F32)
    return ConstantElement::of_real(std::fmaf(static_cast<float>(a.real),
                                              static_cast<float>(b.real),
                                              static_cast<float>(c.real)));
  return std::nullopt;
}

std::optional<ConstantElement> fold_compare(const std::string &predicate,
                                            Scalar s, ConstantElement a,
                                            ConstantElement b) {
  if (is_integer(s)) {
    auto compare = [&](auto x, auto y) -> std::optional<ConstantElement> {
      if (predicate == "eq")
        return boolean(x == y);
      if (predicate == "ne")
        return boolean(x != y);
      if (predicate == "lt")
        return boolean(x < y);
      if (predicate == "le")
        return boolean(x <= y);
      if (predicate == "gt")
        return boolean(x > y);
      if (predicate == "ge")
        return boolean(x >= y);
      return std::nullopt;
    };
    if (is_signed(s))
      return compare(a.integer, b.integer);
    return compare(static_cast<uint64_t>(a.integer),
                   static_cast<uint64_t>(b.integer));
  }
  if (!is_computable_float(s))
    return std::nullopt;
  // As in Triton: `ne` is unordered (true when either is NaN), the other
  // predicates are ordered (false when either is NaN).
  double x = a.real, y = b.real;
  if (predicate == "eq")
    return boolean(x == y);
  if (predicate == "ne")
    return boolean(!(x == y));
  if (predicate == "lt")
    return boolean(x < y);
  if (predicate == "le")
    return boolean(x <= y);
  if (predicate == "gt")
    return boolean(x > y);
  if (predicate == "ge")
    return boolean(x >= y);
  return std::nullopt;
}

std::optional<ConstantElement> fold_cast(Scalar from, Scalar to,
                                         ConstantElement a) {
  bool from_int = is_integer(from), to_int = is_integer(to);
  if ((!from_int && !is_computable_float(from)) ||
      (!to_int && !is_computable_float(to)))
    return std::nullopt; // pointers and fp8
  // A conversion to bool tests for non-zero, as Triton's cast does; it is
  // not a truncation to the lowest bit.
  if (to == Scalar::I1)
    return boolean(from_int ? a.integer != 0 : a.real != 0.0);
  if (from_int && to_int)
    return integer(a.integer, to);
  if (from_int)
    return integer_to_float(a.integer, is_unsigned(from), to);
  if (!to_int)
    return real(a.real, to);
  // Float to integer truncates toward zero; values outside the target's
  // range (and NaN) have no defined result.
  double v = a.real;
  if (std::isnan(v) || std::isinf(v))
    return std::nullopt;
  double t = std::trunc(v);
  int bits = scalar_bits(to);
  double lo = is_signed(to) ? -std::ldexp(1.0, bits - 1) : 0.0;
  double hi_exclusive =
      is_signed(to) ? std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits);
  if (t < lo || t >= hi_exclusive)
    return std::nullopt;
  if (is_signed(to))
    return integer(static_cast<int64_t>(t), to);
  return integer(static_cast<uint64_t>(t), to);
}

} // namespace blocc::ir
