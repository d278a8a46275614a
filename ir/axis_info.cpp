#include "ir/axis_info.h"

#include "ir/error.h"
#include "ir/passes/constant_element.h"
#include "ir/printer.h"

#include <algorithm>

namespace blocc::ir {

namespace {

constexpr int64_t kMax = AxisInfo::kMaxDivisibility;

/// A loop's carried facts shrink at every round of the fixed point; after
/// this many rounds they are given up on (set to unknown), which bounds the
/// work for deep nests of loops.
constexpr int kMaxLoopRounds = 8;

/// The largest power of two dividing v (the element's bit pattern, so that
/// negative values count like their magnitude); 0 gives kMax.
int64_t power_of_two_part(int64_t v) {
  uint64_t u = static_cast<uint64_t>(v);
  if (u == 0)
    return kMax;
  uint64_t lowest_bit = u & (~u + 1);
  return lowest_bit >= static_cast<uint64_t>(kMax)
             ? kMax
             : static_cast<int64_t>(lowest_bit);
}

/// Every fact is a power of two, so their gcd is their minimum.
int64_t gcd(int64_t a, int64_t b) { return std::min(a, b); }
int64_t gcd(int64_t a, int64_t b, int64_t c) { return gcd(gcd(a, b), c); }

int64_t saturating_multiply(int64_t a, int64_t b) {
  if (b != 0 && a > kMax / b)
    return kMax;
  return std::min(a * b, kMax);
}

std::vector<int64_t> dims_of(const Type &t) {
  return t.is_block() ? t.shape() : std::vector<int64_t>{1};
}

/// How far apart consecutive elements are in the unit divisibility counts:
/// the pointee's size in bytes for pointers, 1 for integers.
int64_t step_of(const Type &t) {
  if (!t.is_pointer())
    return 1;
  return std::max(1, scalar_bits(t.pointee()) / 8);
}

/// A power of two dividing the elements of `x` at the positions along `d`
/// that are multiples of g (g a power of two). Those are starts of x's own
/// runs when x's runs are no longer than g; inside a longer run they are
/// first + j*g steps, which only gcd(v, g*step) divides.
int64_t divisibility_at(const AxisInfo &x, int d, int64_t g, int64_t step) {
  if (x.contiguity[d] <= g)
    return x.divisibility[d];
  return gcd(x.divisibility[d], saturating_multiply(g, step));
}

/// A power of two dividing every element.
int64_t element_divisibility(const AxisInfo &x, int64_t step) {
  int64_t best = 1;
  for (int d = 0; d < x.rank(); ++d)
    best = std::max(best, divisibility_at(x, d, 1, step));
  return best;
}

/// Facts that hold for both `a` and `b` (a value that is one or the other,
/// e.g. a loop-carried value or the result of an `if`).
AxisInfo join(const AxisInfo &a, const AxisInfo &b, int64_t step) {
  AxisInfo r = a;
  for (int d = 0; d < a.rank(); ++d) {
    r.contiguity[d] = gcd(a.contiguity[d], b.contiguity[d]);
    r.divisibility[d] = gcd(divisibility_at(a, d, r.contiguity[d], step),
                            divisibility_at(b, d, r.contiguity[d], step));
    r.constancy[d] = gcd(a.constancy[d], b.constancy[d]);
  }
  if (a.constant_value != b.constant_value)
    r.constant_value.reset();
  return r;
}

AxisInfo constant_info(const Type &t, int64_t value) {
  AxisInfo r = AxisInfo::unknown(t);
  r.constancy = dims_of(t);
  for (auto &v : r.divisibility)
    v = power_of_two_part(value);
  r.constant_value = value;
  return r;
}

/// Keeps the facts within what they can mean for a value of type t: powers
/// of two, runs no longer than the dimension, and for values that are not
/// integers or pointers only constancy (contiguity and divisibility speak
/// about numbers that can be added to addresses).
void normalize(AxisInfo &info, const Type &t) {
  auto dims = dims_of(t);
  bool addressable = t.is_integer() || t.is_pointer();
  for (int d = 0; d < info.rank(); ++d) {
    auto clamp = [](int64_t v, int64_t limit) {
      v = std::max<int64_t>(v, 1);
      return std::min(power_of_two_part(v), limit);
    };
    info.contiguity[d] = addressable ? clamp(info.contiguity[d], dims[d]) : 1;
    info.constancy[d] = clamp(info.constancy[d], dims[d]);
    info.divisibility[d] = addressable ? clamp(info.divisibility[d], kMax) : 1;
    // A run of one element is both contiguous and constant, trivially.
    if (dims[d] == 1)
      info.contiguity[d] = info.constancy[d] = 1;
  }
  if (!t.is_integer())
    info.constant_value.reset();
}

/// Computes the facts of every value, in program order; loops iterate to a
/// fixed point.
class AxisInfoTransfer {
public:
  AxisInfoTransfer(const Function &f,
                   std::unordered_map<const Value *, AxisInfo> &infos)
      : function_(f), infos_(infos) {}

  void run() {
    for (size_t i = 0; i < function_.num_arguments(); ++i) {
      Value *arg = function_.argument(i);
      AxisInfo a = AxisInfo::unknown(arg->type());
      int64_t divisor = function_.argument_info(i).divisibility;
      for (auto &v : a.divisibility)
        v = divisor >= 1 ? power_of_two_part(divisor) : 1;
      set(arg, a);
    }
    analyze_block(function_.body());
  }

private:
  const AxisInfo &info(const Value *v) {
    auto it = infos_.find(v);
    if (it == infos_.end())
      it = infos_.emplace(v, AxisInfo::unknown(v->type())).first;
    return it->second;
  }

  void set(const Value *v, AxisInfo a) {
    normalize(a, v->type());
    infos_[v] = std::move(a);
  }

  void set_unknown(const Value *v) { set(v, AxisInfo::unknown(v->type())); }

  void analyze_block(const Block &block) {
    for (auto &op : block.ops())
      analyze_op(*op);
  }

  void analyze_op(const Operation &op) {
    switch (op.code()) {
    case OpCode::For:
      return analyze_for(op);
    case OpCode::If:
      return analyze_if(op);
    case OpCode::Reduce:
    case OpCode::Scan:
      for (size_t r = 0; r < op.num_regions(); ++r) {
        for (Value *arg : op.region(r)->arguments())
          set_unknown(arg);
        analyze_block(*op.region(r));
      }
      for (Value *v : op.results())
        set_unknown(v);
      return;
    default:
      break;
    }
    if (op.num_results() != 1) {
      for (Value *v : op.results())
        set_unknown(v);
      return;
    }
    set(op.result(), transfer(op));
  }

  void analyze_for(const Operation &op) {
    Block *body = op.region(0);
    size_t carried = op.num_results();
    // iv = lb + i * step: every value is a multiple of what divides both.
    AxisInfo iv = AxisInfo::unknown(body->argument(0)->type());
    iv.divisibility[0] = gcd(element_divisibility(info(op.operand(0)), 1),
                             element_divisibility(info(op.operand(2)), 1));
    set(body->argument(0), iv);
    for (size_t i = 0; i < carried; ++i)
      set(body->argument(i + 1), info(op.operand(3 + i)));
    for (int round = 0;; ++round) {
      analyze_block(*body);
      Operation *yield = body->terminator();
      bool stable = true;
      for (size_t i = 0; i < carried; ++i) {
        Value *arg = body->argument(i + 1);
        AxisInfo joined =
            join(info(arg), info(yield->operand(i)), step_of(arg->type()));
        normalize(joined, arg->type());
        if (joined != info(arg)) {
          stable = false;
          set(arg, joined);
        }
      }
      if (stable)
        break;
      if (round == kMaxLoopRounds) {
        for (size_t i = 0; i < carried; ++i)
          set_unknown(body->argument(i + 1));
        analyze_block(*body);
        break;
      }
    }
    // After the loop a carried value is its initial value (no iteration)
    // or a yielded one: the fixed point covers both.
    for (size_t i = 0; i < carried; ++i)
      set(op.result(i), info(body->argument(i + 1)));
  }

  void analyze_if(const Operation &op) {
    analyze_block(*op.region(0));
    analyze_block(*op.region(1));
    Operation *then_yield = op.region(0)->terminator();
    Operation *else_yield = op.region(1)->terminator();
    for (size_t i = 0; i < op.num_results(); ++i) {
      Value *r = op.result(i);
      set(r, join(info(then_yield->operand(i)), info(else_yield->operand(i)),
                  step_of(r->type())));
    }
  }

  // --- single-result ops ---------------------------------------------------

  AxisInfo transfer(const Operation &op) {
    const Type &t = op.result()->type();
    switch (op.code()) {
    case OpCode::Constant: {
      auto it = op.attributes().find("value");
      if (t.is_integer() && it != op.attributes().end())
        if (const auto *v = std::get_if<int64_t>(&it->second))
          return constant_info(t, wrap_integer(*v, t.element()));
      AxisInfo r = AxisInfo::unknown(t);
      r.constancy = dims_of(t);
      return r;
    }
    case OpCode::Arange: {
      int64_t start = op.int_attr("start");
      AxisInfo r = AxisInfo::unknown(t);
      r.contiguity = {t.dim(0)};
      r.divisibility = {power_of_two_part(start)};
      if (t.dim(0) == 1)
        r.constant_value = start;
      return r;
    }
    case OpCode::Splat: {
      const AxisInfo &x = info(op.operand(0));
      AxisInfo r = AxisInfo::unknown(t);
      r.constancy = dims_of(t);
      for (auto &v : r.divisibility)
        v = x.divisibility[0];
      r.constant_value = x.constant_value;
      return r;
    }
    case OpCode::Broadcast:
      return transfer_broadcast(op);
    case OpCode::ExpandDims:
      return transfer_expand_dims(op);
    case OpCode::Reshape:
      return transfer_reshape(op);
    case OpCode::Permute: {
      const AxisInfo &x = info(op.operand(0));
      AxisInfo r = AxisInfo::unknown(t);
      const auto &order = op.ints_attr("order");
      for (size_t d = 0; d < order.size(); ++d) {
        r.contiguity[d] = x.contiguity[order[d]];
        r.divisibility[d] = x.divisibility[order[d]];
        r.constancy[d] = x.constancy[order[d]];
      }
      r.constant_value = x.constant_value;
      return r;
    }
    case OpCode::Cast:
    case OpCode::Bitcast:
    case OpCode::PtrToInt:
    case OpCode::IntToPtr:
      return transfer_conversion(op);
    case OpCode::Load: {
      // Equal addresses under an equal mask (and equal `other`) load equal
      // values; nothing is known about the values themselves.
      AxisInfo r = AxisInfo::unknown(t);
      r.constancy = common_constancy(op);
      return r;
    }
    case OpCode::ConvertLayout: // the same elements
      return info(op.operand(0));
    case OpCode::MultipleOf:
    case OpCode::MaxContiguous:
    case OpCode::MaxConstancy:
      return transfer_hint(op);
    case OpCode::AddPtr:
    case OpCode::Add:
    case OpCode::Sub:
    case OpCode::Mul:
    case OpCode::Div:
    case OpCode::Rem:
    case OpCode::And:
    case OpCode::Or:
    case OpCode::Xor:
    case OpCode::Shl:
    case OpCode::Shr:
    case OpCode::Minimum:
    case OpCode::Maximum:
      return transfer_binary(op);
    case OpCode::Cmp:
      return transfer_cmp(op);
    case OpCode::Select:
      return transfer_select(op);
    case OpCode::Neg:
    case OpCode::Abs: {
      // -x and |x| are multiples of whatever divides x.
      AxisInfo r = AxisInfo::unknown(t);
      r.constancy = common_constancy(op);
      if (t.is_integer()) {
        const AxisInfo &x = info(op.operand(0));
        for (int d = 0; d < r.rank(); ++d)
          r.divisibility[d] = divisibility_at(x, d, 1, 1);
        if (auto folded = fold_constants(op))
          return *folded;
      }
      return r;
    }
    default:
      break;
    }
    AxisInfo r = AxisInfo::unknown(t);
    if (is_elementwise(op.code())) {
      r.constancy = common_constancy(op);
      if (auto folded = fold_constants(op))
        return *folded;
    }
    return r;
  }

  /// An elementwise op maps equal inputs to equal outputs, so its result is
  /// constant wherever all its operands are.
  std::vector<int64_t> common_constancy(const Operation &op) {
    std::vector<int64_t> k = dims_of(op.result()->type());
    for (const Value *v : op.operands()) {
      const AxisInfo &x = info(v);
      for (int d = 0; d < x.rank() && d < static_cast<int>(k.size()); ++d)
        k[d] = gcd(k[d], x.constancy[d]);
    }
    return k;
  }

  /// The result when every operand is a known integer constant.
  std::optional<AxisInfo> fold_constants(const Operation &op) {
    const Type &t = op.result()->type();
    std::vector<ConstantElement> args;
    for (const Value *v : op.operands()) {
      const AxisInfo &x = info(v);
      if (!x.constant_value || !v->type().is_integer())
        return std::nullopt;
      args.push_back(ConstantElement::of_integer(*x.constant_value));
    }
    Scalar s = op.operand(0)->type().element();
    std::optional<ConstantElement> r;
    if (op.code() == OpCode::Cmp)
      r = fold_compare(op.string_attr("predicate"), s, args[0], args[1]);
    else if (op.code() == OpCode::Cast)
      r = fold_cast(s, t.element(), args[0]);
    else if (args.size() == 1)
      r = fold_unary(op.code(), s, args[0]);
    else if (args.size() == 2)
      r = fold_binary(op.code(), s, args[0], args[1]);
    if (!r || r->is_float || !t.is_integer())
      return std::nullopt;
    return constant_info(t, r->integer);
  }

  AxisInfo transfer_broadcast(const Operation &op) {
    const Type &t = op.result()->type();
    const Type &from = op.operand(0)->type();
    AxisInfo r = info(op.operand(0));
    for (int d = 0; d < t.rank(); ++d)
      if (from.dim(d) == 1 && t.dim(d) != 1) {
        // A size-1 dimension repeated: one constant run over the new size.
        r.contiguity[d] = 1;
        r.constancy[d] = t.dim(d);
      }
    return r;
  }

  AxisInfo transfer_expand_dims(const Operation &op) {
    const Type &t = op.result()->type();
    const Type &from = op.operand(0)->type();
    const AxisInfo &x = info(op.operand(0));
    if (!from.is_block())
      return x; // a scalar and a tensor<1x..> are described alike
    AxisInfo r = x;
    auto at = static_cast<long>(op.int_attr("axis"));
    // The new dimension has size 1: every element is its own run.
    r.contiguity.insert(r.contiguity.begin() + at, 1);
    r.constancy.insert(r.constancy.begin() + at, 1);
    r.divisibility.insert(r.divisibility.begin() + at,
                          element_divisibility(x, step_of(t)));
    return r;
  }

  AxisInfo transfer_reshape(const Operation &op) {
    const Type &t = op.result()->type();
    const Type &from = op.operand(0)->type();
    const AxisInfo &x = info(op.operand(0));
    // Adding or dropping size-1 dimensions keeps every other dimension's
    // runs as they are.
    std::vector<int> kept_from, kept_to;
    auto from_dims = dims_of(from), to_dims = dims_of(t);
    for (size_t d = 0; d < from_dims.size(); ++d)
      if (from_dims[d] != 1)
        kept_from.push_back(static_cast<int>(d));
    for (size_t d = 0; d < to_dims.size(); ++d)
      if (to_dims[d] != 1)
        kept_to.push_back(static_cast<int>(d));
    bool same_runs = kept_from.size() == kept_to.size();
    for (size_t i = 0; same_runs && i < kept_from.size(); ++i)
      same_runs = from_dims[kept_from[i]] == to_dims[kept_to[i]];
    AxisInfo r = AxisInfo::unknown(t);
    int64_t every = element_divisibility(x, step_of(t));
    if (same_runs) {
      for (int d = 0; d < r.rank(); ++d)
        r.divisibility[d] = every;
      for (size_t i = 0; i < kept_from.size(); ++i) {
        r.contiguity[kept_to[i]] = x.contiguity[kept_from[i]];
        r.divisibility[kept_to[i]] = x.divisibility[kept_from[i]];
        r.constancy[kept_to[i]] = x.constancy[kept_from[i]];
      }
    } else {
      bool all_equal = true;
      for (int d = 0; d < x.rank(); ++d)
        all_equal &= x.constancy[d] == from_dims[d];
      for (int d = 0; d < r.rank(); ++d) {
        r.divisibility[d] = every;
        if (all_equal)
          r.constancy[d] = to_dims[d];
      }
    }
    r.constant_value = x.constant_value;
    return r;
  }

  AxisInfo transfer_conversion(const Operation &op) {
    const Type &t = op.result()->type();
    const Type &from = op.operand(0)->type();
    AxisInfo r = AxisInfo::unknown(t);
    r.constancy = info(op.operand(0)).constancy;
    bool from_number = from.is_integer() && !from.is_bool();
    bool to_number = t.is_integer() && !t.is_bool();
    bool keeps_value =
        (from_number && to_number &&
         (op.code() == OpCode::Cast ||
          scalar_bits(from.element()) == scalar_bits(t.element()))) ||
        op.code() == OpCode::PtrToInt || op.code() == OpCode::IntToPtr ||
        (from.is_pointer() && t.is_pointer());
    if (!keeps_value) {
      if (auto folded = fold_constants(op))
        return *folded;
      return r;
    }
    // Integer casts keep the values (wrap-around ignored, as everywhere);
    // between integers and pointers the divisibility is in bytes either
    // way, but a run of +1 steps is a run of elements only when elements
    // are one byte apart.
    const AxisInfo &x = info(op.operand(0));
    r.divisibility = x.divisibility;
    if (step_of(from) == step_of(t))
      r.contiguity = x.contiguity;
    if (from_number && to_number) {
      if (auto folded = fold_constants(op))
        return *folded;
      r.constant_value = x.constant_value;
    }
    return r;
  }

  AxisInfo transfer_hint(const Operation &op) {
    AxisInfo r = info(op.operand(0));
    const auto &values = op.ints_attr("values");
    std::vector<int64_t> *field =
        op.code() == OpCode::MultipleOf      ? &r.divisibility
        : op.code() == OpCode::MaxContiguous ? &r.contiguity
                                             : &r.constancy;
    // The hint and the derived fact both hold; keep the stronger. (A longer
    // run only drops run starts, so divisibility facts stay true.)
    for (size_t d = 0; d < values.size() && d < field->size(); ++d)
      (*field)[d] = std::max((*field)[d], power_of_two_part(values[d]));
    return r;
  }

  AxisInfo transfer_binary(const Operation &op) {
    const Type &t = op.result()->type();
    AxisInfo r = AxisInfo::unknown(t);
    r.constancy = common_constancy(op);
    if (!t.is_integer() && op.code() != OpCode::AddPtr)
      return r;
    if (auto folded = fold_constants(op))
      return *folded;
    const AxisInfo &a = info(op.operand(0));
    const AxisInfo &b = info(op.operand(1));
    int64_t step = step_of(t);
    bool pointer = op.code() == OpCode::AddPtr;
    std::optional<int64_t> a_const = a.constant_value;
    std::optional<int64_t> b_const = b.constant_value;
    for (int d = 0; d < r.rank(); ++d) {
      int64_t &c = r.contiguity[d];
      int64_t &v = r.divisibility[d];
      int64_t &k = r.constancy[d];
      // Positions that start the result's runs; the operands' elements
      // there are divisible by:
      auto at_a = [&] { return divisibility_at(a, d, c, pointer ? step : 1); };
      auto at_b = [&] { return divisibility_at(b, d, c, 1); };
      switch (op.code()) {
      case OpCode::AddPtr:
      case OpCode::Add:
        // A run plus a constant stretch is a run.
        c = std::max(gcd(a.contiguity[d], b.constancy[d]),
                     gcd(a.constancy[d], b.contiguity[d]));
        v = gcd(at_a(), pointer ? saturating_multiply(at_b(), step) : at_b());
        break;
      case OpCode::Sub:
        c = gcd(a.contiguity[d], b.constancy[d]);
        v = gcd(at_a(), at_b());
        break;
      case OpCode::Mul:
        if (b_const == 1)
          c = a.contiguity[d];
        else if (a_const == 1)
          c = b.contiguity[d];
        v = saturating_multiply(at_a(), at_b());
        if (a_const == 0 || b_const == 0) {
          r = constant_info(t, 0);
          return r;
        }
        break;
      case OpCode::Div:
        if (b_const == 1) {
          c = a.contiguity[d];
          v = a.divisibility[d];
        } else if (b_const && *b_const > 0) {
          // A multiple of 2^m divided exactly by 2^j is a multiple of
          // 2^(m-j), negative or not.
          int64_t e = divisibility_at(a, d, 1, 1);
          if (power_of_two_part(*b_const) == *b_const && e >= *b_const)
            v = e / *b_const;
          // Runs of a with aligned starts fall into one quotient in
          // stretches of gcd(run, alignment, divisor's power of two).
          if (a.contiguity[d] > 1 && b.constancy[d] >= a.contiguity[d])
            k = std::max(k, gcd(a.contiguity[d], a.divisibility[d],
                                power_of_two_part(*b_const)));
        }
        break;
      case OpCode::Rem:
        if (b_const && *b_const > 0 && a.contiguity[d] > 1 &&
            b.constancy[d] >= a.contiguity[d])
          // x % p over an aligned stretch of a run that no multiple of p
          // cuts stays a run.
          c = gcd(a.contiguity[d], a.divisibility[d],
                  power_of_two_part(*b_const));
        // x % y = x - q*y: a multiple of what divides both.
        v = gcd(at_a(), at_b());
        if (b_const == 1) {
          r = constant_info(t, 0);
          return r;
        }
        break;
      case OpCode::And:
        // x & (2^s - 1) is x mod 2^s, exactly, for either sign.
        if (b_const && a.contiguity[d] > 1 &&
            b.constancy[d] >= a.contiguity[d] && *b_const >= 0 &&
            power_of_two_part(*b_const + 1) == *b_const + 1)
          c = gcd(a.contiguity[d], a.divisibility[d], *b_const + 1);
        // Low zero bits of either operand stay zero.
        v = std::max(at_a(), at_b());
        break;
      case OpCode::Or:
      case OpCode::Xor:
        v = gcd(at_a(), at_b());
        break;
      case OpCode::Shl:
        if (b_const == 0) {
          c = a.contiguity[d];
          v = a.divisibility[d];
        } else if (b_const && *b_const > 0 && *b_const < 62) {
          v = saturating_multiply(at_a(), int64_t{1} << *b_const);
        } else {
          v = at_a();
        }
        break;
      case OpCode::Shr:
        if (b_const == 0) {
          c = a.contiguity[d];
          v = a.divisibility[d];
        } else if (b_const && *b_const > 0 && *b_const < 62) {
          int64_t divisor = int64_t{1} << *b_const;
          v = std::max<int64_t>(1, at_a() / divisor);
          // A shift is a floor division: runs of equal quotients, for
          // negative values too.
          if (a.contiguity[d] > 1 && b.constancy[d] >= a.contiguity[d])
            k = std::max(k, gcd(a.contiguity[d], a.divisibility[d], divisor));
        }
        break;
      case OpCode::Minimum:
      case OpCode::Maximum:
        // min(s + i, t + i) = min(s, t) + i: runs aligned in both stay runs.
        c = gcd(a.contiguity[d], b.contiguity[d]);
        v = gcd(at_a(), at_b());
        break;
      default:
        break;
      }
    }
    return r;
  }

  AxisInfo transfer_cmp(const Operation &op) {
    const Type &t = op.result()->type();
    AxisInfo r = AxisInfo::unknown(t);
    r.constancy = common_constancy(op);
    if (auto folded = fold_constants(op))
      return *folded;
    if (!op.operand(0)->type().is_integer())
      return r;
    const AxisInfo &a = info(op.operand(0));
    const AxisInfo &b = info(op.operand(1));
    const std::string &p = op.string_attr("predicate");
    // A run x..x+g-1 with g | x, compared with a constant n that g divides:
    // x < n exactly when x+g-1 < n. So `run < n` and `run >= n` (and
    // `n > run`, `n <= run`) are constant over such stretches.
    auto stretch = [](const AxisInfo &run, const AxisInfo &bound, int d) {
      if (run.contiguity[d] <= 1)
        return int64_t{1};
      int64_t g = gcd(run.contiguity[d], run.divisibility[d],
                      divisibility_at(bound, d, 1, 1));
      return bound.constancy[d] >= g ? g : int64_t{1};
    };
    for (int d = 0; d < r.rank(); ++d) {
      if (p == "lt" || p == "ge")
        r.constancy[d] = std::max(r.constancy[d], stretch(a, b, d));
      if (p == "gt" || p == "le")
        r.constancy[d] = std::max(r.constancy[d], stretch(b, a, d));
    }
    return r;
  }

  AxisInfo transfer_select(const Operation &op) {
    const Type &t = op.result()->type();
    const AxisInfo &cond = info(op.operand(0));
    const AxisInfo &a = info(op.operand(1));
    const AxisInfo &b = info(op.operand(2));
    if (cond.constant_value)
      return *cond.constant_value ? a : b;
    AxisInfo r = AxisInfo::unknown(t);
    r.constancy = common_constancy(op);
    // Where the condition is constant over a stretch, the result is one of
    // the operands there, so runs common to both survive.
    int64_t step = step_of(t);
    for (int d = 0; d < r.rank(); ++d) {
      r.contiguity[d] =
          gcd(a.contiguity[d], b.contiguity[d], cond.constancy[d]);
      r.divisibility[d] = gcd(divisibility_at(a, d, r.contiguity[d], step),
                              divisibility_at(b, d, r.contiguity[d], step));
    }
    if (a.constant_value && a.constant_value == b.constant_value)
      r.constant_value = a.constant_value;
    return r;
  }

  const Function &function_;
  std::unordered_map<const Value *, AxisInfo> &infos_;
};

} // namespace

AxisInfo AxisInfo::unknown(const Type &type) {
  size_t rank = dims_of(type).size();
  AxisInfo r;
  r.contiguity.assign(rank, 1);
  r.divisibility.assign(rank, 1);
  r.constancy.assign(rank, 1);
  return r;
}

std::string AxisInfo::str() const {
  auto list = [](const std::vector<int64_t> &v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  std::string s = "contiguity=" + list(contiguity) +
                  " divisibility=" + list(divisibility) +
                  " constancy=" + list(constancy);
  if (constant_value)
    s += " constant=" + std::to_string(*constant_value);
  return s;
}

AxisInfoAnalysis::AxisInfoAnalysis(const Function &f) {
  AxisInfoTransfer(f, infos_).run();
}

bool provably_all_true(const AxisInfoAnalysis &axis_info, const Value *mask) {
  const std::optional<int64_t> &value = axis_info.get(mask).constant_value;
  return value && *value != 0;
}

const AxisInfo &AxisInfoAnalysis::get(const Value *v) const {
  auto it = infos_.find(v);
  if (it == infos_.end())
    throw Error("internal: axis info asked for a value outside the analyzed "
                "function");
  return it->second;
}

namespace {

/// Names values the way ir/printer.h documents: arguments by their usable
/// ArgumentInfo name or %argI, then op results and region arguments
/// numbered in text order (a multi-result op's results as %k#i).
class AxisInfoPrinter {
public:
  AxisInfoPrinter(const Function &f, const AxisInfoAnalysis &analysis)
      : function_(f), analysis_(analysis) {}

  std::string run() {
    std::unordered_map<std::string, bool> used;
    for (size_t i = 0; i < function_.num_arguments(); ++i) {
      const std::string &wanted = function_.argument_info(i).name;
      std::string name = "arg" + std::to_string(i);
      if (syntax::is_identifier(wanted) &&
          (!syntax::is_reserved_argument_name(wanted) || wanted == name) &&
          !used.count(wanted))
        name = wanted;
      used[name] = true;
      line("%" + name, function_.argument(i), "argument");
    }
    print_block(function_.body());
    return out_;
  }

private:
  void line(const std::string &name, const Value *v, std::string_view what) {
    out_ += name + ": " + analysis_.get(v).str() + "  // " + std::string(what) +
            "\n";
  }

  void print_block(const Block &block) {
    for (auto &op : block.ops()) {
      if (op->num_results() > 0) {
        std::string base = "%" + std::to_string(next_++);
        for (size_t i = 0; i < op->num_results(); ++i)
          line(op->num_results() == 1 ? base : base + "#" + std::to_string(i),
               op->result(i), op->name());
      }
      for (size_t r = 0; r < op->num_regions(); ++r) {
        Block *region = op->region(r);
        for (Value *arg : region->arguments())
          line("%" + std::to_string(next_++), arg,
               std::string(op->name()) + " region argument");
        print_block(*region);
      }
    }
  }

  const Function &function_;
  const AxisInfoAnalysis &analysis_;
  std::string out_;
  int next_ = 0;
};

} // namespace

std::string print_axis_info(const Function &f) {
  AxisInfoAnalysis analysis(f);
  return AxisInfoPrinter(f, analysis).run();
}

} // namespace blocc::ir
