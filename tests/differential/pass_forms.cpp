// Forms aimed at the generic passes: identities canonicalize rewrites (and
// float forms it must leave alone), and repeated ops, regions included,
// that cse must merge.
#include "generator_internal.h"

#include <algorithm>

namespace blocc::differential::detail {

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

} // namespace blocc::differential::detail
