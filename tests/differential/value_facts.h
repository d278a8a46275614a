// What the kernel generator knows about every value it builds: bounds on the
// exact (infinitely precise) value of each element, and how far a correct
// executor's result may lie from it. The generator consults these facts to
// build only kernels whose results two correct executors must agree on
// (no division by zero, no log of a negative number, no float comparison
// that rounding could flip, no magnitude near overflow), and the harness
// derives each output's comparison tolerance from them.
//
// The error model is a forward error analysis with static bounds. Every
// float op adds the rounding of its format (u = 2^-precision of the result
// magnitude, plus one subnormal step for underflow) to what its operands'
// errors become through it (a Lipschitz bound over the operands' ranges).
// Math functions (exp, log, tanh, ...) may be approximations: they get
// kMathUlps units in the last place. Sums over n elements get the bound of
// any summation order, (n - 1) u sum|x|, so a backend may reduce in a tree;
// any other combine gets facts closed under it (combining two values they
// hold gives a value they hold), which hold for every order too.
//
// Special values: some kernels also get infinities and NaNs, in inputs and
// constants, to check the IEEE rules of every executor (NaN ignored by
// min/max, unordered compares, inf - inf) and of constant folding.
//
// Exactness: inputs and constants are multiples of 2^quantum with few
// significant bits, so many float ops (add, mul, fma, min, casts) have an
// exactly representable result; such results have error 0, and only exact
// floats may be compared, floored or converted to integers, since there a
// one-ulp difference would change the answer completely.
#pragma once

#include "ir/function.h"
#include "runtime/kernel_args.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace blocc::differential {

struct ValueFacts {
  /// Bounds of the exact value of every element (integers: of the value;
  /// pointers: of the values in the buffer they point into).
  double lo = 0, hi = 0;
  /// |computed - exact| <= error for every correct executor; 0 means every
  /// correct executor computes the exact value.
  double error = 0;
  /// Exact floats: every element is a multiple of 2^quantum.
  int quantum = 0;
  /// Floats: some elements may be +-inf or NaN. The other fields describe
  /// the finite elements; only ops whose IEEE results are fully defined
  /// (+ - * / fma, min/max, abs, neg, floor, ceil, select, compares, float
  /// casts, sums) accept such values.
  bool special = false;

  bool exact() const { return error == 0; }
  double magnitude() const;
  /// "[-4, 4] +- 0.001" or "[-4, 4] exact (multiples of 2^-4)".
  std::string str() const;

  static ValueFacts range(double lo, double hi, int quantum = 0) {
    return {lo, hi, 0, quantum};
  }
};

/// The smallest interval and the largest error holding both.
ValueFacts hull(const ValueFacts &a, const ValueFacts &b);

/// The quantum of a float constant: the exponent of its lowest set bit.
int quantum_of(double value);

/// What the facts of a float result may reach before the generator rejects
/// the op that produced it.
struct FloatLimits {
  int precision;        // significand bits, the implicit one included
  double unit_roundoff; // 2^-precision
  double smallest_subnormal;
  double max_magnitude;  // far below the format's largest finite value
  double max_error_ulps; // error / (unit_roundoff * max(|x|, 1))
};
/// For f16, bf16, f32, f64.
const FloatLimits &float_limits(ir::Scalar s);

/// The range of an integer type, as doubles.
double integer_min(ir::Scalar s);
double integer_max(ir::Scalar s);

/// Units in the last place allowed to each math function (exp, log, ...).
constexpr double kMathUlps = 4;

/// How often the facts of a custom combine may widen before it is given up.
constexpr int kMaxCombineRounds = 8;

/// Derives facts for the ops of a function as they are built, from the
/// facts of function arguments and of the grid.
class FactsAnalysis {
public:
  explicit FactsAnalysis(Grid grid) : grid_(grid) {}

  bool known(const ir::Value *v) const { return facts_.count(v) != 0; }
  const ValueFacts &get(const ir::Value *v) const;
  void set(const ir::Value *v, const ValueFacts &f) { facts_[v] = f; }

  /// Derives the facts of `op`'s results (and of every value in its
  /// regions) from its operands' facts, which must be known. Returns ""
  /// when the op is admissible, else why not (a value two correct
  /// executors could disagree on, a possible division by zero, ...).
  std::string evaluate(const ir::Operation &op);

private:
  std::string evaluate_block(const ir::Block &block);
  std::string evaluate_elementwise(const ir::Operation &op);
  std::string evaluate_cast(const ir::Operation &op);
  std::string evaluate_collective(const ir::Operation &op);
  /// The facts of each operand of reduce/scan `op` widened until combining
  /// two values they hold gives a value they hold.
  std::string close_under_combine(const ir::Operation &op,
                                  std::vector<ValueFacts> &closed);
  std::string evaluate_dot(const ir::Operation &op);
  std::string evaluate_for(const ir::Operation &op);
  std::string evaluate_if(const ir::Operation &op);
  std::string define(const ir::Operation &op, const ValueFacts &f);

  Grid grid_;
  std::unordered_map<const ir::Value *, ValueFacts> facts_;
};

} // namespace blocc::differential
