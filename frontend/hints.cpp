// Compiler hints (tl.multiple_of, tl.max_contiguous, tl.max_constancy):
// the value passes through unchanged, and the axis-info analysis
// (ir/axis_info.h) takes the stated facts as given, per dimension:
//  - multiple_of: the first element of every contiguous run (every element
//    when there are no runs) is a multiple of the value;
//  - max_contiguous: elements come in runs of that many consecutive values;
//  - max_constancy: elements come in runs of that many equal values.
// The user vouches for them: a wrong hint gives wrong code on backends that
// vectorize by them (the reference interpreter ignores hints).
//
// `values` has one entry per dimension (one for a scalar), or a single entry
// that applies to every dimension. Every value must be positive; the
// analysis keeps its largest power-of-two factor (it tracks powers of two),
// and runs longer than the dimension are cut to it. multiple_of and
// max_contiguous speak about integers used as offsets or about pointers, so
// they are rejected on float and bool values; max_constancy fits any type.
#include "semantics.h"

namespace blocc {

using detail::user_error;
using ir::OpCode;
using ir::Scalar;

namespace {

std::string list_str(const std::vector<int64_t> &values) {
  std::string s = "{";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "}";
}

Tensor hint(OpCode code, const char *name, const Operand &x,
            std::vector<int64_t> values) {
  std::string what = std::string("bl::") + name;
  if (!x.is_value())
    user_error(x.loc(), what + " needs a tensor, got " + x.describe() +
                            "; a hint describes a traced value (a constant's "
                            "facts are already known)");
  const ir::Type &t = x.value()->type();
  bool addressable =
      t.is_pointer() || (t.is_integer() && t.element() != Scalar::I1);
  if (code != OpCode::MaxConstancy && !addressable)
    user_error(x.loc(), what + " describes integer offsets or pointers, got " +
                            t.str() +
                            "; apply it to the integer offsets before they "
                            "index memory (bl::max_constancy fits any type)");
  size_t dims = std::max(1, t.rank());
  if (values.size() == 1)
    values.assign(dims, values.front());
  if (values.size() != dims)
    user_error(x.loc(), what + list_str(values) + ": " + t.str() + " has " +
                            std::to_string(dims) + " dimension" +
                            (dims == 1 ? "" : "s") +
                            "; give one value per dimension, or a single "
                            "value for all of them");
  for (int64_t v : values)
    if (v < 1)
      user_error(x.loc(), what + list_str(values) +
                              ": hint values must be positive, got " +
                              std::to_string(v));
  auto &b = detail::TraceContext::current(x.loc()).at(x.loc());
  return Tensor(
      b.create_value(code, {x.value()}, t, {{"values", std::move(values)}}));
}

} // namespace

Tensor multiple_of(Operand x, const std::vector<int64_t> &values) {
  return hint(OpCode::MultipleOf, "multiple_of", x, values);
}
Tensor multiple_of(Operand x, int64_t value) {
  return hint(OpCode::MultipleOf, "multiple_of", x, {value});
}
Tensor max_contiguous(Operand x, const std::vector<int64_t> &values) {
  return hint(OpCode::MaxContiguous, "max_contiguous", x, values);
}
Tensor max_contiguous(Operand x, int64_t value) {
  return hint(OpCode::MaxContiguous, "max_contiguous", x, {value});
}
Tensor max_constancy(Operand x, const std::vector<int64_t> &values) {
  return hint(OpCode::MaxConstancy, "max_constancy", x, values);
}
Tensor max_constancy(Operand x, int64_t value) {
  return hint(OpCode::MaxConstancy, "max_constancy", x, {value});
}

} // namespace blocc
