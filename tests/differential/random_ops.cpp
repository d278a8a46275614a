// Random ops of a generated kernel: elementwise arithmetic and math,
// comparisons and selects, casts and bitcasts, constants, shape ops (widen,
// transpose, reshape, join, split, cat) and dot. Their operands come from
// random_operands.cpp.
#include "generator_internal.h"

#include <algorithm>
#include <cmath>

namespace blocc::differential::detail {

const std::vector<Scalar> &value_dtypes() {
  static const std::vector<Scalar> all = {
      Scalar::I8,  Scalar::I16,  Scalar::I32, Scalar::I64, Scalar::U32,
      Scalar::F16, Scalar::BF16, Scalar::F32, Scalar::F64};
  return all;
}
const std::vector<int> &value_dtype_weights() {
  static const std::vector<int> weights = {1, 1, 3, 1, 1, 2, 2, 4, 1};
  return weights;
}

const char *random_predicate(Random &rng) {
  static const char *predicates[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  return predicates[rng.below(6)];
}

namespace {

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
    Dot,
    Atomic,
    KLoopDot
  };
  std::vector<int> weights = {
      40, 8, 8, 2, 3, 6, 7, 4, depth_ < 2 ? 5 : 0, depth_ < 2 ? 4 : 0,
      loops_.empty() ? 0 : 8, 6, 3, 3,
      // Last, so that a zero weight draws as before.
      options_.generation >= 2 && depth_ == 0 ? 3 : 0,
      options_.generation >= 4 && depth_ == 0 && layout_.rank == 2 ? 6 : 0};
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
    case Atomic:
      ok = atomic_action();
      break;
    case KLoopDot:
      ok = k_loop_dot_action();
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
  Scalar to = rng_.percent(8)
                  ? Scalar::I1
                  : value_dtypes()[rng_.weighted(value_dtype_weights())];
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

Scalar KernelGenerator::dot_accumulator(Scalar d) {
  switch (d) {
  case Scalar::F16:
  case Scalar::BF16:
    return rng_.percent(70) ? Scalar::F32 : d;
  case Scalar::I8:
  case Scalar::I16:
    return Scalar::I32;
  default:
    return d;
  }
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
  Scalar acc_type = dot_accumulator(d);
  Value *acc = rng_.percent(50) ? constant(acc_type, {m, n}, 0)
                                : operand(acc_type, {m, n}, Need::Any);
  Value *r = make(OpCode::Dot, {a, b, acc}, type_of(acc_type, {m, n}),
                  {{"input_precision", std::string("ieee")}});
  if (r)
    add(r);
  return r != nullptr;
}

} // namespace blocc::differential::detail
