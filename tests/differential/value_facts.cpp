#include "value_facts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

namespace blocc::differential {

namespace {

using ir::OpCode;
using ir::Scalar;

/// The quantum of 0, a multiple of every power of two; sums with it keep
/// the other operand's quantum through std::min.
constexpr int kZeroQuantum = 1000;
/// Loops the analysis follows iteration by iteration.
constexpr int64_t kMaxTrips = 64;
/// The smallest magnitude a divisor, or the operand of log and rsqrt, may
/// come near: closer to 0 the result's condition number explodes.
constexpr double kMinDistanceFromZero = 0x1p-6;
/// exp/exp2 arguments beyond this overflow every format's magnitude limit.
constexpr double kMaxExpArgument = 30;
/// sin/cos arguments beyond this need an argument reduction whose accuracy
/// varies between implementations.
constexpr double kMaxTrigArgument = 64;

bool is_computable_float(Scalar s) {
  return s == Scalar::F16 || s == Scalar::BF16 || s == Scalar::F32 ||
         s == Scalar::F64;
}

ValueFacts full_range(Scalar s) {
  return ValueFacts::range(integer_min(s), integer_max(s));
}

/// True when every integer in [lo, hi] is a value of `s`. The bounds are
/// doubles, exact below 2^53; near the ends of a 64-bit type they may have
/// been rounded by a few ulps, so those ends count as reached.
bool fits(Scalar s, double lo, double hi) {
  double margin = ir::scalar_bits(s) > 52 ? 0x1p13 : 0;
  return lo >= integer_min(s) + (integer_min(s) < 0 ? margin : 0) &&
         hi <= integer_max(s) - margin;
}

/// An integer result whose value, without wrap-around, lies in [lo, hi].
ValueFacts integer_result(Scalar s, double lo, double hi) {
  if (!fits(s, lo, hi))
    return full_range(s); // may wrap: anything is possible
  return ValueFacts::range(lo, hi);
}

/// The number of bits of the largest value in [0, hi]: or/xor of values up
/// to hi stay below 2^bits.
double all_ones_above(double hi) {
  double bound = 1;
  while (bound <= hi)
    bound *= 2;
  return bound - 1;
}

int minimum_quantum(const FloatLimits &l) {
  return std::ilogb(l.smallest_subnormal);
}

/// Every multiple of 2^quantum with magnitude at most m is a value of the
/// format.
bool representable(const FloatLimits &l, double m, int quantum) {
  if (m == 0)
    return true;
  if (quantum < minimum_quantum(l))
    return false;
  return m < std::ldexp(1.0, quantum + l.precision);
}

/// A float op's result whose exact value lies in [lo, hi]. `propagated` is
/// what the operands' errors become through the op; `quantum` is set when
/// the operands are exact and the exact result is a multiple of 2^quantum.
/// The result is exact when that multiple is representable; otherwise it is
/// rounded once (correctly rounded ops: + - * / sqrt fma casts).
ValueFacts rounded_result(Scalar s, double lo, double hi, double propagated,
                          std::optional<int> quantum) {
  const FloatLimits &l = float_limits(s);
  double m = std::max(std::fabs(lo), std::fabs(hi));
  if (propagated == 0 && quantum && representable(l, m, *quantum))
    return {lo, hi, 0, std::min(*quantum, kZeroQuantum)};
  return {lo, hi, propagated + l.unit_roundoff * m + l.smallest_subnormal, 0};
}

/// A math function's result: kMathUlps units in the last place on top of
/// what the operand's error becomes. Near 0 the allowance stays that of
/// |x| = 1, since approximations are accurate in absolute terms there.
ValueFacts math_result(Scalar s, double lo, double hi, double propagated) {
  const FloatLimits &l = float_limits(s);
  double m = std::max(std::fabs(lo), std::fabs(hi));
  double ulp = 2 * l.unit_roundoff * std::max(m, 1.0);
  return {lo, hi, propagated + kMathUlps * ulp + l.smallest_subnormal, 0};
}

/// The facts of an op that picks one of its operands' values unchanged
/// (min, max, select): no rounding, exact when every candidate is.
ValueFacts picked(double lo, double hi, const ValueFacts &a,
                  const ValueFacts &b) {
  ValueFacts f = hull(a, b);
  f.lo = lo;
  f.hi = hi;
  return f;
}

struct Corners {
  double lo, hi;
};
Corners product_range(const ValueFacts &a, const ValueFacts &b) {
  double p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

} // namespace

double ValueFacts::magnitude() const {
  return std::max(std::fabs(lo), std::fabs(hi));
}

std::string ValueFacts::str() const {
  std::string s = "[" + number(lo) + ", " + number(hi) + "]";
  if (special)
    s += " or inf/NaN";
  if (exact())
    return s + " exact" +
           (quantum < kZeroQuantum
                ? " (multiples of 2^" + std::to_string(quantum) + ")"
                : "");
  return s + " +- " + number(error);
}

ValueFacts hull(const ValueFacts &a, const ValueFacts &b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi),
          std::max(a.error, b.error), std::min(a.quantum, b.quantum),
          a.special || b.special};
}

int quantum_of(double value) {
  if (value == 0 || !std::isfinite(value))
    return kZeroQuantum;
  int q = std::ilogb(value);
  while (std::ldexp(value, -q) != std::trunc(std::ldexp(value, -q)))
    --q;
  while (q < kZeroQuantum &&
         std::ldexp(value, -(q + 1)) == std::trunc(std::ldexp(value, -(q + 1))))
    ++q;
  return q;
}

const FloatLimits &float_limits(Scalar s) {
  // The error allowance (max_error_ulps) keeps comparisons meaningful: a
  // value known only to within 2^-1 of its size says nothing. Narrow
  // formats get more ulps since each op costs them more.
  static const FloatLimits f16{11, 0x1p-11, 0x1p-24, 0x1p13, 1024};
  static const FloatLimits bf16{8, 0x1p-8, 0x1p-133, 0x1p20, 128};
  static const FloatLimits f32{24, 0x1p-24, 0x1p-149, 0x1p20, 1 << 16};
  static const FloatLimits f64{53, 0x1p-53, 0x1p-1074, 0x1p20, 1 << 16};
  switch (s) {
  case Scalar::F16:
    return f16;
  case Scalar::BF16:
    return bf16;
  case Scalar::F32:
    return f32;
  default:
    return f64;
  }
}

double integer_min(Scalar s) {
  if (!ir::is_signed(s))
    return 0;
  return -std::ldexp(1.0, ir::scalar_bits(s) - 1);
}

double integer_max(Scalar s) {
  int bits = ir::scalar_bits(s);
  return std::ldexp(1.0, ir::is_signed(s) ? bits - 1 : bits) - 1;
}

const ValueFacts &FactsAnalysis::get(const ir::Value *v) const {
  return facts_.at(v);
}

std::string FactsAnalysis::define(const ir::Operation &op,
                                  const ValueFacts &given) {
  const ir::Value *v = op.result();
  Scalar s = v->type().element();
  ValueFacts f = given;
  // Infinities and NaNs flow through every float op that admits them.
  if (ir::is_float(s) || v->type().is_pointer())
    for (const ir::Value *operand : op.operands())
      f.special = f.special || get(operand).special;
  if (is_computable_float(s) && !v->type().is_pointer()) {
    const FloatLimits &l = float_limits(s);
    if (!(f.magnitude() + f.error <= l.max_magnitude))
      return "magnitude " + f.str() + " beyond " + number(l.max_magnitude);
    if (!(f.error <=
          l.max_error_ulps * l.unit_roundoff * std::max(f.magnitude(), 1.0)))
      return "error " + f.str() + " too large to compare";
  }
  facts_[v] = f;
  return "";
}

std::string FactsAnalysis::evaluate_block(const ir::Block &block) {
  for (const auto &op : block.ops()) {
    if (ir::is_terminator(op->code()))
      continue;
    std::string reason = evaluate(*op);
    if (!reason.empty())
      return reason;
  }
  return "";
}

std::string FactsAnalysis::evaluate(const ir::Operation &op) {
  switch (op.code()) {
  case OpCode::Constant: {
    const ir::Type &t = op.result()->type();
    const auto &value = op.attributes().at("value");
    if (const auto *d = std::get_if<double>(&value)) {
      if (!std::isfinite(*d)) // no finite elements: any range holds
        return define(op, {0, 0, 0, kZeroQuantum, true});
      return define(op, rounded_result(t.element(), *d, *d, 0, quantum_of(*d)));
    }
    int64_t i = std::get<int64_t>(value);
    double v = t.element() == Scalar::U64
                   ? static_cast<double>(static_cast<uint64_t>(i))
                   : static_cast<double>(i);
    if (t.is_float())
      return define(op, rounded_result(t.element(), v, v, 0, 0));
    return define(op, ValueFacts::range(v, v));
  }
  case OpCode::ProgramId: {
    double count = static_cast<double>(grid_[int(op.int_attr("axis"))]);
    return define(op, ValueFacts::range(0, count - 1));
  }
  case OpCode::NumPrograms: {
    double count = static_cast<double>(grid_[int(op.int_attr("axis"))]);
    return define(op, ValueFacts::range(count, count));
  }
  case OpCode::Arange:
    return define(op, ValueFacts::range(double(op.int_attr("start")),
                                        double(op.int_attr("end") - 1)));
  case OpCode::Splat:
  case OpCode::Broadcast:
  case OpCode::ExpandDims:
  case OpCode::Reshape:
  case OpCode::Permute:
  case OpCode::AddPtr:
  case OpCode::MultipleOf:
  case OpCode::MaxContiguous:
  case OpCode::MaxConstancy:
    return define(op, get(op.operand(0)));
  case OpCode::Join:
  case OpCode::Cat:
    return define(op, hull(get(op.operand(0)), get(op.operand(1))));
  case OpCode::Split:
    facts_[op.result(1)] = get(op.operand(0));
    return define(op, get(op.operand(0)));
  case OpCode::Cast:
  case OpCode::Bitcast:
    return evaluate_cast(op);
  case OpCode::Dot:
    return evaluate_dot(op);
  case OpCode::Load: {
    ValueFacts f = get(op.operand(0)); // what the buffer holds
    if (op.num_operands() == 3)
      f = hull(f, get(op.operand(2)));
    else if (op.num_operands() == 2) // masked-off lanes read 0
      f = hull(f, ValueFacts::range(0, 0, kZeroQuantum));
    return define(op, f);
  }
  case OpCode::Store:
    return "";
  case OpCode::AtomicRmw: // the old value depends on the programs' order
    return define(op, full_range(op.result()->type().element()));
  case OpCode::Reduce:
  case OpCode::Scan:
    return evaluate_collective(op);
  case OpCode::For:
    return evaluate_for(op);
  case OpCode::If:
    return evaluate_if(op);
  default:
    if (ir::is_elementwise(op.code()))
      return evaluate_elementwise(op);
    return std::string(op.name()) + " is not generated";
  }
}

std::string FactsAnalysis::evaluate_elementwise(const ir::Operation &op) {
  OpCode c = op.code();
  std::vector<ValueFacts> in;
  for (const ir::Value *v : op.operands())
    in.push_back(get(v));
  if (c == OpCode::Select)
    return define(op, hull(in[1], in[2]));
  const ValueFacts &a = in[0];
  const ValueFacts &b = in.size() > 1 ? in[1] : in[0];
  Scalar s = op.operand(0)->type().element();
  bool special = false;
  for (const ValueFacts &f : in)
    special = special || f.special;
  if (special && c != OpCode::Add && c != OpCode::Sub && c != OpCode::Mul &&
      c != OpCode::Div && c != OpCode::Fma && c != OpCode::Minimum &&
      c != OpCode::Maximum && c != OpCode::Neg && c != OpCode::Abs &&
      c != OpCode::Floor && c != OpCode::Ceil && c != OpCode::Cmp)
    return std::string(op.name()) + " of a value that may be inf or NaN";
  if (c == OpCode::Cmp) {
    // A one-ulp difference could flip a float comparison.
    if (ir::is_float(s) && !(a.exact() && b.exact()))
      return "float comparison of inexact values";
    return define(op, ValueFacts::range(0, 1));
  }

  if (!ir::is_float(s)) {
    // Integers: exact by nature; only their ranges matter.
    if (s == Scalar::I1)
      return define(op, ValueFacts::range(0, 1));
    double bits = ir::scalar_bits(s);
    bool nonnegative = a.lo >= 0 && b.lo >= 0;
    switch (c) {
    case OpCode::Add:
      return define(op, integer_result(s, a.lo + b.lo, a.hi + b.hi));
    case OpCode::Sub:
      return define(op, integer_result(s, a.lo - b.hi, a.hi - b.lo));
    case OpCode::Mul: {
      Corners p = product_range(a, b);
      return define(op, integer_result(s, p.lo, p.hi));
    }
    case OpCode::Div:
    case OpCode::Rem:
      // Positive divisors only: no division by zero, no INT_MIN / -1.
      if (b.lo < 1)
        return "integer divisor may be 0 or negative";
      if (c == OpCode::Div)
        return define(
            op, ValueFacts::range(std::min(a.lo, 0.0), std::max(a.hi, 0.0)));
      return define(op, ValueFacts::range(a.lo < 0 ? -(b.hi - 1) : 0,
                                          a.hi > 0 ? b.hi - 1 : 0));
    case OpCode::And:
      if (a.lo >= 0 || b.lo >= 0)
        return define(op,
                      ValueFacts::range(0, std::min(a.lo >= 0 ? a.hi : b.hi,
                                                    b.lo >= 0 ? b.hi : a.hi)));
      return define(op, full_range(s));
    case OpCode::Or:
    case OpCode::Xor:
      if (nonnegative)
        return define(
            op, ValueFacts::range(c == OpCode::Or ? std::max(a.lo, b.lo) : 0,
                                  all_ones_above(std::max(a.hi, b.hi))));
      return define(op, full_range(s));
    case OpCode::Shl:
    case OpCode::Shr:
      // LLVM makes shifts by the width or more poison: keep amounts inside.
      if (b.lo < 0 || b.hi > bits - 1)
        return "shift amount may be outside [0, width)";
      if (c == OpCode::Shr)
        return define(
            op, ValueFacts::range(std::min(a.lo, 0.0), std::max(a.hi, 0.0)));
      if (a.lo >= 0)
        return define(op, integer_result(s, a.lo * std::ldexp(1.0, int(b.lo)),
                                         a.hi * std::ldexp(1.0, int(b.hi))));
      return define(op, full_range(s));
    case OpCode::Minimum:
      return define(
          op, ValueFacts::range(std::min(a.lo, b.lo), std::min(a.hi, b.hi)));
    case OpCode::Maximum:
      return define(
          op, ValueFacts::range(std::max(a.lo, b.lo), std::max(a.hi, b.hi)));
    case OpCode::Umulhi:
      return define(op, full_range(s));
    case OpCode::Neg:
      return define(op, integer_result(s, -a.hi, -a.lo));
    case OpCode::Not:
      if (ir::is_signed(s))
        return define(op, ValueFacts::range(-a.hi - 1, -a.lo - 1));
      return define(
          op, ValueFacts::range(integer_max(s) - a.hi, integer_max(s) - a.lo));
    case OpCode::Abs:
      if (a.lo <= integer_min(s) && ir::is_signed(s))
        return define(op, full_range(s)); // abs(INT_MIN) wraps
      return define(op, ValueFacts::range(a.lo >= 0   ? a.lo
                                          : a.hi <= 0 ? -a.hi
                                                      : 0,
                                          a.magnitude()));
    default:
      return std::string(op.name()) + " on integers is not generated";
    }
  }

  // Floats. Operands' computed values lie in [lo - error, hi + error]; the
  // Lipschitz constants below are taken over that widened range.
  bool exact = true;
  for (const ValueFacts &f : in)
    exact = exact && f.exact();
  auto quantum = [&](int q) {
    return exact ? std::optional<int>(q) : std::nullopt;
  };
  double ea = a.error, eb = b.error;
  double wide_lo = a.lo - ea, wide_hi = a.hi + ea;
  switch (c) {
  case OpCode::Add:
    return define(op, rounded_result(s, a.lo + b.lo, a.hi + b.hi, ea + eb,
                                     quantum(std::min(a.quantum, b.quantum))));
  case OpCode::Sub:
    return define(op, rounded_result(s, a.lo - b.hi, a.hi - b.lo, ea + eb,
                                     quantum(std::min(a.quantum, b.quantum))));
  case OpCode::Mul: {
    Corners p = product_range(a, b);
    double propagated = a.magnitude() * eb + b.magnitude() * ea + ea * eb;
    return define(op, rounded_result(s, p.lo, p.hi, propagated,
                                     quantum(a.quantum + b.quantum)));
  }
  case OpCode::Fma: {
    const ValueFacts &z = in[2];
    Corners p = product_range(a, b);
    double propagated =
        a.magnitude() * eb + b.magnitude() * ea + ea * eb + z.error;
    return define(op, rounded_result(
                          s, p.lo + z.lo, p.hi + z.hi, propagated,
                          quantum(std::min(a.quantum + b.quantum, z.quantum))));
  }
  case OpCode::Div: {
    double nearest = b.lo - eb > 0 ? b.lo - eb : -(b.hi + eb);
    if (!(nearest >= kMinDistanceFromZero))
      return "float divisor may come near 0";
    ValueFacts inverse = ValueFacts::range(1 / b.hi, 1 / b.lo);
    if (b.special) // x / inf is 0
      inverse = hull(inverse, ValueFacts::range(0, 0));
    Corners p = product_range(a, inverse);
    double propagated =
        ea / nearest + (a.magnitude() + ea) * eb / (nearest * nearest);
    return define(op, rounded_result(s, p.lo, p.hi, propagated, std::nullopt));
  }
  case OpCode::Rem: {
    // fmod is exact, but a rounding difference in its operands could move
    // the result by a whole divisor.
    if (!exact)
      return "float remainder of inexact values";
    if (b.lo <= 0 && b.hi >= 0)
      return "float divisor may be 0";
    double limit = b.magnitude();
    return define(op, rounded_result(s, a.lo < 0 ? std::max(a.lo, -limit) : 0,
                                     a.hi > 0 ? std::min(a.hi, limit) : 0, 0,
                                     std::min(a.quantum, b.quantum)));
  }
  case OpCode::Minimum:
  case OpCode::Maximum:
    // Next to an inf or a NaN (which min and max skip), a finite result
    // is whatever the other operand holds.
    if (special)
      return define(op, hull(a, b));
    if (c == OpCode::Minimum)
      return define(op,
                    picked(std::min(a.lo, b.lo), std::min(a.hi, b.hi), a, b));
    return define(op, picked(std::max(a.lo, b.lo), std::max(a.hi, b.hi), a, b));
  case OpCode::Neg:
    return define(op, {-a.hi, -a.lo, ea, a.quantum});
  case OpCode::Abs:
    return define(op, {a.lo >= 0   ? a.lo
                       : a.hi <= 0 ? -a.hi
                                   : 0,
                       a.magnitude(), ea, a.quantum});
  case OpCode::Floor:
  case OpCode::Ceil: {
    if (!exact)
      return "floor/ceil of an inexact value";
    auto f = c == OpCode::Floor ? [](double x) { return std::floor(x); }
                                : [](double x) { return std::ceil(x); };
    return define(op, {f(a.lo), f(a.hi), 0, std::max(a.quantum, 0)});
  }
  case OpCode::Exp:
  case OpCode::Exp2: {
    if (!(wide_hi <= kMaxExpArgument))
      return "exp argument too large";
    bool two = c == OpCode::Exp2;
    auto f = [&](double x) { return two ? std::exp2(x) : std::exp(x); };
    double slope = f(wide_hi) * (two ? std::log(2.0) : 1.0);
    return define(op, math_result(s, f(a.lo), f(a.hi), slope * ea));
  }
  case OpCode::Log:
  case OpCode::Log2: {
    if (!(wide_lo >= kMinDistanceFromZero))
      return "log argument may come near 0";
    bool two = c == OpCode::Log2;
    auto f = [&](double x) { return two ? std::log2(x) : std::log(x); };
    double slope = 1 / (wide_lo * (two ? std::log(2.0) : 1.0));
    return define(op, math_result(s, f(a.lo), f(a.hi), slope * ea));
  }
  case OpCode::Sqrt: {
    if (!(wide_lo >= 0))
      return "sqrt argument may be negative";
    // Near 0 sqrt is not Lipschitz: |sqrt(x) - sqrt(y)| <= sqrt(|x - y|).
    double propagated = wide_lo >= kMinDistanceFromZero
                            ? ea * 0.5 / std::sqrt(wide_lo)
                            : std::sqrt(ea);
    return define(op, rounded_result(s, std::sqrt(a.lo), std::sqrt(a.hi),
                                     propagated, std::nullopt));
  }
  case OpCode::Rsqrt: {
    if (!(wide_lo >= kMinDistanceFromZero))
      return "rsqrt argument may come near 0";
    double slope = 0.5 * std::pow(wide_lo, -1.5);
    return define(op, math_result(s, 1 / std::sqrt(a.hi), 1 / std::sqrt(a.lo),
                                  slope * ea));
  }
  case OpCode::Sin:
  case OpCode::Cos:
    if (!(a.magnitude() + ea <= kMaxTrigArgument))
      return "sin/cos argument too large";
    return define(op, math_result(s, -1, 1, ea));
  case OpCode::Tanh:
    return define(op, math_result(s, std::tanh(a.lo), std::tanh(a.hi), ea));
  case OpCode::Erf:
    return define(op, math_result(s, std::erf(a.lo), std::erf(a.hi),
                                  ea * 2 / std::sqrt(M_PI)));
  default:
    return std::string(op.name()) + " on floats is not generated";
  }
}

std::string FactsAnalysis::evaluate_cast(const ir::Operation &op) {
  Scalar from = op.operand(0)->type().element();
  Scalar to = op.result()->type().element();
  const ValueFacts &a = get(op.operand(0));
  bool from_float = ir::is_float(from), to_float = ir::is_float(to);
  if (a.special && !(from_float && to_float && op.code() == OpCode::Cast))
    return "conversion of a value that may be inf or NaN to an integer";
  if (op.code() == OpCode::Bitcast) {
    if (to_float)
      return "bitcast to a float could make NaNs";
    if (from_float && !a.exact())
      return "bitcast of an inexact float";
    if (!from_float && fits(to, a.lo, a.hi))
      return define(op, a);
    return define(op, full_range(to));
  }
  if (from == to)
    return define(op, a);
  if (!from_float && !to_float) {
    if (to == Scalar::I1) // tests for non-zero
      return define(op, ValueFacts::range(0, 1));
    if (fits(to, a.lo, a.hi))
      return define(op, ValueFacts::range(a.lo, a.hi));
    return define(op, full_range(to));
  }
  if (!from_float) // integer to float: exact below 2^precision
    return define(op, rounded_result(to, a.lo, a.hi, 0, 0));
  if (to_float)
    return define(op, rounded_result(to, a.lo, a.hi, a.error,
                                     a.exact() ? std::optional<int>(a.quantum)
                                               : std::nullopt));
  // Float to integer truncates: a rounding difference could cross an
  // integer, and values outside the target's range are poison in LLVM.
  if (!a.exact())
    return "float to integer cast of an inexact value";
  if (to == Scalar::I1)
    return define(op, ValueFacts::range(0, 1));
  double lo = std::trunc(a.lo), hi = std::trunc(a.hi);
  if (!fits(to, lo, hi))
    return "float to integer cast out of range";
  return define(op, ValueFacts::range(lo + 0.0, hi + 0.0));
}

std::string FactsAnalysis::evaluate_collective(const ir::Operation &op) {
  const ir::Type &type = op.operand(0)->type();
  double n = static_cast<double>(op.has_attr("axis")
                                     ? type.dim(int(op.int_attr("axis")))
                                     : type.num_elements());
  size_t k = op.num_operands();
  const ir::Block &combine = *op.region(0);
  for (size_t i = 0; i < k; ++i) {
    facts_[combine.argument(i)] = get(op.operand(i));
    facts_[combine.argument(k + i)] = get(op.operand(i));
  }
  std::string reason = evaluate_block(combine);
  if (!reason.empty())
    return "combine region: " + reason;
  const ir::Operation *yield = combine.terminator();
  const ir::Operation *combiner = yield->operand(0)->defining_op();
  OpCode c = combiner ? combiner->code() : OpCode::Yield;
  // Combines of several operands pick one element's values (argmax); sums,
  // min/max and bitwise folds have the bounds below. Any other combine gets
  // the facts that are closed under it.
  bool known = k > 1 || c == OpCode::Minimum || c == OpCode::Maximum ||
               c == OpCode::Select || c == OpCode::Add || c == OpCode::Xor ||
               c == OpCode::Or || c == OpCode::And;
  std::vector<ValueFacts> closed;
  if (!known) {
    reason = close_under_combine(op, closed);
    if (!reason.empty())
      return "combine region: " + reason;
  }
  for (size_t i = 0; i < k; ++i) {
    const ValueFacts &a = get(op.operand(i));
    Scalar s = op.operand(i)->type().element();
    ValueFacts f;
    if (a.special && k > 1) // argmax: NaN breaks the order of the combine
      return "argmax/argmin of values that may be NaN";
    if (k > 1 || c == OpCode::Minimum || c == OpCode::Maximum ||
        c == OpCode::Select) {
      f = a; // the combine picks one of the elements
    } else if (c == OpCode::Add && ir::is_float(s)) {
      // A prefix of up to n elements, summed in any order.
      const FloatLimits &l = float_limits(s);
      double lo = std::min(a.lo, n * a.lo), hi = std::max(a.hi, n * a.hi);
      double m = n * a.magnitude();
      if (a.exact() && representable(l, m, a.quantum))
        f = {lo, hi, 0, a.quantum, a.special};
      else
        f = {lo, hi,
             n * a.error + (n - 1) * l.unit_roundoff * m +
                 n * l.smallest_subnormal,
             0, a.special};
    } else if (c == OpCode::Add) {
      f = integer_result(s, std::min(a.lo, n * a.lo), std::max(a.hi, n * a.hi));
    } else if ((c == OpCode::Xor || c == OpCode::Or) && a.lo >= 0) {
      f = ValueFacts::range(0, all_ones_above(a.hi));
    } else if (c == OpCode::And && a.lo >= 0) {
      f = ValueFacts::range(0, a.hi);
    } else if (c == OpCode::Xor || c == OpCode::Or || c == OpCode::And) {
      f = full_range(s);
    } else {
      f = closed[i];
    }
    const ir::Value *v = op.result(i);
    if (is_computable_float(s)) {
      const FloatLimits &l = float_limits(s);
      if (!(f.magnitude() + f.error <= l.max_magnitude) ||
          !(f.error <=
            l.max_error_ulps * l.unit_roundoff * std::max(f.magnitude(), 1.0)))
        return "reduction result " + f.str() + " out of limits";
    }
    facts_[v] = f;
  }
  return "";
}

std::string
FactsAnalysis::close_under_combine(const ir::Operation &op,
                                   std::vector<ValueFacts> &closed) {
  // Facts holding the elements and every combination of two values they
  // hold hold every value any order of combination makes, however deep its
  // tree. Widen the elements' facts by their combinations until a round
  // adds nothing.
  const ir::Block &combine = *op.region(0);
  size_t k = op.num_operands();
  closed.clear();
  for (size_t i = 0; i < k; ++i)
    closed.push_back(get(op.operand(i)));
  auto same = [](const ValueFacts &a, const ValueFacts &b) {
    return a.lo == b.lo && a.hi == b.hi && a.error == b.error &&
           a.quantum == b.quantum && a.special == b.special;
  };
  for (int round = 0; round < kMaxCombineRounds; ++round) {
    for (size_t i = 0; i < k; ++i) {
      facts_[combine.argument(i)] = closed[i];
      facts_[combine.argument(k + i)] = closed[i];
    }
    std::string reason = evaluate_block(combine);
    if (!reason.empty())
      return reason;
    bool grew = false;
    for (size_t i = 0; i < k; ++i) {
      ValueFacts wider = hull(closed[i], get(combine.terminator()->operand(i)));
      grew = grew || !same(wider, closed[i]);
      closed[i] = wider;
    }
    if (!grew)
      return "";
  }
  return "values that keep growing with every combination";
}

std::string FactsAnalysis::evaluate_dot(const ir::Operation &op) {
  // acc + sum over k of a * b, after converting a and b to the
  // accumulator's type (exact here: the generator only widens).
  const ValueFacts &a = get(op.operand(0)), &b = get(op.operand(1)),
                   &acc = get(op.operand(2));
  if (a.special || b.special || acc.special)
    return "dot of values that may be inf or NaN";
  const ir::Type &a_type = op.operand(0)->type();
  double k = static_cast<double>(a_type.dim(a_type.rank() - 1));
  Scalar s = op.result()->type().element();
  Corners p = product_range(a, b);
  double lo = acc.lo + k * p.lo;
  double hi = acc.hi + k * p.hi;
  if (!ir::is_float(s))
    return define(op, integer_result(s, lo, hi));
  const FloatLimits &l = float_limits(s);
  double total = acc.magnitude() + k * a.magnitude() * b.magnitude();
  int quantum = std::min(a.quantum + b.quantum, acc.quantum);
  if (a.exact() && b.exact() && acc.exact() && representable(l, total, quantum))
    return define(op, {lo, hi, 0, quantum});
  // Products and partial sums each rounded (an fma per step, or a multiply
  // and an add), in any order.
  double propagated =
      acc.error + k * (a.magnitude() * b.error + b.magnitude() * a.error +
                       a.error * b.error);
  double rounding =
      2 * k * l.unit_roundoff * total + 2 * k * l.smallest_subnormal;
  return define(op, {lo, hi, propagated + rounding, 0});
}

std::string FactsAnalysis::evaluate_for(const ir::Operation &op) {
  const ValueFacts &lb = get(op.operand(0)), &ub = get(op.operand(1)),
                   &step = get(op.operand(2));
  // iv = lb, lb + step, ... while iv < ub (step > 0) or iv > ub (step < 0).
  if (step.lo != step.hi || step.lo == 0)
    return "loop step is not a nonzero constant";
  bool up = step.lo > 0;
  double trips = std::max(0.0, std::ceil((up ? ub.hi - lb.lo : lb.hi - ub.lo) /
                                         std::fabs(step.lo)));
  if (trips > kMaxTrips)
    return "loop may run too many iterations";
  const ir::Block &body = *op.region(0);
  size_t carried = op.num_operands() - 3;
  std::vector<ValueFacts> state, all;
  for (size_t i = 0; i < carried; ++i)
    state.push_back(get(op.operand(3 + i)));
  all = state;
  facts_[body.argument(0)] =
      up ? ValueFacts::range(lb.lo, std::max(lb.lo, ub.hi - 1))
         : ValueFacts::range(std::min(lb.hi, ub.lo + 1), lb.hi);
  // Each iteration's facts follow from the previous one's, so each
  // iteration is checked with the facts it really sees.
  for (int64_t t = 0; t < static_cast<int64_t>(trips); ++t) {
    for (size_t i = 0; i < carried; ++i)
      facts_[body.argument(i + 1)] = state[i];
    std::string reason = evaluate_block(body);
    if (!reason.empty())
      return "loop body (iteration " + std::to_string(t) + "): " + reason;
    const ir::Operation *yield = body.terminator();
    for (size_t i = 0; i < carried; ++i) {
      state[i] = get(yield->operand(i));
      all[i] = hull(all[i], state[i]);
    }
  }
  if (trips == 0) { // still give the body's values facts
    for (size_t i = 0; i < carried; ++i)
      facts_[body.argument(i + 1)] = state[i];
    std::string reason = evaluate_block(body);
    if (!reason.empty())
      return "loop body: " + reason;
  }
  for (size_t i = 0; i < carried; ++i)
    facts_[op.result(i)] = all[i];
  return "";
}

std::string FactsAnalysis::evaluate_if(const ir::Operation &op) {
  std::vector<ValueFacts> results;
  for (size_t r = 0; r < 2; ++r) {
    const ir::Block &region = *op.region(r);
    std::string reason = evaluate_block(region);
    if (!reason.empty())
      return (r == 0 ? "then: " : "else: ") + reason;
    const ir::Operation *yield = region.terminator();
    for (size_t i = 0; i < op.num_results(); ++i) {
      const ValueFacts &f = get(yield->operand(i));
      if (r == 0)
        results.push_back(f);
      else
        results[i] = hull(results[i], f);
    }
  }
  for (size_t i = 0; i < op.num_results(); ++i)
    facts_[op.result(i)] = results[i];
  return "";
}

} // namespace blocc::differential
