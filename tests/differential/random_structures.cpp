// The structured parts of a generated kernel: reductions and scans with
// their combine regions, `for` loops with loop-carried values (and loads
// that move with the induction variable), and `if` with results.
#include "generator_internal.h"

#include <algorithm>
#include <cmath>

namespace blocc::differential::detail {

Value *KernelGenerator::index_along(const Shape &shape, int axis) {
  Type i32 = Type::scalar(Scalar::I32);
  Value *lanes = make(OpCode::Arange, {}, Type::block(i32, {shape[axis]}),
                      {{"start", int64_t{0}}, {"end", shape[axis]}});
  if (shape.size() == 1)
    return lanes;
  // Unit dimensions around the axis, one expand_dims each, then broadcast.
  Shape expanded = {shape[axis]};
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (d == axis)
      continue;
    expanded.insert(expanded.begin() + d, 1);
    lanes = make(OpCode::ExpandDims, {lanes}, Type::block(i32, expanded),
                 {{"axis", int64_t{d}}});
  }
  return make(OpCode::Broadcast, {lanes}, Type::block(i32, shape));
}

bool KernelGenerator::reduce_action(bool scan) {
  std::vector<Value *> candidates;
  for (size_t i = 0; i < pool_.size(); ++i) {
    const Type &t = pool_[i]->type();
    if (t.is_block() && !t.is_pointer() && t.element() != Scalar::I1)
      candidates.push_back(pool_[i]);
  }
  if (candidates.empty())
    return false;
  // Prefer recent values: they depend on more of the kernel.
  Value *x = rng_.percent(50) ? candidates.back() : rng_.pick(candidates);
  const Type &t = x->type();
  Shape shape = t.shape();
  Scalar s = t.element();
  int axis = static_cast<int>(rng_.below(shape.size()));
  // Built-in reductions, and custom combines as users write them: an
  // argmax/argmin through an if (ties to the smaller index), a max found
  // through integer division by a constant, a sum modulo a constant, and a
  // third operand folded beside a value and its index. All are associative
  // and commutative, so every order of combination gives the same result.
  enum Kind {
    Sum,
    Max,
    Min,
    Xor,
    Or,
    ArgMax,
    ArgMin,
    BranchArgBest,
    BucketMax,
    SumModulo,
    ArgBestAndMax,
  };
  int integer = ir::is_float(s) ? 0 : 1, reduce_only = scan ? 0 : 1;
  // One weight per kind, in the order above.
  std::vector<int> weights = {
      4,           2, 2,       integer, integer, reduce_only,
      reduce_only, 1, integer, integer, 1};
  Kind kind = static_cast<Kind>(rng_.weighted(weights));
  bool with_index = kind == ArgMax || kind == ArgMin || kind == BranchArgBest ||
                    kind == ArgBestAndMax;

  std::vector<Value *> xs{x};
  if (kind == SumModulo) {
    // Non-negative elements whose sums of two stay within the type.
    int bits = ir::scalar_bits(s);
    double low_bits = std::min(1023.0, std::ldexp(1.0, bits - 3) - 1);
    xs[0] = make(OpCode::And, {x, constant(s, shape, low_bits)}, t);
  }
  if (with_index)
    xs.push_back(index_along(shape, axis));
  if (kind == ArgBestAndMax) {
    Scalar third = rng_.pick(value_dtypes());
    xs.push_back(third == Scalar::I1 ? nullptr
                                     : operand(third, shape, Need::Any));
  }
  for (Value *v : xs)
    if (!v)
      return false;
  std::vector<Type> results;
  Shape result_shape = shape;
  if (!scan)
    result_shape.erase(result_shape.begin() + axis);
  for (Value *v : xs)
    results.push_back(v->type().with_shape(result_shape));
  ir::Attributes attributes{{"axis", int64_t{axis}}};
  if (scan && rng_.percent(70))
    attributes["reverse"] = int64_t{rng_.percent(30) ? 1 : 0};
  ir::Operation *op =
      b_.create(scan ? OpCode::Scan : OpCode::Reduce, xs, results, attributes);
  ir::Block *combine = op->add_region();
  std::vector<Value *> lhs, rhs;
  for (Value *v : xs)
    lhs.push_back(combine->add_argument(v->type().element_type()));
  for (Value *v : xs)
    rhs.push_back(combine->add_argument(v->type().element_type()));
  for (size_t i = 0; i < xs.size(); ++i) {
    facts_.set(lhs[i], facts(xs[i]));
    facts_.set(rhs[i], facts(xs[i]));
  }
  bool built = true;
  inside(combine, [&] {
    Type e = t.element_type();
    Type i1 = Type::scalar(Scalar::I1);
    // The better value wins; on a tie the smaller index, so that every
    // combination order gives the same answer.
    auto take_lhs = [&](bool largest) {
      Value *better = cmp(largest ? "gt" : "lt", lhs[0], rhs[0]);
      Value *tie = cmp("eq", lhs[0], rhs[0]);
      Value *earlier = cmp("lt", lhs[1], rhs[1]);
      return make(OpCode::Or, {better, make(OpCode::And, {tie, earlier}, i1)},
                  i1);
    };
    // (value, index) of lhs or rhs through an if with two results.
    auto branch_to_best = [&]() -> std::vector<Value *> {
      Value *condition = take_lhs(rng_.percent(50));
      if (!condition)
        return {nullptr};
      ir::Operation *branch =
          b_.create(OpCode::If, {condition}, {e, lhs[1]->type()});
      for (const std::vector<Value *> *side : {&lhs, &rhs})
        inside(branch->add_region(), [&] {
          b_.create(OpCode::Yield, {(*side)[0], (*side)[1]}, {});
        });
      return {branch->result(0), branch->result(1)};
    };
    std::vector<Value *> yielded;
    switch (kind) {
    case Sum:
      yielded = {make(OpCode::Add, {lhs[0], rhs[0]}, e)};
      break;
    case Max:
      yielded = {make(OpCode::Maximum, {lhs[0], rhs[0]}, e)};
      break;
    case Min:
      yielded = {make(OpCode::Minimum, {lhs[0], rhs[0]}, e)};
      break;
    case Xor:
      yielded = {make(OpCode::Xor, {lhs[0], rhs[0]}, e)};
      break;
    case Or:
      yielded = {make(OpCode::Or, {lhs[0], rhs[0]}, e)};
      break;
    case ArgMax:
    case ArgMin: {
      Value *take = take_lhs(kind == ArgMax);
      yielded = {make(OpCode::Select, {take, lhs[0], rhs[0]}, e),
                 make(OpCode::Select, {take, lhs[1], rhs[1]}, lhs[1]->type())};
      break;
    }
    case BranchArgBest:
      yielded = branch_to_best();
      break;
    case BucketMax: {
      // a / c orders the elements as a does (truncation is monotonic);
      // equal quotients fall back to comparing a itself.
      Value *divisor = constant(
          s, {}, double(rng_.pick(std::vector<int64_t>{2, 3, 7, 10, 100})));
      Value *lq = make(OpCode::Div, {lhs[0], divisor}, e);
      Value *rq = make(OpCode::Div, {rhs[0], divisor}, e);
      Value *take =
          make(OpCode::Or,
               {cmp("gt", lq, rq),
                make(OpCode::And,
                     {cmp("eq", lq, rq), cmp("ge", lhs[0], rhs[0])}, i1)},
               i1);
      yielded = {make(OpCode::Select, {take, lhs[0], rhs[0]}, e)};
      break;
    }
    case SumModulo: {
      int64_t largest = std::max<int64_t>(1, int64_t(facts(xs[0]).hi));
      double modulus = double(rng_.between(2, largest + 1));
      yielded = {make(
          OpCode::Rem,
          {make(OpCode::Add, {lhs[0], rhs[0]}, e), constant(s, {}, modulus)},
          e)};
      break;
    }
    case ArgBestAndMax:
      yielded = branch_to_best();
      yielded.push_back(
          make(OpCode::Maximum, {lhs[2], rhs[2]}, lhs[2]->type()));
      break;
    }
    for (Value *v : yielded)
      built = built && v;
    if (built)
      b_.create(OpCode::Yield, yielded, {});
  });
  if (!built) {
    op->parent_block()->erase(op);
    return false;
  }
  if (!admit(op))
    return false;
  for (Value *r : op->results())
    add(r);
  return true;
}

Value *KernelGenerator::scalar_condition() {
  switch (rng_.below(3)) {
  case 0: {
    // Differs between programs.
    int axis =
        static_cast<int>(rng_.below(static_cast<uint64_t>(layout_.rank)));
    int64_t last = layout_.grid[axis] - 1;
    return cmp(rng_.percent(50) ? "lt" : "eq", pid_[axis],
               constant(Scalar::I32, {}, double(rng_.between(0, last))));
  }
  case 1: {
    std::vector<Value *> scalars;
    for (Value *v : pool_)
      if (!v->type().is_block() && !v->type().is_pointer() &&
          (!v->type().is_float() || facts(v).exact()))
        scalars.push_back(v);
    if (scalars.empty())
      return nullptr;
    Value *v = rng_.pick(scalars);
    if (v->type().element() == Scalar::I1)
      return v;
    const ValueFacts &f = facts(v);
    double middle = std::round((f.lo + f.hi) / 2);
    if (!std::isfinite(middle) || std::fabs(middle) > 1e6)
      middle = 0;
    return cmp(rng_.percent(50) ? "le" : "gt", v,
               constant(v->type().element(), {}, middle));
  }
  default:
    for (Value *v : pool_)
      if (v->type() == Type::scalar(Scalar::I1))
        return operand(Scalar::I1, {}, Need::Any);
    return cmp("ge", pid_[0], constant(Scalar::I32, {}, 1));
  }
}

Value *KernelGenerator::next_carried(Value *arg, const ValueFacts &bounds,
                                     bool clamped) {
  const Type &t = arg->type();
  Scalar d = t.element();
  Shape s = t.shape();
  // Now and then a value the loop does not change, or resets to its
  // initial value: canonicalize turns it into the initial value, dce drops
  // the slot.
  if (rng_.percent(6))
    return arg;
  if (rng_.percent(4))
    return initial_values_.at(arg);
  Value *v = operand(d, s, Need::Any);
  if (!v)
    return arg;
  Value *next = nullptr;
  if (ir::is_float(d)) {
    switch (rng_.weighted({3, 1, 1, 1, 2, 1})) {
    case 0:
      next = make(OpCode::Add, {arg, v}, t);
      break;
    case 1:
      next = make(OpCode::Sub, {arg, v}, t);
      break;
    case 2:
      next = make(OpCode::Maximum, {arg, v}, t);
      break;
    case 3:
      next = make(OpCode::Minimum, {v, arg}, t);
      break;
    case 4: // a decaying accumulator: arg * c + v
      next = make(OpCode::Fma,
                  {arg, constant(d, s, rng_.percent(50) ? 0.5 : 0.75), v}, t);
      break;
    default:
      next = make(OpCode::Mul, {arg, v}, t);
      break;
    }
  } else {
    static const OpCode codes[] = {OpCode::Add,     OpCode::Sub,
                                   OpCode::Xor,     OpCode::Maximum,
                                   OpCode::Minimum, OpCode::Mul};
    next = make(codes[rng_.weighted({3, 1, 2, 1, 1, 1})], {arg, v}, t);
  }
  if (!next)
    next = v;
  if (clamped) {
    Value *c = clamp(next, bounds.lo, bounds.hi);
    if (c)
      next = c;
  }
  return next;
}

bool KernelGenerator::for_action() {
  if (depth_ >= 2 || budget_ < 1)
    return false;
  Scalar iv_type = rng_.percent(80) ? Scalar::I32 : Scalar::I64;
  Type iv = Type::scalar(iv_type);
  Value *lb, *ub, *step;
  switch (rng_.weighted({2, 1, 1})) {
  case 0: { // constant bounds, zero trips included, counting up or down
    int64_t first = rng_.between(0, 2);
    int64_t stride = rng_.pick(std::vector<int64_t>{1, 1, 2, 3});
    int64_t trips = rng_.pick(std::vector<int64_t>{0, 1, 2, 2, 3, 3, 4});
    int64_t last = trips > 0
                       ? first + trips * stride - rng_.between(0, stride - 1)
                       : first - rng_.between(0, 2);
    if (rng_.percent(25)) {
      // Python's range(last, first, -stride): as many trips, downwards.
      lb = constant(iv_type, {}, double(last));
      ub = constant(iv_type, {}, double(first));
      step = constant(iv_type, {}, double(-stride));
    } else {
      lb = constant(iv_type, {}, double(first));
      ub = constant(iv_type, {}, double(last));
      step = constant(iv_type, {}, double(stride));
    }
    break;
  }
  case 1: // a trip count passed at run time
    lb = constant(iv_type, {}, 0);
    ub = int_argument("trips" + std::to_string(scalars_++), iv_type,
                      rng_.between(0, 4));
    step = constant(iv_type, {}, 1);
    break;
  default: { // a trip count that differs between programs: (pid & 3) + 1
    Type i32 = Type::scalar(Scalar::I32);
    Value *count =
        make(OpCode::Add,
             {make(OpCode::And, {pid_[0], constant(Scalar::I32, {}, 3)}, i32),
              constant(Scalar::I32, {}, 1)},
             i32);
    lb = constant(iv_type, {}, 0);
    ub = iv_type == Scalar::I32 ? count : make(OpCode::Cast, {count}, iv);
    step = constant(iv_type, {}, 1);
    break;
  }
  }
  if (!lb || !ub || !step)
    return false;
  const ValueFacts &lbf = facts(lb), &ubf = facts(ub), &stepf = facts(step);
  bool up = stepf.lo > 0;
  double trips_max =
      std::max(0.0, std::ceil((up ? ubf.hi - lbf.lo : lbf.hi - ubf.lo) /
                              std::fabs(stepf.lo)));
  double iv_lo = up ? lbf.lo : std::min(lbf.hi, ubf.lo + 1);
  double iv_hi = up ? std::max(lbf.lo, ubf.hi - 1) : lbf.hi;

  // The carried values: a few pool values, and sometimes a block of
  // pointers advanced by one buffer row per iteration.
  std::vector<Value *> inits;
  std::vector<Value *> candidates;
  for (Value *v : pool_)
    if (!v->type().is_pointer() && v->type().element() != Scalar::I1)
      candidates.push_back(v);
  if (candidates.empty())
    return false;
  int carried = static_cast<int>(rng_.between(1, 3));
  for (int i = 0; i < carried; ++i)
    inits.push_back(rng_.percent(50) ? candidates.back()
                                     : rng_.pick(candidates));
  Value *pointer_init = nullptr;
  if (trips_max >= 1 && rng_.percent(30)) {
    Scalar s = rng_.pick(input_dtypes());
    BufferSpec spec;
    spec.dtype = s;
    spec.elements = layout_.elements() * static_cast<int64_t>(trips_max);
    spec.values = input_values(s);
    Value *base = buffer_argument("x", spec);
    Type pointers = Type::block(Type::pointer(s), layout_.main_shape());
    pointer_init =
        make(OpCode::AddPtr, {make(OpCode::Splat, {base}, pointers), offsets_},
             pointers);
    if (!pointer_init)
      return false;
    inits.push_back(pointer_init);
  }

  std::vector<Value *> operands{lb, ub, step};
  std::vector<Type> types;
  for (Value *v : inits) {
    operands.push_back(v);
    types.push_back(v->type());
  }
  ir::Operation *op = b_.create(OpCode::For, operands, types);
  ir::Block *body = op->add_region();
  Value *induction = body->add_argument(iv);
  facts_.set(induction, ValueFacts::range(iv_lo, iv_hi));
  // What the body is built for: each carried value stays in `bounds` (a
  // clamp at the end of the body sees to it) and may carry an error. The
  // analysis then follows the real iterations, and the loop is dropped if
  // they leave what the body's ops admit.
  std::vector<ValueFacts> bounds;
  std::vector<bool> clamped;
  for (Value *init : inits) {
    Value *arg = body->add_argument(init->type());
    initial_values_[arg] = init;
    ValueFacts f = facts(init);
    Scalar d = init->type().element();
    ValueFacts b = f;
    bool clamp_it = false;
    if (!init->type().is_pointer()) {
      double m = std::max(1.0, f.magnitude());
      if (ir::is_float(d)) {
        double r = std::ldexp(1.0, std::ilogb(m) + 1 + int(rng_.below(3)));
        r = std::min(r, float_limits(d).max_magnitude / 16);
        b = f.lo >= 0 ? ValueFacts::range(0, r) : ValueFacts::range(-r, r);
        clamp_it = true;
        ValueFacts assumed = hull(f, b);
        bool stays_exact = f.exact() && rng_.percent(50);
        assumed.error =
            stays_exact
                ? 0
                : std::max(f.error, 64 * float_limits(d).unit_roundoff * r);
        assumed.quantum = f.exact() ? f.quantum : 0;
        facts_.set(arg, assumed);
      } else if (rng_.percent(70)) {
        double r =
            std::min(integer_max(d), std::ldexp(1.0, int(rng_.between(3, 10))));
        b = f.lo >= 0 ? ValueFacts::range(0, r)
                      : ValueFacts::range(std::max(-r, integer_min(d)), r);
        clamp_it = true;
        facts_.set(arg, hull(f, b));
      } else {
        facts_.set(arg, ValueFacts::range(integer_min(d), integer_max(d)));
      }
    } else {
      facts_.set(arg, f);
    }
    bounds.push_back(b);
    clamped.push_back(clamp_it);
  }

  inside(body, [&] {
    add(induction);
    for (size_t i = 0; i < inits.size(); ++i)
      if (!inits[i]->type().is_pointer())
        add(body->argument(i + 1));
    if (iv_lo >= 0)
      loops_.push_back({induction, iv_hi});
    if (pointer_init) {
      Value *arg = body->argument(inits.size());
      Scalar s = arg->type().pointee();
      Value *x =
          make(OpCode::Load, {arg, mask_, constant(s, layout_.main_shape(), 0)},
               Type::block(Type::scalar(s), layout_.main_shape()));
      if (x)
        add(x);
    }
    int actions =
        static_cast<int>(std::min<int64_t>(budget_, rng_.between(1, 4)));
    budget_ -= actions;
    random_actions(actions);
    std::vector<Value *> next;
    for (size_t i = 0; i < inits.size(); ++i) {
      Value *arg = body->argument(i + 1);
      if (arg->type().is_pointer()) {
        Value *stride =
            make(OpCode::Splat, {stride_},
                 arg->type().with_element(Type::scalar(index_type_)));
        Value *moved = make(OpCode::AddPtr, {arg, stride}, arg->type());
        next.push_back(moved ? moved : arg);
      } else {
        next.push_back(next_carried(arg, bounds[i], clamped[i]));
      }
    }
    b_.create(OpCode::Yield, next, {});
    if (iv_lo >= 0)
      loops_.pop_back();
  });
  if (!admit(op))
    return false;
  for (Value *r : op->results())
    if (!r->type().is_pointer())
      add(r);
  return true;
}

bool KernelGenerator::if_action() {
  if (depth_ >= 2)
    return false;
  Value *condition = scalar_condition();
  if (!condition)
    return false;
  std::vector<Value *> candidates;
  for (Value *v : pool_)
    if (!v->type().is_pointer())
      candidates.push_back(v);
  if (candidates.empty())
    return false;
  std::vector<Type> types;
  int count = static_cast<int>(rng_.between(1, 2));
  for (int i = 0; i < count; ++i)
    types.push_back(rng_.pick(candidates)->type());
  ir::Operation *op = b_.create(OpCode::If, {condition}, types);
  for (int r = 0; r < 2; ++r) {
    ir::Block *region = op->add_region();
    inside(region, [&] {
      int actions =
          static_cast<int>(std::min<int64_t>(budget_, rng_.between(0, 2)));
      budget_ -= actions;
      random_actions(actions);
      std::vector<Value *> yielded;
      for (const Type &t : types) {
        Value *v = operand(t.element(), t.shape(), Need::Any);
        yielded.push_back(v);
      }
      for (Value *v : yielded)
        if (!v)
          return; // leaves the region without yield: rejected below
      b_.create(OpCode::Yield, yielded, {});
    });
  }
  for (int r = 0; r < 2; ++r)
    if (!op->region(r)->terminator()) {
      op->parent_block()->erase(op);
      return false;
    }
  if (!admit(op))
    return false;
  for (Value *r : op->results())
    add(r);
  return true;
}

bool KernelGenerator::loop_load_action() {
  if (loops_.empty())
    return false;
  const LoopContext &loop = loops_.back();
  Type index = Type::scalar(index_type_);
  Value *iv = loop.iv;
  if (iv->type().element() != index_type_)
    iv = make(OpCode::Cast, {iv}, index);
  // Row iv of a buffer holding one main-shaped block per iteration.
  Value *row = make(OpCode::Mul, {iv, stride_}, index);
  Value *offsets = make(
      OpCode::Add, {offsets_, make(OpCode::Splat, {row}, offsets_->type())},
      offsets_->type());
  if (!offsets)
    return false;
  Scalar s = rng_.pick(input_dtypes());
  int64_t rows = static_cast<int64_t>(loop.iv_hi) + 1;
  Value *x = load_buffer(s, layout_.elements() * rows, offsets, mask_);
  if (x)
    add(x);
  return x != nullptr;
}

} // namespace blocc::differential::detail
