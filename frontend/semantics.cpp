#include "semantics.h"

#include <limits>

namespace blocc::detail {

using ir::Scalar;
using ir::Type;

std::string dtype_name(Scalar s) { return std::string(ir::scalar_name(s)); }

std::string shape_str(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

Scalar promote(Scalar a, Scalar b) {
  if (a == b)
    return a;
  bool af = ir::is_float(a), bf = ir::is_float(b);
  if (af && bf) {
    int wa = ir::scalar_bits(a), wb = ir::scalar_bits(b);
    if (wa == wb) // f16 with bf16, or the two fp8 formats
      return Scalar::F32;
    return wa > wb ? a : b;
  }
  if (af)
    return a;
  if (bf)
    return b;
  // Both integers. i1 joins any other integer type as that type.
  if (a == Scalar::I1)
    return b;
  if (b == Scalar::I1)
    return a;
  int wa = ir::scalar_bits(a), wb = ir::scalar_bits(b);
  if (ir::is_signed(a) == ir::is_signed(b))
    return wa >= wb ? a : b;
  Scalar u = ir::is_signed(a) ? b : a, s = ir::is_signed(a) ? a : b;
  return ir::scalar_bits(u) >= ir::scalar_bits(s) ? u : s;
}

Scalar natural_dtype(const Operand &x) {
  switch (x.kind()) {
  case Operand::Kind::Value:
    return x.value()->type().element();
  case Operand::Kind::Int:
    if (x.is_bool())
      return Scalar::I1;
    if (x.int_value() < std::numeric_limits<int32_t>::min() ||
        x.int_value() > std::numeric_limits<int32_t>::max())
      return Scalar::I64;
    return Scalar::I32;
  case Operand::Kind::Float:
    return Scalar::F32;
  }
  return Scalar::I32;
}

Scalar computation_dtype(const Operand &a, const Operand &b) {
  // A weak constant adopts the tensor's type, unless it is a float meeting
  // an integer tensor (then the computation is in float32, as in Triton).
  auto weak_meets = [](const Operand &weak, const Operand &strong) {
    Scalar s = strong.value()->type().element();
    if (weak.kind() == Operand::Kind::Float && !ir::is_float(s))
      return Scalar::F32;
    return s;
  };
  if (a.is_value() && !b.is_value())
    return weak_meets(b, a);
  if (b.is_value() && !a.is_value())
    return weak_meets(a, b);
  return promote(natural_dtype(a), natural_dtype(b));
}

ir::Value *convert(ir::Value *v, Scalar dtype, const SourceLoc &loc) {
  const Type &t = v->type();
  if (t.is_pointer())
    user_error(loc, "cannot convert a pointer (" + t.str() + ") to " +
                        dtype_name(dtype) +
                        "; pointers only take integer offsets");
  if (t.element() == dtype)
    return v;
  auto &b = TraceContext::current(loc).at(loc);
  return b.create_value(ir::OpCode::Cast, {v},
                        t.with_element(Type::scalar(dtype)));
}

void check_block_shape(const Shape &shape, const std::string &what,
                       const SourceLoc &loc) {
  if (shape.empty() || shape.size() > static_cast<size_t>(ir::kMaxRank))
    user_error(loc, what + ": a block has 1 to " +
                        std::to_string(ir::kMaxRank) + " dimensions, got " +
                        shape_str(shape));
  for (int64_t d : shape)
    if (!ir::is_power_of_two(d))
      user_error(loc, what +
                          ": every dimension of a block must be a power "
                          "of two, got " +
                          shape_str(shape) +
                          "; round the size up to a power of two and mask "
                          "the extra elements");
}

ir::Value *natural_value(const Operand &x) {
  return x.is_value() ? x.value() : as_dtype(x, natural_dtype(x));
}

ir::Value *as_dtype(const Operand &x, Scalar dtype) {
  auto &ctx = TraceContext::current(x.loc());
  auto &b = ctx.at(x.loc());
  Type t = Type::scalar(dtype);
  switch (x.kind()) {
  case Operand::Kind::Value:
    return convert(x.value(), dtype, x.loc());
  case Operand::Kind::Int:
    if (ir::is_float(dtype))
      return b.float_constant(static_cast<double>(x.int_value()), t);
    return b.int_constant(x.int_value(), t);
  case Operand::Kind::Float:
    if (ir::is_float(dtype))
      return b.float_constant(x.float_value(), t);
    return b.int_constant(static_cast<int64_t>(x.float_value()), t);
  }
  return nullptr;
}

Shape broadcast_shapes(const Shape &a, const Shape &b, const SourceLoc &loc,
                       const std::string &what) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right: the shorter shape has leading 1s.
    int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      user_error(loc, what + ": shapes " + shape_str(a) + " and " +
                          shape_str(b) + " cannot be broadcast together (" +
                          std::to_string(da) + " vs " + std::to_string(db) +
                          " in dimension " + std::to_string(i) +
                          "); make them equal, or 1 where a value should be "
                          "repeated (bl::expand_dims / bl::broadcast_to)");
    out[i] = std::max(da, db);
  }
  return out;
}

ir::Value *broadcast_value(ir::Value *v, const Shape &shape,
                           const SourceLoc &loc) {
  const Type &t = v->type();
  if (t.shape() == shape)
    return v;
  auto &b = TraceContext::current(loc).at(loc);
  if (!t.is_block())
    return b.splat(v, shape);
  Shape from = t.shape();
  if (from.size() > shape.size())
    user_error(loc, "cannot broadcast " + t.str() +
                        " to the lower-rank shape " + shape_str(shape));
  if (from.size() < shape.size()) {
    Shape padded(shape.size() - from.size(), 1);
    padded.insert(padded.end(), from.begin(), from.end());
    v = b.create_value(ir::OpCode::Reshape, {v}, t.with_shape(padded));
    from = padded;
  }
  for (size_t i = 0; i < shape.size(); ++i)
    if (from[i] != shape[i] && from[i] != 1)
      user_error(loc, "cannot broadcast " + t.str() + " to shape " +
                          shape_str(shape));
  if (from == shape)
    return v;
  return b.create_value(ir::OpCode::Broadcast, {v},
                        v->type().with_shape(shape));
}

std::vector<ir::Value *> unify(const std::vector<const Operand *> &operands,
                               const std::vector<Scalar> &dtypes,
                               const std::string &what) {
  const SourceLoc &loc = operands.front()->loc();
  Shape shape;
  for (const Operand *o : operands)
    if (o->is_value())
      shape = broadcast_shapes(shape, o->value()->type().shape(), loc, what);
  std::vector<ir::Value *> out;
  for (size_t i = 0; i < operands.size(); ++i) {
    ir::Value *v = operands[i]->is_value() && dtypes[i] == Scalar::Ptr
                       ? operands[i]->value()
                       : as_dtype(*operands[i], dtypes[i]);
    out.push_back(broadcast_value(v, shape, loc));
  }
  return out;
}

} // namespace blocc::detail
