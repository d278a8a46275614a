#include "backends/interpreter/shape_ops.h"

#include "ir/function.h"

namespace blocc::interp {

using ir::OpCode;

namespace {

void copy_lane(RuntimeValue &dst, int64_t i, const RuntimeValue &src,
               int64_t j) {
  dst.bits[i] = src.bits[j];
  if (dst.is_pointer())
    dst.provenance[i] = src.provenance_at(j);
}

/// Fills every lane i of `r` from lane source(index of i) of `src`.
template <typename F>
void gather(RuntimeValue &r, const RuntimeValue &src, F source) {
  std::vector<int64_t> shape = r.type.shape();
  for (int64_t i = 0; i < r.size(); ++i)
    copy_lane(r, i, src, source(unflatten(i, shape)));
}

void expect_operands(const ExecutionSite &site,
                     const std::vector<const RuntimeValue *> &operands,
                     size_t n) {
  if (operands.size() != n)
    site.fail("expects " + std::to_string(n) + " operand" +
              (n == 1 ? "" : "s") + ", got " + std::to_string(operands.size()));
}

/// Resolves a possibly negative axis against `rank`.
int64_t resolve_axis(const ExecutionSite &site, int64_t axis, int64_t rank) {
  int64_t resolved = axis < 0 ? axis + rank : axis;
  if (resolved < 0 || resolved >= rank)
    site.fail("axis " + std::to_string(axis) + " is out of range for rank " +
              std::to_string(rank));
  return resolved;
}

RuntimeValue broadcast(const ExecutionSite &site, const RuntimeValue &x,
                       const ir::Type &type) {
  RuntimeValue r(type);
  std::vector<int64_t> from = x.type.shape(), to = type.shape();
  if (from.size() > to.size())
    site.fail("cannot broadcast " + x.type.str() + " to " + type.str());
  // Shapes align at their last dimension, as numpy's do.
  size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[d + lead])
      site.fail("cannot broadcast " + x.type.str() + " to " + type.str() +
                ": dimension " + std::to_string(d) + " is neither 1 nor " +
                std::to_string(to[d + lead]));
  gather(r, x, [&](const std::vector<int64_t> &index) {
    int64_t flat = 0;
    for (size_t d = 0; d < from.size(); ++d)
      flat = flat * from[d] + (from[d] == 1 ? 0 : index[d + lead]);
    return flat;
  });
  return r;
}

/// Same lanes in the same order under another shape.
RuntimeValue relabel(const ExecutionSite &site, const RuntimeValue &x,
                     const ir::Type &type) {
  if (type.num_elements() != x.size())
    site.fail("cannot reshape " + x.type.str() + " (" +
              std::to_string(x.size()) + " elements) to " + type.str());
  RuntimeValue r = x;
  r.type = type;
  return r;
}

RuntimeValue permute(const ExecutionSite &site, const RuntimeValue &x,
                     const ir::Type &type) {
  const std::vector<int64_t> &order = site.op->ints_attr("order");
  std::vector<int64_t> from = x.type.shape();
  bool valid = order.size() == from.size() && type.rank() == x.type.rank();
  std::vector<bool> seen(from.size(), false);
  for (size_t i = 0; valid && i < order.size(); ++i) {
    valid = order[i] >= 0 && order[i] < static_cast<int64_t>(from.size()) &&
            !seen[order[i]] && type.dim(static_cast<int>(i)) == from[order[i]];
    if (valid)
      seen[order[i]] = true;
  }
  if (!valid)
    site.fail("order does not permute " + x.type.str() + " into " + type.str());
  RuntimeValue r(type);
  gather(r, x, [&](const std::vector<int64_t> &index) {
    std::vector<int64_t> source(from.size());
    for (size_t i = 0; i < order.size(); ++i)
      source[order[i]] = index[i]; // result dim i is operand dim order[i]
    return flatten(source, from);
  });
  return r;
}

RuntimeValue join(const ExecutionSite &site, const RuntimeValue &a,
                  const RuntimeValue &b, const ir::Type &type) {
  if (a.type.shape() != b.type.shape() || type.num_elements() != 2 * a.size())
    site.fail("cannot join " + a.type.str() + " and " + b.type.str() +
              " into " + type.str());
  RuntimeValue r(type);
  // The new last dimension has size 2, so lane 2j + k comes from lane j of
  // a (k = 0) or b (k = 1).
  for (int64_t i = 0; i < r.size(); ++i)
    copy_lane(r, i, i % 2 ? b : a, i / 2);
  return r;
}

std::vector<RuntimeValue> split(const ExecutionSite &site,
                                const RuntimeValue &x) {
  const ir::Operation &op = *site.op;
  if (op.num_results() != 2 || x.type.rank() == 0 ||
      x.type.dim(x.type.rank() - 1) != 2)
    site.fail("split needs a last dimension of 2 and two results, got " +
              x.type.str());
  std::vector<RuntimeValue> results;
  for (int k = 0; k < 2; ++k) {
    RuntimeValue r(op.result(k)->type());
    if (2 * r.size() != x.size())
      site.fail("result " + r.type.str() + " does not hold half of " +
                x.type.str());
    for (int64_t j = 0; j < r.size(); ++j)
      copy_lane(r, j, x, 2 * j + k);
    results.push_back(std::move(r));
  }
  return results;
}

RuntimeValue cat(const ExecutionSite &site, const RuntimeValue &a,
                 const RuntimeValue &b, const ir::Type &type) {
  int64_t rank = a.type.rank();
  int64_t axis = resolve_axis(
      site, site.op->has_attr("axis") ? site.op->int_attr("axis") : 0, rank);
  std::vector<int64_t> sa = a.type.shape(), sb = b.type.shape(),
                       sr = type.shape();
  bool valid = b.type.rank() == rank && type.rank() == rank;
  for (int64_t d = 0; valid && d < rank; ++d)
    valid =
        d == axis ? sr[d] == sa[d] + sb[d] : sa[d] == sb[d] && sa[d] == sr[d];
  if (!valid)
    site.fail("cannot concatenate " + a.type.str() + " and " + b.type.str() +
              " along axis " + std::to_string(axis) + " into " + type.str());
  RuntimeValue r(type);
  for (int64_t i = 0; i < r.size(); ++i) {
    std::vector<int64_t> index = unflatten(i, sr);
    if (index[axis] < sa[axis]) {
      copy_lane(r, i, a, flatten(index, sa));
    } else {
      index[axis] -= sa[axis];
      copy_lane(r, i, b, flatten(index, sb));
    }
  }
  return r;
}

} // namespace

std::vector<RuntimeValue>
eval_shape_op(const ExecutionSite &site,
              const std::vector<const RuntimeValue *> &operands) {
  const ir::Operation &op = *site.op;
  if (op.code() == OpCode::Split) {
    expect_operands(site, operands, 1);
    return split(site, *operands[0]);
  }
  const ir::Type &type = op.result()->type();
  switch (op.code()) {
  case OpCode::Splat:
    expect_operands(site, operands, 1);
    if (operands[0]->size() != 1)
      site.fail("splat needs a scalar, got " + operands[0]->type.str());
    return {broadcast(site, *operands[0], type)};
  case OpCode::Broadcast:
    expect_operands(site, operands, 1);
    return {broadcast(site, *operands[0], type)};
  case OpCode::ExpandDims:
  case OpCode::Reshape:
    expect_operands(site, operands, 1);
    return {relabel(site, *operands[0], type)};
  case OpCode::Permute:
    expect_operands(site, operands, 1);
    return {permute(site, *operands[0], type)};
  case OpCode::Join:
    expect_operands(site, operands, 2);
    return {join(site, *operands[0], *operands[1], type)};
  case OpCode::Cat:
    expect_operands(site, operands, 2);
    return {cat(site, *operands[0], *operands[1], type)};
  default:
    site.fail("internal: not a shape op");
  }
}

} // namespace blocc::interp
