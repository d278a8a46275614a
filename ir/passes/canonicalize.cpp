// canonicalize: rewrites ops into simpler equivalent forms until nothing
// changes.
//
//  - constant folding of elementwise ops, compares, selects and casts, in
//    the element type's arithmetic (see constant_element.h);
//  - algebraic identities: x+0, x-0, x*1, x/1, x*0 and x-x (integers),
//    x&0, x&~0, x|0, x|~0, x^0, x^x, x&x, x|x, shifts by 0, min/max(x, x),
//    select(c, a, a), select(c, true, false), double neg/not, cmp(x, x) on
//    integers, addptr(p, 0), casts to the same type;
//  - shape folding: splat of a constant becomes a block constant; broadcast,
//    expand_dims, reshape and permute of a constant or a splat become a
//    constant or splat of the new shape; chains of broadcasts, reshapes and
//    permutes collapse into one; shape ops that change nothing disappear;
//  - hints whose every value is 1 (they tell the analysis nothing);
//  - control flow: `if` on a constant condition is replaced by the taken
//    region; `for` whose constant bounds give no iteration is replaced by its
//    initial values; loop-carried values that the body hands back unchanged
//    become the initial value.
//
// Floats are folded only where IEEE arithmetic is exact to fold: x*0 is not
// 0 (NaN*0 is NaN, -1*0 is -0), x+0.0 is not x (-0.0 + 0.0 is +0.0), and
// x-x is not 0 (inf-inf is NaN). The rewrites that do hold for floats are
// x*1, x/1, x-(+0.0) and x+(-0.0).
//
// Ops made dead by a rewrite (e.g. the constants feeding a folded add) are
// left for dce.
#include "ir/builder.h"
#include "ir/passes.h"
#include "ir/passes/constant_element.h"
#include "ir/passes/side_effects.h"

#include <cmath>
#include <unordered_map>

namespace blocc::ir {

namespace {

/// A rewrite can enable another one upstream only through a new sweep; real
/// kernels settle in two or three. The cap guards against a rewrite pair
/// that undo each other.
constexpr int kMaxSweeps = 32;

std::optional<ConstantElement> constant_of(const Value *v) {
  const Operation *op = v->defining_op();
  if (!op || op->code() != OpCode::Constant)
    return std::nullopt;
  auto it = op->attributes().find("value");
  if (it == op->attributes().end())
    return std::nullopt;
  Scalar s = v->type().element();
  if (const auto *i = std::get_if<int64_t>(&it->second))
    return element_from_attribute(*i, s);
  if (const auto *d = std::get_if<double>(&it->second))
    return element_from_attribute(*d, s);
  return std::nullopt;
}

bool is_integer_constant(const Value *v, int64_t k) {
  auto c = constant_of(v);
  return c && !c->is_float && v->type().is_integer() &&
         c->integer == wrap_integer(k, v->type().element());
}
bool is_float_constant(const Value *v, double k) {
  auto c = constant_of(v);
  return c && c->is_float && c->real == k &&
         std::signbit(c->real) == std::signbit(k);
}
bool is_zero(const Value *v) { return is_integer_constant(v, 0); }
bool is_one(const Value *v) {
  return is_integer_constant(v, 1) || is_float_constant(v, 1.0);
}
bool is_all_ones(const Value *v) { return is_integer_constant(v, -1); }

class Canonicalizer {
public:
  explicit Canonicalizer(Function &f) : function_(f) {}

  void run() {
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
      changed_ = false;
      simplify_block(function_.body());
      // Every use of a replaced value sits after its definition, so the
      // walk has already redirected all of them: the replaced ops can go.
      replacements_.clear();
      removed_.clear();
      if (!changed_)
        return;
    }
  }

private:
  // --- driver --------------------------------------------------------------

  void simplify_block(Block &block) {
    for (auto it = block.ops().begin(); it != block.ops().end();) {
      Operation &op = **it;
      ++it; // rewrites may remove `op` or insert before it, never after
      for (size_t i = 0; i < op.num_operands(); ++i)
        op.set_operand(i, resolve(op.operand(i)));
      for (size_t r = 0; r < op.num_regions(); ++r)
        simplify_block(*op.region(r));
      simplify_op(op);
    }
  }

  Value *resolve(Value *v) const {
    for (auto it = replacements_.find(v); it != replacements_.end();
         it = replacements_.find(v))
      v = it->second;
    return v;
  }

  /// Replaces every result of `op` and removes it. Removed ops stay alive
  /// until the sweep ends so that no freed address is mistaken for a
  /// replaced value.
  void replace(Operation &op, const std::vector<Value *> &values) {
    for (size_t i = 0; i < values.size(); ++i)
      replacements_[op.result(i)] = values[i];
    removed_.push_back(op.parent_block()->remove(&op));
    changed_ = true;
  }

  void simplify_op(Operation &op) {
    if (op.code() == OpCode::If)
      return simplify_if(op);
    if (op.code() == OpCode::For)
      return simplify_for(op);
    if (op.num_results() != 1 || op.num_regions() != 0 ||
        !is_removable_when_unused(op))
      return;
    if (Value *v = rewrite(op))
      replace(op, {v});
  }

  // --- building ------------------------------------------------------------

  Builder builder_before(Operation &op) {
    Builder b;
    b.set_insertion_point_before(&op);
    b.set_location(op.loc());
    return b;
  }

  Value *make_constant(Operation &before, const Type &type,
                       const ConstantElement &e) {
    Builder b = builder_before(before);
    return e.is_float ? b.float_constant(e.real, type)
                      : b.int_constant(e.integer, type);
  }

  Value *zero_like(Operation &before, const Type &type) {
    return make_constant(before, type, ConstantElement::of_integer(0));
  }

  // --- single-result rewrites ----------------------------------------------

  Value *rewrite(Operation &op) {
    switch (op.code()) {
    case OpCode::Splat:
      if (auto c = constant_of(op.operand(0)))
        return make_constant(op, op.result()->type(), *c);
      return nullptr;
    case OpCode::Broadcast:
    case OpCode::ExpandDims:
    case OpCode::Reshape:
    case OpCode::Permute:
      return rewrite_shape(op);
    case OpCode::Cast:
    case OpCode::Bitcast:
      return rewrite_conversion(op);
    case OpCode::Cmp:
      return rewrite_cmp(op);
    case OpCode::Select:
      return rewrite_select(op);
    case OpCode::AddPtr:
      return is_zero(op.operand(1)) ? op.operand(0) : nullptr;
    case OpCode::MultipleOf:
    case OpCode::MaxContiguous:
    case OpCode::MaxConstancy:
      return rewrite_hint(op);
    case OpCode::Fma:
      return fold_all_constant(op);
    default:
      break;
    }
    if (!is_elementwise(op.code()))
      return nullptr;
    if (Value *folded = fold_all_constant(op))
      return folded;
    return apply_identity(op);
  }

  /// Folds an elementwise op whose operands are all constants.
  Value *fold_all_constant(Operation &op) {
    std::vector<ConstantElement> args;
    for (Value *v : op.operands()) {
      auto c = constant_of(v);
      if (!c)
        return nullptr;
      args.push_back(*c);
    }
    Scalar s = op.operand(0)->type().element();
    std::optional<ConstantElement> result;
    if (op.code() == OpCode::Fma)
      result = fold_fma(s, args[0], args[1], args[2]);
    else if (args.size() == 1)
      result = fold_unary(op.code(), s, args[0]);
    else if (args.size() == 2)
      result = fold_binary(op.code(), s, args[0], args[1]);
    if (!result)
      return nullptr;
    return make_constant(op, op.result()->type(), *result);
  }

  Value *apply_identity(Operation &op) {
    OpCode c = op.code();
    Value *x = op.operand(0);
    Value *y = op.num_operands() > 1 ? op.operand(1) : nullptr;
    const Type &t = op.result()->type();
    bool integer = t.is_integer();
    switch (c) {
    case OpCode::Add:
      if (integer && is_zero(y))
        return x;
      if (integer && is_zero(x))
        return y;
      if (is_float_constant(y, -0.0))
        return x;
      if (is_float_constant(x, -0.0))
        return y;
      return nullptr;
    case OpCode::Sub:
      if ((integer && is_zero(y)) || is_float_constant(y, 0.0))
        return x;
      if (integer && x == y)
        return zero_like(op, t);
      return nullptr;
    case OpCode::Mul:
      if (is_one(y))
        return x;
      if (is_one(x))
        return y;
      if (integer && is_zero(y))
        return y;
      if (integer && is_zero(x))
        return x;
      return nullptr;
    case OpCode::Div:
      return is_one(y) ? x : nullptr;
    case OpCode::Rem:
      return integer && is_one(y) ? zero_like(op, t) : nullptr;
    case OpCode::And:
      if (is_zero(y) || is_all_ones(x))
        return y;
      if (is_zero(x) || is_all_ones(y) || x == y)
        return x;
      return nullptr;
    case OpCode::Or:
      if (is_zero(y) || is_all_ones(x) || x == y)
        return x;
      if (is_zero(x) || is_all_ones(y))
        return y;
      return nullptr;
    case OpCode::Xor:
      if (is_zero(y))
        return x;
      if (is_zero(x))
        return y;
      if (x == y)
        return zero_like(op, t);
      return nullptr;
    case OpCode::Shl:
    case OpCode::Shr:
      return is_zero(y) ? x : nullptr;
    case OpCode::Minimum:
    case OpCode::Maximum:
      return x == y ? x : nullptr;
    case OpCode::Neg:
    case OpCode::Not: {
      // -(-x) is x for integers (wrap-around included) and floats alike.
      Operation *inner = x->defining_op();
      if (inner && inner->code() == c)
        return inner->operand(0);
      return nullptr;
    }
    default:
      return nullptr;
    }
  }

  Value *rewrite_cmp(Operation &op) {
    Value *x = op.operand(0), *y = op.operand(1);
    const std::string &predicate = op.string_attr("predicate");
    auto a = constant_of(x), b = constant_of(y);
    if (a && b) {
      if (auto r = fold_compare(predicate, x->type().element(), *a, *b))
        return make_constant(op, op.result()->type(), *r);
      return nullptr;
    }
    // x == x holds for every integer; for floats NaN breaks it.
    if (x == y && x->type().is_integer()) {
      bool reflexive =
          predicate == "eq" || predicate == "le" || predicate == "ge";
      return make_constant(op, op.result()->type(),
                           ConstantElement::of_integer(reflexive));
    }
    return nullptr;
  }

  Value *rewrite_select(Operation &op) {
    Value *cond = op.operand(0), *a = op.operand(1), *b = op.operand(2);
    if (auto c = constant_of(cond))
      return c->integer ? a : b;
    if (a == b)
      return a;
    // select(c, true, false) is c when the shapes agree.
    if (a->type() == cond->type() && is_integer_constant(a, 1) && is_zero(b))
      return cond;
    return nullptr;
  }

  Value *rewrite_conversion(Operation &op) {
    Value *x = op.operand(0);
    const Type &t = op.result()->type();
    if (x->type() == t)
      return x;
    Operation *inner = x->defining_op();
    if (op.code() == OpCode::Bitcast) {
      // Bitcasts compose: only the outermost type matters.
      if (inner && inner->code() == OpCode::Bitcast) {
        Value *source = inner->operand(0);
        if (source->type() == t)
          return source;
        return builder_before(op).create_value(OpCode::Bitcast, {source}, t);
      }
      return nullptr;
    }
    auto c = constant_of(x);
    if (!c)
      return nullptr;
    auto r = fold_cast(x->type().element(), t.element(), *c);
    return r ? make_constant(op, t, *r) : nullptr;
  }

  Value *rewrite_hint(Operation &op) {
    for (int64_t v : op.ints_attr("values"))
      if (v != 1)
        return nullptr;
    return op.operand(0);
  }

  static bool is_identity_order(const std::vector<int64_t> &order) {
    for (size_t i = 0; i < order.size(); ++i)
      if (order[i] != static_cast<int64_t>(i))
        return false;
    return true;
  }

  Value *rewrite_shape(Operation &op) {
    Value *x = op.operand(0);
    const Type &t = op.result()->type();
    OpCode c = op.code();
    // Broadcast and reshape to the operand's own type change nothing (a
    // reshape keeps row-major element order); a permute does only when its
    // order is the identity (a square transpose keeps the type).
    if (x->type() == t &&
        (c == OpCode::Broadcast || c == OpCode::Reshape ||
         (c == OpCode::Permute && is_identity_order(op.ints_attr("order")))))
      return x;
    // All elements of a constant or a splat are equal, so any rearrangement
    // of them is the same constant or splat in the new shape.
    if (auto k = constant_of(x))
      return make_constant(op, t, *k);
    Operation *inner = x->defining_op();
    if (!inner)
      return nullptr;
    if (inner->code() == OpCode::Splat) {
      Value *scalar = inner->operand(0);
      if (!t.is_block())
        return scalar;
      return builder_before(op).splat(scalar, t.shape());
    }
    if (inner->code() != c)
      return nullptr;
    Value *source = inner->operand(0);
    switch (c) {
    case OpCode::Broadcast:
    case OpCode::Reshape:
      if (source->type() == t)
        return source;
      return builder_before(op).create_value(c, {source}, t);
    case OpCode::Permute: {
      // result dim i = inner dim outer[i] = source dim inner[outer[i]]
      const auto &outer_order = op.ints_attr("order");
      const auto &inner_order = inner->ints_attr("order");
      std::vector<int64_t> order;
      for (int64_t d : outer_order)
        order.push_back(inner_order[static_cast<size_t>(d)]);
      if (is_identity_order(order))
        return source;
      return builder_before(op).create_value(OpCode::Permute, {source}, t,
                                             {{"order", order}});
    }
    default:
      return nullptr;
    }
  }

  // --- control flow --------------------------------------------------------

  /// An `if` on a constant condition becomes the ops of the taken region.
  void simplify_if(Operation &op) {
    auto cond = constant_of(op.operand(0));
    if (!cond)
      return;
    Block *taken = op.region(cond->integer ? 0 : 1);
    Block *home = op.parent_block();
    auto at = home->find(&op);
    while (taken->ops().front().get() != taken->terminator())
      home->insert(at, taken->remove(taken->ops().front().get()));
    replace(op, taken->terminator()->operands());
  }

  void simplify_for(Operation &op) {
    Value *lb = op.operand(0), *ub = op.operand(1), *step = op.operand(2);
    size_t carried = op.num_operands() - 3;
    std::vector<Value *> inits(op.operands().begin() + 3, op.operands().end());
    // No iteration: the results are the initial values, and whatever the
    // body would do never happens. As in Python's range, a loop counts up
    // while iv < ub and down (negative step) while iv > ub, so the step's
    // sign must be known; a step of 0 fails at run time and stays.
    if (auto l = constant_of(lb), u = constant_of(ub), s = constant_of(step);
        l && u && s) {
      Scalar t = lb->type().element();
      ConstantElement zero = ConstantElement::of_integer(0);
      auto up = fold_compare("gt", t, *s, zero);
      auto down = fold_compare("lt", t, *s, zero);
      bool counts = up && down && (up->integer || down->integer);
      auto runs = fold_compare(up && up->integer ? "lt" : "gt", t, *l, *u);
      if (counts && runs && runs->integer == 0) {
        replace(op, inits);
        return;
      }
    }
    // A carried value the body hands back unchanged (or replaces by its own
    // initial value) is the initial value in every iteration and after the
    // loop. Its uses are redirected here, immediately rather than through
    // replacements_ since the values stay alive; the slot itself, now a plain
    // forward, is left to dce.
    Block *body = op.region(0);
    Operation *yield = body->terminator();
    for (size_t i = 0; i < carried; ++i) {
      Value *arg = body->argument(i + 1);
      Value *next = yield->operand(i);
      if (next != arg && next != inits[i])
        continue;
      if (next != arg) {
        yield->set_operand(i, arg);
        changed_ = true;
      }
      bool arg_used = has_uses_besides(arg, yield, i);
      if (!arg_used && !function_.has_uses(op.result(i)))
        continue;
      function_.replace_all_uses(arg, inits[i]);
      yield->set_operand(i, arg);
      function_.replace_all_uses(op.result(i), inits[i]);
      changed_ = true;
    }
  }

  /// True when some op uses `v` other than as operand `slot` of `user`.
  bool has_uses_besides(Value *v, Operation *user, size_t slot) {
    bool used = false;
    function_.walk([&](Operation &other) {
      for (size_t i = 0; i < other.num_operands(); ++i)
        used |= other.operand(i) == v && !(&other == user && i == slot);
    });
    return used;
  }

  Function &function_;
  bool changed_ = false;
  std::unordered_map<Value *, Value *> replacements_;
  std::vector<std::unique_ptr<Operation>> removed_;
};

} // namespace

void canonicalize(Function &f) { Canonicalizer(f).run(); }

} // namespace blocc::ir
