// Shape operations: expand_dims, broadcast_to, reshape, permute/trans,
// join/split and cat. None of them computes anything; each only rearranges
// elements, so the checks here are about shapes, ranks and element types,
// and every message names the caller's line and the shape that would work.
//
// Decisions where Triton leaves room:
// - A C++ number given to a shape op is a scalar of its natural type (int32,
//   int64, float32 or bool), as Triton turns a Python number into a tensor.
// - join broadcasts its operands to one shape (as Triton does) but does not
//   promote: both must have one element type, except that a C++ number takes
//   the other operand's type.
// - cat is deterministic: the result holds a's rows, then b's rows. Triton's
//   cat may reorder elements (can_reorder); blocc never does. Both blocks
//   must have one shape, since the concatenated dimension a + b must stay a
//   power of two.
#include "semantics.h"

#include <algorithm>

namespace blocc {

using detail::shape_str;
using detail::user_error;
using ir::OpCode;
using ir::Type;

namespace {

ir::Builder &builder_at(const SourceLoc &loc) {
  return detail::TraceContext::current(loc).at(loc);
}

/// The rank a result of `what` would have, checked against the IR's limit.
void check_result_rank(size_t rank, const std::string &what, const Type &from,
                       const SourceLoc &loc) {
  if (rank > static_cast<size_t>(ir::kMaxRank))
    user_error(loc, what + ": " + from.str() + " already has rank " +
                        std::to_string(from.rank()) +
                        " and blocks have at most " +
                        std::to_string(ir::kMaxRank) +
                        " dimensions; bl::reshape it to fewer dimensions "
                        "first");
}

Type with_shape(const Type &t, const Shape &shape) {
  return Type::block(t.element_type(), shape);
}

} // namespace

Tensor expand_dims(Operand x, int axis) {
  const SourceLoc &loc = x.loc();
  ir::Value *v = detail::natural_value(x);
  const Type &t = v->type();
  int rank = t.rank();
  // As in Triton, the axis indexes the result, so -1 appends a dimension.
  if (axis < -(rank + 1) || axis > rank)
    user_error(loc, "bl::expand_dims: axis " + std::to_string(axis) +
                        " is out of range for " + t.str() + " (rank " +
                        std::to_string(rank) + "); use an axis from " +
                        std::to_string(-(rank + 1)) + " to " +
                        std::to_string(rank));
  int at = axis < 0 ? axis + rank + 1 : axis;
  check_result_rank(rank + 1, "bl::expand_dims", t, loc);
  Shape shape = t.shape();
  shape.insert(shape.begin() + at, 1);
  return Tensor(builder_at(loc).create_value(
      OpCode::ExpandDims, {v}, with_shape(t, shape), {{"axis", int64_t{at}}}));
}

Tensor broadcast_to(Operand x, const Shape &shape) {
  const SourceLoc &loc = x.loc();
  ir::Value *v = detail::natural_value(x);
  const Type &t = v->type();
  if (shape.empty()) {
    if (t.is_block())
      user_error(loc, "bl::broadcast_to: cannot broadcast " + t.str() +
                          " to a scalar; reduce it instead (bl::sum, "
                          "bl::max, ...)");
    return Tensor(v);
  }
  detail::check_block_shape(shape, "bl::broadcast_to", loc);
  Shape from = t.shape();
  if (from.size() > shape.size())
    user_error(loc, "bl::broadcast_to: cannot broadcast " + t.str() +
                        " to the lower-rank shape " + shape_str(shape) +
                        "; broadcasting only adds leading dimensions "
                        "(use bl::reshape to drop dimensions)");
  // Numpy alignment: trailing dimensions face each other.
  size_t lead = shape.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != shape[lead + i])
      user_error(loc, "bl::broadcast_to: cannot broadcast " + t.str() + " to " +
                          shape_str(shape) + ": dimension " +
                          std::to_string(i) + " has size " +
                          std::to_string(from[i]) + " but the target has " +
                          std::to_string(shape[lead + i]) +
                          "; only dimensions of size 1 can grow (insert "
                          "them with bl::expand_dims)");
  return Tensor(detail::broadcast_value(v, shape, loc));
}

Tensor reshape(Operand x, const Shape &shape) {
  const SourceLoc &loc = x.loc();
  ir::Value *v = detail::natural_value(x);
  const Type &t = v->type();
  if (shape.empty()) {
    if (t.is_block())
      user_error(loc, "bl::reshape: cannot reshape " + t.str() +
                          " to a scalar; a block of one element is read as "
                          "a scalar with a reduction such as bl::sum(x)");
    return Tensor(v);
  }
  detail::check_block_shape(shape, "bl::reshape", loc);
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  if (count != t.num_elements())
    user_error(loc, "bl::reshape: cannot reshape " + t.str() + " (" +
                        std::to_string(t.num_elements()) + " elements) to " +
                        shape_str(shape) + " (" + std::to_string(count) +
                        " elements); the element count must stay the same");
  if (t.shape() == shape)
    return Tensor(v);
  ir::Builder &b = builder_at(loc);
  if (!t.is_block()) // one element: the scalar, splatted
    return Tensor(b.splat(v, shape));
  return Tensor(b.create_value(OpCode::Reshape, {v}, with_shape(t, shape)));
}

Tensor permute(Operand x, const std::vector<int> &order) {
  const SourceLoc &loc = x.loc();
  ir::Value *v = detail::natural_value(x);
  const Type &t = v->type();
  std::string order_text = "[";
  for (size_t i = 0; i < order.size(); ++i)
    order_text += (i ? ", " : "") + std::to_string(order[i]);
  order_text += "]";
  if (!t.is_block())
    user_error(loc, "bl::permute needs a block, got the scalar " + t.str());
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = sorted.size() == static_cast<size_t>(t.rank());
  for (size_t i = 0; is_permutation && i < sorted.size(); ++i)
    is_permutation = sorted[i] == static_cast<int>(i);
  if (!is_permutation)
    user_error(loc, "bl::permute: " + order_text +
                        " is not a permutation of the dimensions of " +
                        t.str() + "; list each of 0 to " +
                        std::to_string(t.rank() - 1) + " exactly once");
  Shape shape;
  std::vector<int64_t> attr;
  for (int d : order) {
    shape.push_back(t.dim(d));
    attr.push_back(d);
  }
  return Tensor(builder_at(loc).create_value(
      OpCode::Permute, {v}, with_shape(t, shape), {{"order", attr}}));
}

Tensor trans(Operand x) {
  const SourceLoc &loc = x.loc();
  ir::Value *v = detail::natural_value(x);
  int rank = v->type().rank();
  if (rank != 2)
    user_error(loc, "bl::trans without an order transposes a 2-D block, got " +
                        v->type().str() +
                        (rank == 3 ? "; give the order of the dimensions, e.g. "
                                     "bl::trans(x, {0, 2, 1})"
                         : rank == 1 ? "; make it a 1 x N row first with "
                                       "bl::expand_dims(x, 0)"
                                     : "; a scalar has nothing to transpose"));
  return permute(x, {1, 0});
}

Tensor trans(Operand x, const std::vector<int> &order) {
  return permute(x, order);
}

Tensor join(Operand a, Operand b) {
  const SourceLoc &loc = a.loc();
  bool pointers = (a.is_value() && a.value()->type().is_pointer()) ||
                  (b.is_value() && b.value()->type().is_pointer());
  ir::Scalar dtype;
  if (a.is_value() && b.is_value()) {
    const Type &ta = a.value()->type(), &tb = b.value()->type();
    if (ta.element_type() != tb.element_type())
      user_error(loc, "bl::join: " + a.describe() + " and " + b.describe() +
                          " differ in element type; convert one with "
                          ".to(...) so that both match");
    dtype = ta.element();
  } else if (pointers) {
    user_error(loc, "bl::join: cannot join a pointer with " +
                        (a.is_value() ? b : a).describe() +
                        "; join two pointer blocks of one type");
  } else {
    dtype = detail::computation_dtype(a, b);
  }
  // unify brings both to their broadcast shape (and C++ numbers to dtype).
  std::vector<ir::Value *> v =
      detail::unify({&a, &b}, {dtype, dtype}, "bl::join");
  const Type &t = v[0]->type();
  check_result_rank(t.rank() + 1, "bl::join", t, loc);
  ir::Builder &builder = builder_at(loc);
  if (!t.is_block()) {
    // Two scalars make a block of two; the IR joins blocks, so go through
    // blocks of one element.
    Shape one{1};
    ir::Value *pair = builder.create_value(
        OpCode::Join, {builder.splat(v[0], one), builder.splat(v[1], one)},
        with_shape(t, {1, 2}));
    return Tensor(
        builder.create_value(OpCode::Reshape, {pair}, with_shape(t, {2})));
  }
  Shape shape = t.shape();
  shape.push_back(2);
  return Tensor(
      builder.create_value(OpCode::Join, {v[0], v[1]}, with_shape(t, shape)));
}

std::pair<Tensor, Tensor> split(Operand x) {
  const SourceLoc &loc = x.loc();
  ir::Value *v = detail::natural_value(x);
  const Type &t = v->type();
  if (!t.is_block() || t.dim(t.rank() - 1) != 2)
    user_error(loc, "bl::split: " + t.str() +
                        " cannot be split; it needs a last dimension of "
                        "size 2 (as bl::join makes), e.g. "
                        "bl::reshape(x, {..., 2})");
  Shape shape = t.shape();
  shape.pop_back();
  Type half = with_shape(t, shape); // a scalar when x has rank 1
  ir::Operation *op = builder_at(loc).create(OpCode::Split, {v}, {half, half});
  return {Tensor(op->result(0)), Tensor(op->result(1))};
}

Tensor cat(Operand a, Operand b) {
  const SourceLoc &loc = a.loc();
  ir::Value *va = detail::natural_value(a), *vb = detail::natural_value(b);
  const Type &ta = va->type(), &tb = vb->type();
  if (!ta.is_block() || !tb.is_block())
    user_error(loc, "bl::cat concatenates blocks, got " + ta.str() + " and " +
                        tb.str() +
                        "; for two scalars use bl::join, which makes a "
                        "block of two");
  if (ta.element_type() != tb.element_type())
    user_error(loc, "bl::cat: " + ta.str() + " and " + tb.str() +
                        " differ in element type; convert one with .to(...) "
                        "so that both match");
  if (ta.shape() != tb.shape())
    user_error(loc, "bl::cat: " + ta.str() + " and " + tb.str() +
                        " differ in shape; bl::cat needs blocks of one shape, "
                        "since the concatenated dimension must stay a power "
                        "of two (broadcast or pad the smaller one)");
  Shape shape = ta.shape();
  shape[0] *= 2;
  return Tensor(builder_at(loc).create_value(
      OpCode::Cat, {va, vb}, with_shape(ta, shape), {{"axis", int64_t{0}}}));
}

} // namespace blocc
