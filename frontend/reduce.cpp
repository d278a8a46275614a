// Reductions and scans: sum, max, min, prod, xor_sum, argmax/argmin, reduce
// with a user combine function, cumsum, cumprod and associative_scan. Each
// becomes one Reduce or Scan op whose combine region is traced by calling
// the combine function once on scalar region arguments (lhs..., rhs...).
//
// Typing, following Triton (see frontend/README.md, "Reductions and scans"):
// - sum and cumsum accumulate integers narrower than 32 bits in 32 bits:
//   signed ones in int32, unsigned ones in uint32, and bool in int32 (Triton
//   3 counts bools in uint32; a signed count is the safer default in C++).
// - Every other reduction and scan keeps the element type (Triton widens
//   max/min of narrow types to 32 bits for its GPU lowering; the values are
//   the same).
// - max/min ignore NaN like bl::maximum/bl::minimum; argmax/argmin agree
//   with them: a NaN never wins unless every element is NaN, so that
//   x[argmax(x)] == max(x). Ties pick the smallest index.
#include "semantics.h"

namespace blocc {

using detail::dtype_name;
using detail::TraceContext;
using detail::user_error;
using ir::OpCode;
using ir::Scalar;
using ir::Type;

namespace {

/// Built-in reductions do arithmetic on the elements: no pointers, no fp8.
void check_arithmetic(const Type &t, const std::string &what,
                      const SourceLoc &loc) {
  if (t.is_pointer())
    user_error(loc, what + " is not defined for pointers (" + t.str() +
                        "); convert them with bl::cast(p, bl::int64) first");
  if (ir::is_fp8(t.element()))
    user_error(loc, what + ": fp8 is a storage type; convert " + t.str() +
                        " to float16 or float32 with bl::cast first");
}

/// A possibly negative axis, checked against x's rank and made absolute.
int resolve_axis(int axis, const Type &t, const std::string &what,
                 const SourceLoc &loc, bool none_allowed) {
  int rank = t.rank();
  if (rank == 0)
    user_error(loc, what + ": axis " + std::to_string(axis) +
                        " is out of range for the scalar " + t.str() +
                        ", which has no axes" +
                        (none_allowed ? "; leave the axis out" : ""));
  if (axis < -rank || axis >= rank)
    user_error(loc,
               what + ": axis " + std::to_string(axis) +
                   " is out of range for " + t.str() + " of rank " +
                   std::to_string(rank) + "; use an axis from " +
                   std::to_string(-rank) + " to " + std::to_string(rank - 1) +
                   (none_allowed ? ", or none to reduce the whole block" : ""));
  return axis < 0 ? axis + rank : axis;
}

/// How a user names an element type: "bl::int32".
std::string dtype_constant(Scalar s) {
  switch (s) {
  case Scalar::I1:
    return "bl::int1";
  case Scalar::I8:
    return "bl::int8";
  case Scalar::I16:
    return "bl::int16";
  case Scalar::I32:
    return "bl::int32";
  case Scalar::I64:
    return "bl::int64";
  case Scalar::U8:
    return "bl::uint8";
  case Scalar::U16:
    return "bl::uint16";
  case Scalar::U32:
    return "bl::uint32";
  case Scalar::U64:
    return "bl::uint64";
  case Scalar::F16:
    return "bl::float16";
  case Scalar::BF16:
    return "bl::bfloat16";
  case Scalar::F32:
    return "bl::float32";
  case Scalar::F64:
    return "bl::float64";
  case Scalar::F8E4M3:
    return "bl::float8e4m3";
  case Scalar::F8E5M2:
    return "bl::float8e5m2";
  case Scalar::Ptr:
    break;
  }
  return dtype_name(s);
}

/// Restores the builder's insertion point when the combine region is done,
/// also when the combine function throws.
class InsertionGuard {
public:
  explicit InsertionGuard(ir::Builder &b)
      : builder_(b), block_(b.block()), point_(b.point()) {}
  ~InsertionGuard() { builder_.restore(block_, point_); }

private:
  ir::Builder &builder_;
  ir::Block *block_;
  ir::Block::iterator point_;
};

/// " (computed at file.cpp:12)" for a value whose op knows its line.
std::string computed_at(ir::Value *v) {
  if (ir::Operation *op = v->defining_op(); op && op->loc().known())
    return " (computed at " + op->loc().str() + ")";
  return "";
}

/// Traces the combine region of `op`: calls `combine` on its arguments and
/// yields what it returns, after checking one scalar of each operand's
/// element type comes back.
void trace_combine(ir::Operation *op, const std::vector<Type> &elements,
                   const CombineN &combine, const std::string &what,
                   const SourceLoc &loc) {
  TraceContext &ctx = TraceContext::current(loc);
  size_t n = elements.size();
  ir::Block *region = op->add_region();
  std::vector<Tensor> lhs, rhs;
  for (size_t i = 0; i < 2 * n; ++i)
    (i < n ? lhs : rhs).emplace_back(region->add_argument(elements[i % n]));

  auto before = ctx.bindings();
  ir::Builder &b = ctx.at(loc);
  InsertionGuard guard(b);
  b.set_insertion_point_to_end(region);
  std::vector<Tensor> results = combine(lhs, rhs);

  if (results.size() != n)
    user_error(loc, what + ": the combine function returns " +
                        std::to_string(results.size()) + " value" +
                        (results.size() == 1 ? "" : "s") + " for " +
                        std::to_string(n) + " operand" + (n == 1 ? "" : "s") +
                        "; it must return one scalar per operand, in the "
                        "operands' order");
  std::vector<ir::Value *> yields;
  for (size_t i = 0; i < n; ++i) {
    // Through Operand, which rejects a value of a loop that has ended.
    ir::Value *v = Operand(results[i], loc).value();
    const Type &t = v->type();
    std::string which = n == 1 ? "" : " for operand " + std::to_string(i);
    if (t.is_block())
      user_error(loc, what + ": the combine function returns the block " +
                          t.str() + which + computed_at(v) +
                          "; it combines two elements, so it must return a "
                          "scalar");
    if (t != elements[i])
      user_error(loc, what + ": the combine function returns " + t.str() +
                          which + computed_at(v) + " but the elements are " +
                          elements[i].str() + "; convert it with .to(" +
                          dtype_constant(elements[i].element()) +
                          ") so that both match");
    yields.push_back(v);
  }
  ctx.at(loc).create(OpCode::Yield, yields, {});

  // A variable of the kernel body rebound inside the combine function would
  // name a value that exists only inside the region.
  for (const auto &binding : before) {
    Tensor *var = ctx.variable(binding.id);
    if (!var || !var->bound() || var->value() == binding.value)
      continue;
    ir::Block *home = var->value()->owner_block();
    if (home && home->is_nested_in(region))
      ctx.poison(*var, "this variable was assigned inside the combine "
                       "function of " +
                           what + " at " + detail::where(loc) +
                           ", whose values exist only there; return the "
                           "value from the combine function instead");
  }
}

} // namespace

void detail::reject_in_combine(const std::string &what, const SourceLoc &loc,
                               const std::string &instead) {
  const ir::Block *block = TraceContext::current(loc).builder().block();
  for (const ir::Operation *op = block ? block->parent_op() : nullptr; op;
       op = op->parent_block() ? op->parent_block()->parent_op() : nullptr) {
    if (op->code() != OpCode::Reduce && op->code() != OpCode::Scan)
      continue;
    user_error(loc, what + " cannot be used in the combine function of the " +
                        op->describe() +
                        ": a combine function is a pure function of the "
                        "elements it combines (backends call it as often "
                        "and in whatever order they fold), so it cannot "
                        "access memory, print or assert; " +
                        instead);
  }
}

namespace {

/// One Reduce (or Scan) over blocks of one shape along a resolved axis.
std::vector<Tensor> collective(OpCode code, const std::vector<ir::Value *> &xs,
                               int axis, bool reverse, const CombineN &combine,
                               const std::string &what, const SourceLoc &loc) {
  std::vector<Type> results, elements;
  for (ir::Value *x : xs) {
    Type t = x->type();
    elements.push_back(t.element_type());
    if (code == OpCode::Reduce) {
      Shape shape = t.shape();
      shape.erase(shape.begin() + axis);
      t = Type::block(t.element_type(), shape); // a scalar from rank 1
    }
    results.push_back(t);
  }
  ir::Attributes attrs{{"axis", int64_t{axis}}};
  if (reverse)
    attrs["reverse"] = int64_t{1};
  ir::Operation *op =
      TraceContext::current(loc).at(loc).create(code, xs, results, attrs);
  trace_combine(op, elements, combine, what, loc);
  std::vector<Tensor> out;
  for (ir::Value *r : op->results())
    out.emplace_back(r);
  return out;
}

/// A reduction along `axis`, or over the whole block (flattened first, as
/// Triton does) when there is none. Reducing a scalar gives it back.
std::vector<Tensor> reduction(std::vector<ir::Value *> xs, Axis axis,
                              const CombineN &combine, const std::string &what,
                              const SourceLoc &loc) {
  const Type &t = xs.front()->type();
  if (!axis) {
    if (!t.is_block())
      return std::vector<Tensor>(xs.begin(), xs.end());
    if (t.rank() > 1) {
      ir::Builder &b = TraceContext::current(loc).at(loc);
      for (ir::Value *&x : xs)
        x = b.create_value(OpCode::Reshape, {x},
                           x->type().with_shape({x->type().num_elements()}));
    }
    return collective(OpCode::Reduce, xs, 0, false, combine, what, loc);
  }
  int resolved = resolve_axis(*axis, t, what, loc, /*none_allowed=*/true);
  return collective(OpCode::Reduce, xs, resolved, false, combine, what, loc);
}

/// The combine of a built-in reduction: one elementwise op.
CombineN elementwise_combine(OpCode code, const SourceLoc &loc) {
  return
      [code, loc](const std::vector<Tensor> &l, const std::vector<Tensor> &r) {
        ir::Builder &b = TraceContext::current(loc).at(loc);
        return std::vector<Tensor>{
            Tensor(b.binary(code, l[0].value(loc), r[0].value(loc)))};
      };
}

/// The type sum and cumsum accumulate in (Triton's rule, bool aside).
Scalar sum_dtype(Scalar s) {
  if (!ir::is_integer(s) || ir::scalar_bits(s) >= 32)
    return s;
  if (s == Scalar::I1 || ir::is_signed(s))
    return Scalar::I32;
  return Scalar::U32;
}

/// A value for a built-in reduction or scan, checked and converted to the
/// type it accumulates in.
ir::Value *arithmetic_input(const Operand &x, const std::string &what,
                            bool widen_sums) {
  ir::Value *v = detail::natural_value(x);
  check_arithmetic(v->type(), what, x.loc());
  if (widen_sums)
    v = detail::convert(v, sum_dtype(v->type().element()), x.loc());
  return v;
}

Tensor builtin_reduction(const Operand &x, Axis axis, OpCode code,
                         const std::string &what, bool widen = false) {
  ir::Value *v = arithmetic_input(x, what, widen);
  return reduction({v}, axis, elementwise_combine(code, x.loc()), what,
                   x.loc())[0];
}

/// argmax/argmin: reduces (value, index) pairs. The pair with the larger
/// (smaller) value wins; a NaN loses to any number; equal values and two
/// NaNs go to the smaller index. This is a total order, so any reduction
/// tree gives the same answer.
Tensor arg_reduction(const Operand &x, int axis, const char *predicate,
                     const std::string &what) {
  const SourceLoc &loc = x.loc();
  ir::Value *v = detail::natural_value(x);
  const Type &t = v->type();
  if (!t.is_block())
    user_error(loc, what + " needs a block, got the scalar " + t.str() +
                        "; a scalar has no index to return");
  check_arithmetic(t, what, loc);
  int resolved = resolve_axis(axis, t, what, loc, /*none_allowed=*/false);

  // The index of every element along the axis, as int32.
  ir::Builder &b = TraceContext::current(loc).at(loc);
  int64_t length = t.dim(resolved);
  Type i32 = Type::scalar(Scalar::I32);
  ir::Value *index =
      b.create_value(OpCode::Arange, {}, Type::block(i32, {length}),
                     {{"start", int64_t{0}}, {"end", length}});
  Shape line(t.rank(), 1);
  line[resolved] = length;
  if (t.rank() > 1)
    index = b.create_value(OpCode::Reshape, {index}, Type::block(i32, line));
  index = detail::broadcast_value(index, t.shape(), loc);

  bool is_float = t.is_float();
  std::string better = predicate;
  CombineN combine = [=](const std::vector<Tensor> &l,
                         const std::vector<Tensor> &r) {
    ir::Builder &b = TraceContext::current(loc).at(loc);
    ir::Value *lv = l[0].value(loc), *li = l[1].value(loc);
    ir::Value *rv = r[0].value(loc), *ri = r[1].value(loc);
    auto both = [&](ir::Value *p, ir::Value *q) {
      return b.binary(OpCode::And, p, q);
    };
    auto either = [&](ir::Value *p, ir::Value *q) {
      return b.binary(OpCode::Or, p, q);
    };
    ir::Value *wins = b.cmp(better, lv, rv);
    ir::Value *tie = b.cmp("eq", lv, rv);
    if (is_float) {
      // `ne` is the one unordered comparison: x != x only for NaN.
      ir::Value *l_nan = b.cmp("ne", lv, lv), *r_nan = b.cmp("ne", rv, rv);
      ir::Value *l_number = b.cmp("eq", lv, lv);
      wins = both(l_number, either(r_nan, wins));
      tie = either(tie, both(l_nan, r_nan));
    }
    ir::Value *left = either(wins, both(tie, b.cmp("lt", li, ri)));
    Type vt = lv->type(), it = li->type();
    return std::vector<Tensor>{
        Tensor(b.create_value(OpCode::Select, {left, lv, rv}, vt)),
        Tensor(b.create_value(OpCode::Select, {left, li, ri}, it))};
  };
  return collective(OpCode::Reduce, {v, index}, resolved, false, combine, what,
                    loc)[1];
}

Tensor scan(const Operand &x, int axis, bool reverse, const CombineN &combine,
            const std::string &what, ir::Value *v) {
  const SourceLoc &loc = x.loc();
  const Type &t = v->type();
  if (!t.is_block())
    user_error(loc, what + " needs a block, got the scalar " + t.str());
  int resolved = resolve_axis(axis, t, what, loc, /*none_allowed=*/false);
  return collective(OpCode::Scan, {v}, resolved, reverse, combine, what,
                    loc)[0];
}

CombineN single(const Combine &combine) {
  return [combine](const std::vector<Tensor> &l, const std::vector<Tensor> &r) {
    return std::vector<Tensor>{combine(l[0], r[0])};
  };
}

} // namespace

Tensor sum(Operand x, Axis axis) {
  return builtin_reduction(x, axis, OpCode::Add, "bl::sum", /*widen=*/true);
}

Tensor max(Operand x, Axis axis) {
  return builtin_reduction(x, axis, OpCode::Maximum, "bl::max");
}

Tensor min(Operand x, Axis axis) {
  return builtin_reduction(x, axis, OpCode::Minimum, "bl::min");
}

Tensor prod(Operand x, Axis axis) {
  return builtin_reduction(x, axis, OpCode::Mul, "bl::prod");
}

Tensor xor_sum(Operand x, Axis axis) {
  Scalar s = detail::natural_dtype(x);
  if (!ir::is_integer(s) || (x.is_value() && x.value()->type().is_pointer()))
    user_error(x.loc(), "bl::xor_sum needs integer elements, got " +
                            x.describe() +
                            "; to xor the bits of floats, bl::bitcast them "
                            "to an integer type of the same width first");
  return builtin_reduction(x, axis, OpCode::Xor, "bl::xor_sum");
}

Tensor argmax(Operand x, int axis) {
  return arg_reduction(x, axis, "gt", "bl::argmax");
}

Tensor argmin(Operand x, int axis) {
  return arg_reduction(x, axis, "lt", "bl::argmin");
}

Tensor reduce(Operand x, Axis axis, const Combine &combine) {
  return reduction({detail::natural_value(x)}, axis, single(combine),
                   "bl::reduce", x.loc())[0];
}

std::vector<Tensor> reduce(const std::vector<Tensor> &xs, int axis,
                           const CombineN &combine, SourceLoc loc) {
  if (xs.empty())
    user_error(loc, "bl::reduce needs at least one tensor to reduce");
  std::vector<ir::Value *> values;
  for (size_t i = 0; i < xs.size(); ++i) {
    values.push_back(Operand(xs[i], loc).value());
    if (values[i]->type().shape() != values[0]->type().shape())
      user_error(loc, "bl::reduce: operand " + std::to_string(i) + " (" +
                          values[i]->type().str() +
                          ") does not have the shape of operand 0 (" +
                          values[0]->type().str() +
                          "); reduced together, all operands must have one "
                          "shape (bl::broadcast_to the smaller one)");
  }
  return reduction(values, axis, combine, "bl::reduce", loc);
}

Tensor cumsum(Operand x, int axis, bool reverse) {
  ir::Value *v = arithmetic_input(x, "bl::cumsum", /*widen_sums=*/true);
  return scan(x, axis, reverse, elementwise_combine(OpCode::Add, x.loc()),
              "bl::cumsum", v);
}

Tensor cumprod(Operand x, int axis, bool reverse) {
  ir::Value *v = arithmetic_input(x, "bl::cumprod", /*widen_sums=*/false);
  return scan(x, axis, reverse, elementwise_combine(OpCode::Mul, x.loc()),
              "bl::cumprod", v);
}

Tensor associative_scan(Operand x, int axis, const Combine &combine,
                        bool reverse) {
  return scan(x, axis, reverse, single(combine), "bl::associative_scan",
              detail::natural_value(x));
}

} // namespace blocc
