// The random code of a generated kernel: picking operands (with the guards
// that keep them in an op's domain), elementwise arithmetic, comparisons
// and selects, casts, bitcasts, constants, and shape ops.
#include "generator_internal.h"

#include <algorithm>
#include <cmath>

namespace blocc::differential::detail {

namespace {

const std::vector<Scalar> &dtypes() {
  static const std::vector<Scalar> all = {
      Scalar::I8,  Scalar::I16,  Scalar::I32, Scalar::I64, Scalar::U32,
      Scalar::F16, Scalar::BF16, Scalar::F32, Scalar::F64};
  return all;
}
const std::vector<int> &dtype_weights() {
  static const std::vector<int> weights = {1, 1, 3, 1, 1, 2, 2, 4, 1};
  return weights;
}

constexpr double kPositive = 0x1p-4;

struct OpChoice {
  OpCode code;
  int weight;
  int arity;
  Need a = Need::Any, b = Need::Any, c = Need::Any;
};

const std::vector<OpChoice> &float_ops() {
  static const std::vector<OpChoice> ops = {
      {OpCode::Add, 6, 2},
      {OpCode::Sub, 5, 2},
      {OpCode::Mul, 5, 2},
      {OpCode::Div, 3, 2, Need::Any, Need::FloatDivisor},
      {OpCode::Rem, 1, 2, Need::Exact, Need::ExactDivisor},
      {OpCode::Minimum, 2, 2},
      {OpCode::Maximum, 2, 2},
      {OpCode::Fma, 2, 3},
      {OpCode::Neg, 1, 1},
      {OpCode::Abs, 1, 1},
      {OpCode::Exp, 1, 1, Need::Small},
      {OpCode::Exp2, 1, 1, Need::Small},
      {OpCode::Log, 1, 1, Need::Positive},
      {OpCode::Log2, 1, 1, Need::Positive},
      {OpCode::Sqrt, 1, 1, Need::Positive},
      {OpCode::Rsqrt, 1, 1, Need::Positive},
      {OpCode::Sin, 1, 1, Need::Small},
      {OpCode::Cos, 1, 1, Need::Small},
      {OpCode::Tanh, 1, 1},
      {OpCode::Erf, 1, 1},
      {OpCode::Floor, 1, 1, Need::Exact},
      {OpCode::Ceil, 1, 1, Need::Exact},
  };
  return ops;
}

const std::vector<OpChoice> &integer_ops() {
  static const std::vector<OpChoice> ops = {
      {OpCode::Add, 5, 2},
      {OpCode::Sub, 4, 2},
      {OpCode::Mul, 4, 2},
      {OpCode::Div, 2, 2, Need::Any, Need::IntDivisor},
      {OpCode::Rem, 2, 2, Need::Any, Need::IntDivisor},
      {OpCode::And, 2, 2},
      {OpCode::Or, 2, 2},
      {OpCode::Xor, 2, 2},
      {OpCode::Shl, 2, 2, Need::Any, Need::ShiftAmount},
      {OpCode::Shr, 2, 2, Need::Any, Need::ShiftAmount},
      {OpCode::Minimum, 1, 2},
      {OpCode::Maximum, 1, 2},
      {OpCode::Umulhi, 1, 2},
      {OpCode::Neg, 1, 1},
      {OpCode::Not, 1, 1},
      {OpCode::Abs, 1, 1},
  };
  return ops;
}

const std::vector<OpChoice> &mask_ops() {
  static const std::vector<OpChoice> ops = {{OpCode::And, 2, 2},
                                            {OpCode::Or, 2, 2},
                                            {OpCode::Xor, 1, 2},
                                            {OpCode::Not, 1, 1}};
  return ops;
}

const OpChoice &pick_op(Random &rng, const std::vector<OpChoice> &ops) {
  std::vector<int> weights;
  for (const OpChoice &o : ops)
    weights.push_back(o.weight);
  return ops[rng.weighted(weights)];
}

const char *random_predicate(Random &rng) {
  static const char *predicates[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  return predicates[rng.below(6)];
}

/// A value of `d` near x that `d` represents exactly: a multiple of 1/4
/// for small values, of a coarser power of two for larger ones.
double exact_near(Scalar d, double x) {
  if (!ir::is_float(d))
    return std::clamp(std::round(x), integer_min(d), integer_max(d));
  int precision = float_limits(d).precision;
  int quantum = x == 0 ? -2 : std::max(-2, std::ilogb(x) - (precision - 2));
  return std::ldexp(std::round(std::ldexp(x, -quantum)), quantum);
}

} // namespace

// --- actions -----------------------------------------------------------------

void KernelGenerator::random_actions(int count) {
  for (int i = 0; i < count; ++i)
    random_action();
}

bool KernelGenerator::random_action() {
  enum Action {
    Elementwise,
    CompareSelect,
    Cast,
    Bitcast,
    Constant,
    ShapeOp,
    Reduce,
    Scan,
    For,
    If,
    LoopLoad,
    Identity,
    Repeat,
    Dot
  };
  std::vector<int> weights = {40,
                              8,
                              8,
                              2,
                              3,
                              6,
                              7,
                              4,
                              depth_ < 2 ? 5 : 0,
                              depth_ < 2 ? 4 : 0,
                              loops_.empty() ? 0 : 8,
                              6,
                              3,
                              3};
  // A failed attempt (no admissible op) leaves nothing but unused values;
  // try a few times before giving the action up.
  for (int attempt = 0; attempt < 4; ++attempt) {
    next_line();
    bool ok = false;
    switch (rng_.weighted(weights)) {
    case Elementwise:
      ok = elementwise_action();
      break;
    case CompareSelect:
      ok = compare_select_action();
      break;
    case Cast:
      ok = cast_action();
      break;
    case Bitcast:
      ok = bitcast_action();
      break;
    case Constant:
      ok = constant_action();
      break;
    case ShapeOp:
      ok = shape_action();
      break;
    case Reduce:
      ok = reduce_action(false);
      break;
    case Scan:
      ok = reduce_action(true);
      break;
    case For:
      ok = for_action();
      break;
    case If:
      ok = if_action();
      break;
    case LoopLoad:
      ok = loop_load_action();
      break;
    case Identity:
      ok = identity_action();
      break;
    case Repeat:
      ok = repeat_action();
      break;
    case Dot:
      ok = dot_action();
      break;
    }
    if (ok)
      return true;
  }
  return false;
}

bool KernelGenerator::elementwise_action() {
  Shape shape = pick_shape();
  Scalar d = rng_.percent(6) ? Scalar::I1 : pick_dtype();
  const OpChoice &op = pick_op(rng_, d == Scalar::I1   ? mask_ops()
                                     : ir::is_float(d) ? float_ops()
                                                       : integer_ops());
  Need needs[] = {op.a, op.b, op.c};
  std::vector<Value *> operands;
  for (int i = 0; i < op.arity; ++i) {
    Value *v = operand(d, shape, needs[i]);
    if (!v)
      return false;
    operands.push_back(v);
  }
  Value *r = make(op.code, operands, type_of(d, shape));
  if (r)
    add(r);
  return r != nullptr;
}

Value *KernelGenerator::comparison(const Shape &shape) {
  Scalar d = pick_dtype();
  Value *a = operand(d, shape, Need::Exact);
  if (!a)
    return nullptr;
  Value *b = nullptr;
  if (rng_.percent(50)) {
    b = operand(d, shape, Need::Exact);
  } else {
    // Against a constant inside a's range, so that both outcomes occur.
    const ValueFacts &f = facts(a);
    double x = f.lo + (f.hi - f.lo) * rng_.unit();
    b = constant(d, shape, exact_near(d, x));
  }
  return cmp(random_predicate(rng_), a, b);
}

bool KernelGenerator::compare_select_action() {
  Shape shape = pick_shape();
  Value *condition = rng_.percent(70) ? comparison(shape)
                                      : operand(Scalar::I1, shape, Need::Any);
  if (!condition)
    return false;
  add(condition);
  Scalar d = pick_dtype();
  Value *a = operand(d, shape, Need::Any);
  Value *b = operand(d, shape, Need::Any);
  Value *r = make(OpCode::Select, {condition, a, b}, type_of(d, shape));
  if (r)
    add(r);
  return r != nullptr;
}

bool KernelGenerator::cast_action() {
  Value *v = pick_candidate(pick_dtype(), pick_shape(), Need::Any);
  if (!v)
    return false;
  Scalar to =
      rng_.percent(8) ? Scalar::I1 : dtypes()[rng_.weighted(dtype_weights())];
  if (to == v->type().element())
    return false;
  Value *r = make(OpCode::Cast, {v}, v->type().with_element(Type::scalar(to)));
  if (r)
    add(r);
  return r != nullptr;
}

bool KernelGenerator::bitcast_action() {
  // Same-width reinterpretations whose bits are defined: integers to
  // integers, exact floats to integers (never to floats: no NaN payloads).
  static const std::vector<std::pair<Scalar, Scalar>> pairs = {
      {Scalar::I32, Scalar::U32}, {Scalar::U32, Scalar::I32},
      {Scalar::F32, Scalar::I32}, {Scalar::F32, Scalar::U32},
      {Scalar::F16, Scalar::I16}, {Scalar::BF16, Scalar::I16},
      {Scalar::F64, Scalar::I64}};
  auto [from, to] = rng_.pick(pairs);
  Value *v = operand(from, pick_shape(), Need::Exact);
  if (!v)
    return false;
  Value *r =
      make(OpCode::Bitcast, {v}, v->type().with_element(Type::scalar(to)));
  if (r)
    add(r);
  return r != nullptr;
}

bool KernelGenerator::constant_action() {
  Shape shape = pick_shape();
  if (rng_.percent(30)) {
    // Grid queries and scalar arguments, splatted.
    int axis =
        static_cast<int>(rng_.below(static_cast<uint64_t>(layout_.rank)));
    Value *scalar = rng_.percent(50) ? make(OpCode::NumPrograms, {},
                                            Type::scalar(Scalar::I32),
                                            {{"axis", int64_t{axis}}})
                                     : sizes_[axis];
    Value *r = shape.empty() ? scalar
                             : make(OpCode::Splat, {scalar},
                                    type_of(scalar->type().element(), shape));
    if (r)
      add(r);
    return r != nullptr;
  }
  Scalar d = pick_dtype();
  double value;
  if (ir::is_float(d) && specials_ && rng_.percent(30)) {
    value = special_value();
  } else if (ir::is_float(d)) {
    value = static_cast<double>(rng_.between(-16, 16)) / 4;
  } else if (rng_.percent(10)) {
    value = rng_.percent(50) ? integer_min(d) : integer_max(d);
  } else {
    value = static_cast<double>(rng_.between(ir::is_signed(d) ? -20 : 0, 20));
  }
  Value *r = constant(d, shape, value);
  if (r)
    add(r);
  return r != nullptr;
}

bool KernelGenerator::shape_action() {
  std::vector<Value *> candidates;
  for (Value *v : pool_)
    if (!v->type().is_pointer())
      candidates.push_back(v);
  if (candidates.empty())
    return false;
  Value *v = rng_.pick(candidates);
  const Type &t = v->type();
  Shape s = t.shape();
  int64_t numel = t.num_elements();
  enum Kind { Widen, Transpose, Reshape, Join, Split, Cat };
  std::vector<int> weights = {s.size() == 1 ? 4 : 0,
                              s.size() == 2 ? 3 : 0,
                              s.size() == 2 || (s.size() == 1 && s[0] >= 2) ? 2
                                                                            : 0,
                              s.size() <= 2 && numel * 2 <= 256 ? 2 : 0,
                              !s.empty() && s.back() == 2 ? 2 : 0,
                              !s.empty() && numel * 2 <= 256 ? 2 : 0};
  if (std::all_of(weights.begin(), weights.end(), [](int w) { return w == 0; }))
    return false;
  Value *r = nullptr;
  switch (static_cast<Kind>(rng_.weighted(weights))) {
  case Widen: {
    // Broadcast a 1-D value to 2-D: onto the main tile where it fits,
    // else onto a few copies of itself.
    Shape to;
    int axis;
    Shape main = layout_.main_shape();
    if (layout_.rank == 2 && (s[0] == main[0] || s[0] == main[1])) {
      to = main;
      axis = s[0] == main[1] && (s[0] != main[0] || rng_.percent(50)) ? 0 : 1;
    } else {
      int64_t copies = rng_.percent(50) ? 2 : 4;
      if (s[0] * copies > 256)
        return false;
      axis = static_cast<int>(rng_.below(2));
      to = axis == 0 ? Shape{copies, s[0]} : Shape{s[0], copies};
    }
    Shape expanded = s;
    expanded.insert(expanded.begin() + axis, 1);
    Value *e = make(OpCode::ExpandDims, {v}, t.with_shape(expanded),
                    {{"axis", int64_t{axis}}});
    if (e && rng_.percent(20))
      add(e); // a [1, k] or [k, 1] value: reductions over a unit axis
    r = make(OpCode::Broadcast, {e}, t.with_shape(to));
    break;
  }
  case Transpose:
    r = make(OpCode::Permute, {v}, t.with_shape({s[1], s[0]}),
             {{"order", std::vector<int64_t>{1, 0}}});
    break;
  case Reshape: {
    Shape to;
    if (s.size() == 2)
      to = rng_.percent(50) ? Shape{s[0] * s[1]} : Shape{s[1], s[0]};
    else
      to = rng_.percent(50) ? Shape{s[0] / 2, 2} : Shape{2, s[0] / 2};
    r = make(OpCode::Reshape, {v}, t.with_shape(to));
    break;
  }
  case Join: { // interleaves two values along a new last axis of 2
    Value *other = operand(t.element(), s, Need::Any);
    Shape to = s;
    to.push_back(2);
    r = make(OpCode::Join, {v, other}, t.with_shape(to));
    break;
  }
  case Split: { // the inverse: the two halves of the last axis
    Shape to(s.begin(), s.end() - 1);
    Type half = t.with_shape(to);
    ir::Operation *op = b_.create(OpCode::Split, {v}, {half, half});
    if (!admit(op))
      return false;
    add(op->result(0));
    r = op->result(1);
    break;
  }
  case Cat: { // two values of one shape, one after the other along an axis
    Value *other = operand(t.element(), s, Need::Any);
    int64_t axis = static_cast<int64_t>(rng_.below(s.size()));
    Shape to = s;
    to[static_cast<size_t>(axis)] *= 2;
    r = make(OpCode::Cat, {v, other}, t.with_shape(to), {{"axis", axis}});
    break;
  }
  }
  if (r)
    add(r);
  return r != nullptr;
}

bool KernelGenerator::dot_action() {
  // a [m, k] times b [k, n] plus acc [m, n], with b a value of the pool or
  // a transposed one, and inputs converted exactly into the accumulator.
  std::vector<Value *> lefts;
  for (Value *v : pool_) {
    const Type &t = v->type();
    if (t.rank() == 2 && !t.is_pointer() && t.element() != Scalar::I1 &&
        t.element() != Scalar::U32)
      lefts.push_back(v);
  }
  if (lefts.empty())
    return false;
  Value *a = rng_.pick(lefts);
  const Type &at = a->type();
  Scalar d = at.element();
  int64_t m = at.dim(0), k = at.dim(1);
  std::vector<Value *> rights;
  for (Value *v : pool_)
    if (v->type().rank() == 2 && v->type().element() == d &&
        v->type().dim(0) == k)
      rights.push_back(v);
  Value *b = nullptr;
  if (!rights.empty() && rng_.percent(70)) {
    b = rng_.pick(rights);
  } else {
    // Some [n, k] value of the same type, transposed.
    std::vector<Value *> transposable;
    for (Value *v : pool_)
      if (v->type().rank() == 2 && v->type().element() == d &&
          v->type().dim(1) == k)
        transposable.push_back(v);
    Value *bt = rng_.pick(transposable); // a itself qualifies
    b = make(OpCode::Permute, {bt},
             bt->type().with_shape({k, bt->type().dim(0)}),
             {{"order", std::vector<int64_t>{1, 0}}});
  }
  if (!b)
    return false;
  int64_t n = b->type().dim(1);
  if (m * n > 256)
    return false;
  Scalar acc_type;
  switch (d) {
  case Scalar::F16:
  case Scalar::BF16:
    acc_type = rng_.percent(70) ? Scalar::F32 : d;
    break;
  case Scalar::I8:
  case Scalar::I16:
    acc_type = Scalar::I32;
    break;
  default:
    acc_type = d;
    break;
  }
  Value *acc = rng_.percent(50) ? constant(acc_type, {m, n}, 0)
                                : operand(acc_type, {m, n}, Need::Any);
  Value *r = make(OpCode::Dot, {a, b, acc}, type_of(acc_type, {m, n}),
                  {{"input_precision", std::string("ieee")}});
  if (r)
    add(r);
  return r != nullptr;
}

Value *KernelGenerator::all_ones(Scalar d, const Shape &shape) {
  // -1 is all ones in every integer type; unsigned ones may also spell it
  // as their maximum.
  return constant(d, shape,
                  !ir::is_signed(d) && rng_.percent(50) ? integer_max(d) : -1);
}

bool KernelGenerator::identity_action() {
  // Forms canonicalize rewrites (x + 0, x * 1, x ^ x, neg(neg x), casts to
  // the same type, shape ops that change nothing, ...) and float forms it
  // must leave alone (x + 0.0, x * 0.0, x - x): the pass tests compare
  // results bit for bit, -0.0 and NaN included.
  Value *x = pick_candidate(pick_dtype(), pick_shape(), Need::Any);
  if (!x)
    return false;
  const Type &t = x->type();
  Scalar d = t.element();
  Shape s = t.shape();
  Type i1 = t.with_element(Type::scalar(Scalar::I1));
  auto k = [&](double v) { return constant(d, s, v); };
  Value *r = nullptr;
  if (ir::is_float(d)) {
    switch (rng_.below(10)) {
    case 0:
      r = make(OpCode::Mul, {x, k(1)}, t);
      break;
    case 1:
      r = make(OpCode::Div, {x, k(1)}, t);
      break;
    case 2:
      r = make(OpCode::Sub, {x, k(rng_.percent(50) ? 0.0 : -0.0)}, t);
      break;
    case 3:
      r = make(OpCode::Add, {k(rng_.percent(50) ? 0.0 : -0.0), x}, t);
      break;
    case 4:
      r = make(OpCode::Mul, {x, k(0)}, t);
      break;
    case 5:
      r = make(OpCode::Sub, {x, x}, t);
      break;
    case 6:
      r = make(OpCode::Neg, {make(OpCode::Neg, {x}, t)}, t);
      break;
    case 7:
      r = make(rng_.percent(50) ? OpCode::Minimum : OpCode::Maximum, {x, x}, t);
      break;
    case 8:
      r = make(OpCode::Cast, {x}, t);
      break;
    default:
      r = make(OpCode::Select, {operand(Scalar::I1, s, Need::Any), x, x}, t);
      break;
    }
  } else if (d == Scalar::I1) {
    switch (rng_.below(4)) {
    case 0:
      r = make(OpCode::Not, {make(OpCode::Not, {x}, t)}, t);
      break;
    case 1:
      r = make(OpCode::Select, {x, k(1), k(0)}, t);
      break;
    case 2:
      r = make(OpCode::Xor, {x, x}, t);
      break;
    default:
      r = make(OpCode::And, {x, k(1)}, t);
      break;
    }
  } else {
    switch (rng_.below(18)) {
    case 0:
      r = make(OpCode::Add, {x, k(0)}, t);
      break;
    case 1:
      r = make(OpCode::Add, {k(0), x}, t);
      break;
    case 2:
      r = make(OpCode::Sub, {x, rng_.percent(50) ? k(0) : x}, t);
      break;
    case 3:
      r = make(OpCode::Mul, {rng_.percent(50) ? k(1) : k(0), x}, t);
      break;
    case 4:
      r = make(OpCode::Div, {x, k(1)}, t);
      break;
    case 5:
      r = make(OpCode::Rem, {x, k(1)}, t);
      break;
    case 6:
      r = make(OpCode::And, {x, rng_.percent(50) ? all_ones(d, s) : k(0)}, t);
      break;
    case 7:
      r = make(OpCode::Or, {rng_.percent(50) ? all_ones(d, s) : k(0), x}, t);
      break;
    case 8:
      r = make(OpCode::Xor, {x, rng_.percent(50) ? x : k(0)}, t);
      break;
    case 9:
      r = make(rng_.percent(50) ? OpCode::And : OpCode::Or, {x, x}, t);
      break;
    case 10:
      r = make(rng_.percent(50) ? OpCode::Shl : OpCode::Shr, {x, k(0)}, t);
      break;
    case 11:
      r = make(rng_.percent(50) ? OpCode::Minimum : OpCode::Maximum, {x, x}, t);
      break;
    case 12: {
      OpCode c = rng_.percent(50) ? OpCode::Neg : OpCode::Not;
      r = make(c, {make(c, {x}, t)}, t);
      break;
    }
    case 13:
      r = make(OpCode::Cmp, {x, x}, i1,
               {{"predicate", std::string(random_predicate(rng_))}});
      break;
    case 14:
      r = make(OpCode::Cast, {x}, t);
      break;
    case 15: {
      // A round trip through the other signedness of the same width.
      Scalar other = d == Scalar::I32 ? Scalar::U32 : Scalar::I32;
      if (ir::scalar_bits(d) != 32)
        return false;
      Value *there =
          make(OpCode::Bitcast, {x}, t.with_element(Type::scalar(other)));
      r = make(OpCode::Bitcast, {there}, t);
      break;
    }
    case 16: {
      // Hints the analysis can only use if true: these are (every value
      // is a multiple of 1, runs of 1).
      static const OpCode hints[] = {OpCode::MultipleOf, OpCode::MaxContiguous,
                                     OpCode::MaxConstancy};
      std::vector<int64_t> ones(std::max<size_t>(1, s.size()), 1);
      r = make(hints[rng_.below(3)], {x}, t, {{"values", ones}});
      break;
    }
    default:
      r = make(OpCode::Select, {operand(Scalar::I1, s, Need::Any), x, x}, t);
      break;
    }
  }
  if (!r && !s.empty() && rng_.percent(50)) {
    // Shape ops that change nothing.
    if (s.size() == 2 && rng_.percent(50)) {
      Value *p = make(OpCode::Permute, {x}, t.with_shape({s[1], s[0]}),
                      {{"order", std::vector<int64_t>{1, 0}}});
      r = make(OpCode::Permute, {p}, t,
               {{"order", std::vector<int64_t>{1, 0}}});
    } else {
      r = make(rng_.percent(50) ? OpCode::Broadcast : OpCode::Reshape, {x}, t);
    }
  }
  if (r)
    add(r);
  return r != nullptr;
}

ir::Operation *
KernelGenerator::clone(const ir::Operation &op,
                       std::unordered_map<const Value *, Value *> &mapping) {
  auto mapped = [&](Value *v) {
    auto it = mapping.find(v);
    return it == mapping.end() ? v : it->second;
  };
  std::vector<Value *> operands;
  for (Value *v : op.operands())
    operands.push_back(mapped(v));
  // Commutative operands swapped: cse must still see the same value.
  if (ir::is_commutative(op.code()) && operands.size() == 2 && rng_.percent(50))
    std::swap(operands[0], operands[1]);
  std::vector<Type> types;
  for (Value *r : op.results())
    types.push_back(r->type());
  ir::Operation *copy = b_.create(op.code(), operands, types, op.attributes());
  for (size_t i = 0; i < op.num_results(); ++i)
    mapping[op.result(i)] = copy->result(i);
  for (size_t r = 0; r < op.num_regions(); ++r) {
    const ir::Block &from = *op.region(r);
    ir::Block *to = copy->add_region();
    for (Value *arg : from.arguments())
      mapping[arg] = to->add_argument(arg->type());
    ir::Block *saved_block = b_.block();
    ir::Block::iterator saved_point = b_.point();
    b_.set_insertion_point_to_end(to);
    for (const auto &inner : from.ops())
      clone(*inner, mapping);
    b_.restore(saved_block, saved_point);
  }
  return copy;
}

bool KernelGenerator::repeat_action() {
  // The same op again, regions and all: cse must merge it with the first
  // (comparing regions op by op), unless it reads memory.
  std::vector<ir::Operation *> candidates;
  for (Value *v : pool_) {
    ir::Operation *op = v->defining_op();
    if (op && v->index() == 0)
      candidates.push_back(op);
  }
  if (candidates.empty())
    return false;
  std::unordered_map<const Value *, Value *> mapping;
  ir::Operation *copy = clone(*rng_.pick(candidates), mapping);
  if (!admit(copy))
    return false;
  for (Value *r : copy->results())
    if (!r->type().is_pointer())
      add(r);
  return true;
}

// --- operands ----------------------------------------------------------------

Shape KernelGenerator::pick_shape() {
  uint64_t r = rng_.below(100);
  if (r < 70)
    return layout_.main_shape();
  if (r < 82)
    return {};
  std::vector<Shape> shapes;
  for (Value *v : pool_)
    if (!v->type().is_pointer() && v->type().is_block())
      shapes.push_back(v->type().shape());
  return shapes.empty() ? layout_.main_shape() : rng_.pick(shapes);
}

Scalar KernelGenerator::pick_dtype() {
  if (rng_.percent(70)) {
    // The types of the data (not of the index arithmetic).
    std::vector<Scalar> present;
    for (size_t i = prologue_end_; i < pool_.size(); ++i) {
      Value *v = pool_[i];
      Scalar s = v->type().element();
      if (!v->type().is_pointer() && s != Scalar::I1)
        present.push_back(s);
    }
    if (!present.empty())
      return rng_.pick(present);
  }
  return dtypes()[rng_.weighted(dtype_weights())];
}

bool KernelGenerator::adaptable(const Shape &from, const Shape &to) const {
  if (from == to || from.empty())
    return true;
  return from.size() == 1 && to.size() == 2 &&
         (from[0] == to[0] || from[0] == to[1]);
}

namespace {

bool satisfies(const ValueFacts &f, Need need, const Type &t) {
  bool is_float = t.is_float();
  switch (need) {
  case Need::Any:
    return true;
  case Need::Exact:
    return !is_float || f.exact();
  default:
    break;
  }
  if (f.special) // domains are finite
    return false;
  switch (need) {
  case Need::Any:
  case Need::Exact:
    return true;
  case Need::Positive:
    return f.lo - f.error >= kPositive;
  case Need::FloatDivisor:
    return f.lo - f.error >= kPositive || f.hi + f.error <= -kPositive;
  case Need::ExactDivisor:
    return f.exact() && (f.lo >= kPositive || f.hi <= -kPositive);
  case Need::IntDivisor:
    return f.lo >= 1;
  case Need::ShiftAmount:
    return f.lo >= 0 && f.hi <= ir::scalar_bits(t.element()) - 1;
  case Need::Small:
    return f.magnitude() + f.error <= 4;
  }
  return false;
}

} // namespace

Value *KernelGenerator::pick_candidate(Scalar d, const Shape &shape,
                                       Need need) {
  std::vector<Value *> candidates;
  std::vector<int> weights;
  for (size_t i = 0; i < pool_.size(); ++i) {
    Value *v = pool_[i];
    const Type &t = v->type();
    if (t.is_pointer() || !adaptable(t.shape(), shape))
      continue;
    bool is_mask = t.element() == Scalar::I1;
    if ((d == Scalar::I1) != is_mask && !(is_mask && rng_.percent(10)))
      continue;
    bool needs_exact = need == Need::Exact || need == Need::ExactDivisor;
    if (needs_exact && t.is_float() && !facts(v).exact())
      continue;
    int w = 1;
    if (t.element() == d)
      w += 4;
    if (i >= scope_start_)
      w += 3; // values of the region being built
    if (i + 4 >= pool_.size())
      w += 2; // recent values: long dependence chains
    if (t.shape() == shape)
      w += 2;
    candidates.push_back(v);
    weights.push_back(w);
  }
  if (candidates.empty())
    return nullptr;
  return candidates[rng_.weighted(weights)];
}

Value *KernelGenerator::adapt_shape(Value *v, const Shape &shape) {
  const Type &t = v->type();
  Shape s = t.shape();
  if (s == shape)
    return v;
  if (s.empty())
    return make(OpCode::Splat, {v}, t.with_shape(shape));
  // A 1-D value along one axis of a 2-D shape.
  int axis = s[0] == shape[1] && (s[0] != shape[0] || rng_.percent(50)) ? 0 : 1;
  Shape expanded = s;
  expanded.insert(expanded.begin() + axis, 1);
  Value *e = make(OpCode::ExpandDims, {v}, t.with_shape(expanded),
                  {{"axis", int64_t{axis}}});
  Value *r = make(OpCode::Broadcast, {e}, t.with_shape(shape));
  if (r)
    add(r);
  return r;
}

Value *KernelGenerator::convert(Value *v, Scalar d) {
  if (v->type().element() == d)
    return v;
  Value *r = make(OpCode::Cast, {v}, v->type().with_element(Type::scalar(d)));
  if (r)
    add(r);
  return r;
}

Value *KernelGenerator::clamp(Value *v, double lo, double hi) {
  Scalar d = v->type().element();
  Shape s = v->type().shape();
  Value *low = make(OpCode::Maximum, {v, constant(d, s, lo)}, v->type());
  return make(OpCode::Minimum, {low, constant(d, s, hi)}, v->type());
}

Value *KernelGenerator::guard(Value *v, Need need) {
  const Type &t = v->type();
  if (satisfies(facts(v), need, t))
    return v;
  Scalar d = t.element();
  Shape s = t.shape();
  Value *r = nullptr;
  switch (need) {
  case Need::Any:
  case Need::Exact:
    return nullptr;
  case Need::Positive:
  case Need::FloatDivisor: {
    double c = rng_.pick(std::vector<double>{0.25, 0.5, 1});
    switch (rng_.below(3)) {
    case 0:
      r = make(OpCode::Maximum, {v, constant(d, s, c)}, t);
      break;
    case 1:
      r = make(OpCode::Add, {make(OpCode::Abs, {v}, t), constant(d, s, c)}, t);
      break;
    default:
      r = make(OpCode::Add, {make(OpCode::Mul, {v, v}, t), constant(d, s, c)},
               t);
      break;
    }
    if (r && need == Need::FloatDivisor && rng_.percent(30))
      r = make(OpCode::Neg, {r}, t);
    break;
  }
  case Need::ExactDivisor:
    r = make(OpCode::Maximum,
             {v, constant(d, s, rng_.pick(std::vector<double>{0.5, 1, 2}))}, t);
    break;
  case Need::IntDivisor: {
    double m =
        std::min(integer_max(d), rng_.pick(std::vector<double>{7, 15, 127}));
    switch (rng_.below(3)) {
    case 0:
      r = make(
          OpCode::Or,
          {make(OpCode::And, {v, constant(d, s, m)}, t), constant(d, s, 1)}, t);
      break;
    case 1:
      r = make(
          OpCode::Add,
          {make(OpCode::And, {v, constant(d, s, m)}, t), constant(d, s, 1)}, t);
      break;
    default:
      r = make(OpCode::Maximum, {v, constant(d, s, 1)}, t);
      break;
    }
    break;
  }
  case Need::ShiftAmount: {
    int bits = ir::scalar_bits(d);
    if (!ir::is_signed(d) && rng_.percent(30)) {
      r = make(OpCode::Rem, {v, constant(d, s, bits)}, t);
    } else {
      double k = rng_.percent(60) ? bits - 1 : rng_.between(0, bits - 1);
      r = make(OpCode::And, {v, constant(d, s, k)}, t);
    }
    break;
  }
  case Need::Small:
    if (rng_.percent(30))
      r = make(OpCode::Tanh, {v}, t);
    else
      r = clamp(v, -4, 4);
    break;
  }
  if (!r || !satisfies(facts(r), need, t))
    return nullptr;
  add(r);
  return r;
}

Value *KernelGenerator::operand(Scalar d, const Shape &shape, Need need) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    Value *v = pick_candidate(d, shape, need);
    if (!v)
      break;
    v = adapt_shape(v, shape);
    if (v)
      v = convert(v, d);
    if (v)
      v = guard(v, need);
    if (v)
      return v;
  }
  // Nothing fits: a constant that satisfies the need.
  double value = 0;
  switch (need) {
  case Need::Positive:
  case Need::FloatDivisor:
  case Need::ExactDivisor:
    value = rng_.pick(std::vector<double>{0.5, 1, 2, 3});
    break;
  case Need::IntDivisor:
    value = static_cast<double>(rng_.between(1, 9));
    break;
  case Need::ShiftAmount:
    value = static_cast<double>(rng_.between(0, 3));
    break;
  default:
    value = d == Scalar::I1 ? static_cast<double>(rng_.below(2))
                            : static_cast<double>(rng_.between(0, 8)) / 2;
    if (!ir::is_float(d))
      value = std::floor(value);
    break;
  }
  return constant(d, shape, value);
}

} // namespace blocc::differential::detail
