// Operands for the random ops: a value of the pool (preferring the region
// being built, recent values and the wanted type), brought to the wanted
// shape (splat, broadcast) and type (cast), then guarded into the op's
// domain (max, abs, and-masks, clamps) as value_facts.h requires.
#include "generator_internal.h"

#include <algorithm>
#include <cmath>

namespace blocc::differential::detail {

constexpr double kPositive = 0x1p-4;
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
  return value_dtypes()[rng_.weighted(value_dtype_weights())];
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
