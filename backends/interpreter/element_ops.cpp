#include "backends/interpreter/element_ops.h"

#include "backends/interpreter/element.h"
#include "backends/interpreter/execution_site.h"
#include "backends/interpreter/float_format.h"

#include <bit>
#include <cmath>
#include <limits>

namespace blocc::interp {

using ir::OpCode;
using ir::Scalar;

namespace {

[[noreturn]] void undefined(OpCode op, Scalar s) {
  throw LaneError{std::string(ir::opcode_name(op)) + " is not defined on " +
                  std::string(ir::scalar_name(s)) + " elements"};
}

void reject_fp8(OpCode op, Scalar s) {
  if (ir::is_fp8(s))
    throw LaneError{std::string(ir::opcode_name(op)) + " on " +
                    std::string(ir::scalar_name(s)) +
                    ": fp8 elements have no arithmetic; cast them to f16 or "
                    "f32 first"};
}

template <typename T> T minimum_number(T a, T b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  if (a == b) // equal values differ at most in the sign of zero
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

template <typename T> T maximum_number(T a, T b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

template <typename T> T float_binary(OpCode op, Scalar s, T a, T b) {
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
    return minimum_number(a, b);
  case OpCode::Maximum:
    return maximum_number(a, b);
  default:
    undefined(op, s);
  }
}

template <typename T> T float_math(OpCode op, Scalar s, T x) {
  switch (op) {
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
    return T(1) / std::sqrt(x);
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
    undefined(op, s);
  }
}

uint64_t sign_mask(Scalar s) { return uint64_t{1} << (ir::scalar_bits(s) - 1); }

/// Width mask of an integer type: its value bits as unsigned.
uint64_t width_mask(Scalar s) {
  int bits = ir::scalar_bits(s);
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

uint64_t integer_binary(OpCode op, Scalar s, uint64_t a, uint64_t b) {
  const bool is_signed = ir::is_signed(s);
  const int width = ir::scalar_bits(s);
  const int64_t sa = as_signed(a), sb = as_signed(b);
  switch (op) {
  case OpCode::Add:
    return canonicalize(a + b, s);
  case OpCode::Sub:
    return canonicalize(a - b, s);
  case OpCode::Mul:
    return canonicalize(a * b, s); // the low bits of a product ignore sign
  case OpCode::Div:
  case OpCode::Rem: {
    if (b == 0)
      throw LaneError{std::string("integer ") +
                      (op == OpCode::Div ? "division" : "remainder") +
                      " by zero"};
    bool div = op == OpCode::Div;
    if (!is_signed)
      return div ? a / b : a % b;
    // Only i64 can overflow here: narrower types are sign-extended into
    // int64, where their INT_MIN / -1 fits and then wraps on canonicalize.
    if (sa == std::numeric_limits<int64_t>::min() && sb == -1)
      return div ? a : 0;
    return canonicalize(static_cast<uint64_t>(div ? sa / sb : sa % sb), s);
  }
  case OpCode::And:
    return a & b;
  case OpCode::Or:
    return a | b;
  case OpCode::Xor:
    return canonicalize(a ^ b, s);
  case OpCode::Shl:
  case OpCode::Shr: {
    uint64_t amount = b & width_mask(s);
    if (op == OpCode::Shl)
      return amount >= static_cast<uint64_t>(width)
                 ? 0
                 : canonicalize(a << amount, s);
    if (is_signed) // arithmetic: a is sign-extended, so shift the int64
      return static_cast<uint64_t>(
          sa >> (amount >= static_cast<uint64_t>(width) ? 63 : amount));
    return amount >= static_cast<uint64_t>(width) ? 0 : a >> amount;
  }
  case OpCode::Minimum:
    return is_signed ? (sa < sb ? a : b) : (a < b ? a : b);
  case OpCode::Maximum:
    return is_signed ? (sa > sb ? a : b) : (a > b ? a : b);
  case OpCode::Umulhi: {
    unsigned __int128 product =
        static_cast<unsigned __int128>(a & width_mask(s)) * (b & width_mask(s));
    return canonicalize(static_cast<uint64_t>(product >> width), s);
  }
  default:
    undefined(op, s);
  }
}

} // namespace

bool parse_predicate(const std::string &name, Predicate &out) {
  static const std::pair<const char *, Predicate> kNames[] = {
      {"eq", Predicate::Eq}, {"ne", Predicate::Ne}, {"lt", Predicate::Lt},
      {"le", Predicate::Le}, {"gt", Predicate::Gt}, {"ge", Predicate::Ge}};
  for (const auto &[n, p] : kNames)
    if (name == n) {
      out = p;
      return true;
    }
  return false;
}

uint64_t binary_element(OpCode op, Scalar s, uint64_t a, uint64_t b) {
  reject_fp8(op, s);
  if (s == Scalar::Ptr)
    undefined(op, s);
  if (ir::is_integer(s))
    return integer_binary(op, s, a, b);
  if (s == Scalar::F64)
    return std::bit_cast<uint64_t>(float_binary(op, s, std::bit_cast<double>(a),
                                                std::bit_cast<double>(b)));
  float r = float_binary(op, s, to_float(a, s), to_float(b, s));
  if (s == Scalar::F32)
    return std::bit_cast<uint32_t>(r);
  return from_double(r, s);
}

uint64_t unary_element(OpCode op, Scalar s, uint64_t a) {
  reject_fp8(op, s);
  if (s == Scalar::Ptr)
    undefined(op, s);
  if (ir::is_integer(s)) {
    switch (op) {
    case OpCode::Neg:
      return canonicalize(0 - a, s);
    case OpCode::Not:
      return canonicalize(~a, s);
    case OpCode::Abs:
      return ir::is_signed(s) && as_signed(a) < 0 ? canonicalize(0 - a, s) : a;
    default:
      undefined(op, s);
    }
  }
  switch (op) {
  case OpCode::Neg:
    return a ^ sign_mask(s);
  case OpCode::Abs:
    return a & ~sign_mask(s);
  case OpCode::Not:
    undefined(op, s);
  default:
    break;
  }
  if (s == Scalar::F64)
    return std::bit_cast<uint64_t>(float_math(op, s, std::bit_cast<double>(a)));
  float r = float_math(op, s, to_float(a, s));
  if (s == Scalar::F32)
    return std::bit_cast<uint32_t>(r);
  return from_double(r, s);
}

uint64_t flush_subnormal_f32(uint64_t bits) {
  const float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
  return std::fabs(x) < 0x1p-126f ? 0 : bits;
}

uint64_t fma_element(Scalar s, uint64_t a, uint64_t b, uint64_t c) {
  reject_fp8(OpCode::Fma, s);
  if (s == Scalar::Ptr)
    undefined(OpCode::Fma, s);
  if (ir::is_integer(s))
    return canonicalize(a * b + c, s);
  if (s == Scalar::F64)
    return std::bit_cast<uint64_t>(std::fma(std::bit_cast<double>(a),
                                            std::bit_cast<double>(b),
                                            std::bit_cast<double>(c)));
  if (s == Scalar::F32)
    return std::bit_cast<uint32_t>(
        std::fma(to_float(a, s), to_float(b, s), to_float(c, s)));
  // f16/bf16: the product of two 11-bit (8-bit) significands is exact in
  // double; the sum rounded to odd in double then rounds to the narrow type
  // exactly as the exact a * b + c would.
  double product = to_double(a, s) * to_double(b, s);
  return from_double(add_round_to_odd(product, to_double(c, s)), s);
}

bool compare_element(Predicate p, Scalar s, uint64_t a, uint64_t b) {
  reject_fp8(OpCode::Cmp, s);
  if (ir::is_float(s)) {
    double x = to_double(a, s), y = to_double(b, s); // exact
    switch (p) {
    case Predicate::Eq:
      return x == y;
    case Predicate::Ne:
      return x != y;
    case Predicate::Lt:
      return x < y;
    case Predicate::Le:
      return x <= y;
    case Predicate::Gt:
      return x > y;
    case Predicate::Ge:
      return x >= y;
    }
  }
  if (ir::is_signed(s)) {
    int64_t x = as_signed(a), y = as_signed(b);
    switch (p) {
    case Predicate::Eq:
      return x == y;
    case Predicate::Ne:
      return x != y;
    case Predicate::Lt:
      return x < y;
    case Predicate::Le:
      return x <= y;
    case Predicate::Gt:
      return x > y;
    case Predicate::Ge:
      return x >= y;
    }
  }
  switch (p) {
  case Predicate::Eq:
    return a == b;
  case Predicate::Ne:
    return a != b;
  case Predicate::Lt:
    return a < b;
  case Predicate::Le:
    return a <= b;
  case Predicate::Gt:
    return a > b;
  case Predicate::Ge:
    return a >= b;
  }
  return false;
}

} // namespace blocc::interp
