#include "backends/interpreter/collective_ops.h"

#include "backends/interpreter/element.h"
#include "backends/interpreter/element_ops.h"
#include "backends/interpreter/elementwise.h"
#include "ir/function.h"

namespace blocc::interp {

namespace {

/// The lanes of a block seen as lines along one axis: line `l` (one per
/// position of the other dims) and step `k` along the axis give a lane.
struct AxisLines {
  int64_t outer = 1;  // product of the dims before the axis
  int64_t length = 1; // the axis
  int64_t inner = 1;  // product of the dims after the axis

  int64_t lines() const { return outer * inner; }
  int64_t lane(int64_t line, int64_t k) const {
    return (line / inner) * length * inner + k * inner + line % inner;
  }
};

AxisLines lines_along(const std::vector<int64_t> &shape, int64_t axis) {
  AxisLines l;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis)
      l.outer *= shape[d];
    else if (d == axis)
      l.length = shape[d];
    else
      l.inner *= shape[d];
  }
  return l;
}

/// The N operands and the region shared by reduce and scan, checked.
struct Combiner {
  const ExecutionSite *site;
  const std::vector<const RuntimeValue *> *operands;
  const ir::Block *region;
  const RegionRunner *run;

  RuntimeValue scalar_lane(const RuntimeValue &x, int64_t lane) const {
    RuntimeValue s(x.type.element_type());
    s.bits[0] = x.bits[lane];
    if (s.is_pointer())
      s.provenance[0] = x.provenance_at(lane);
    return s;
  }

  std::vector<RuntimeValue> first(int64_t lane) const {
    std::vector<RuntimeValue> acc;
    for (const RuntimeValue *x : *operands)
      acc.push_back(scalar_lane(*x, lane));
    return acc;
  }

  /// acc = combine(acc..., x[lane]...)
  void step(std::vector<RuntimeValue> &acc, int64_t lane) const {
    std::vector<RuntimeValue> args = acc;
    for (const RuntimeValue *x : *operands)
      args.push_back(scalar_lane(*x, lane));
    std::vector<RuntimeValue> yielded = (*run)(*region, std::move(args));
    if (yielded.size() != acc.size())
      site->fail("the combine region yields " + std::to_string(yielded.size()) +
                 " values, expected " + std::to_string(acc.size()));
    for (size_t i = 0; i < acc.size(); ++i) {
      if (yielded[i].size() != 1 || yielded[i].element() != acc[i].element())
        site->fail("the combine region yields " + yielded[i].type.str() +
                   " for an operand of element type " + acc[i].type.str());
      acc[i] = std::move(yielded[i]);
    }
  }
};

Combiner make_combiner(const ExecutionSite &site,
                       const std::vector<const RuntimeValue *> &operands,
                       const RegionRunner &run) {
  const ir::Operation &op = *site.op;
  if (operands.empty() || op.num_results() != operands.size())
    site.fail("expects as many results as operands (at least one)");
  for (const RuntimeValue *x : operands)
    if (x->type.shape() != operands[0]->type.shape())
      site.fail("operands " + operands[0]->type.str() + " and " +
                x->type.str() + " differ in shape");
  if (op.num_regions() != 1 ||
      op.region(0)->num_arguments() != 2 * operands.size())
    site.fail("expects one combine region with " +
              std::to_string(2 * operands.size()) + " arguments");
  return Combiner{&site, &operands, op.region(0), &run};
}

void store_lane(RuntimeValue &dst, int64_t i, const RuntimeValue &scalar) {
  dst.bits[i] = scalar.bits[0];
  if (dst.is_pointer())
    dst.provenance[i] = scalar.provenance_at(0);
}

int64_t axis_of(const ExecutionSite &site, int64_t rank) {
  int64_t axis = site.op->int_attr("axis");
  int64_t resolved = axis < 0 ? axis + rank : axis;
  if (resolved < 0 || resolved >= rank)
    site.fail("axis " + std::to_string(axis) + " is out of range for rank " +
              std::to_string(rank));
  return resolved;
}

} // namespace

std::vector<RuntimeValue>
eval_reduce(const ExecutionSite &site,
            const std::vector<const RuntimeValue *> &operands,
            const RegionRunner &run) {
  Combiner combiner = make_combiner(site, operands, run);
  std::vector<int64_t> shape = operands[0]->type.shape();
  AxisLines lines;
  if (site.op->has_attr("axis")) {
    lines =
        lines_along(shape, axis_of(site, static_cast<int64_t>(shape.size())));
  } else {
    lines.length = operands[0]->size();
  }
  std::vector<RuntimeValue> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    results.emplace_back(site.op->result(i)->type());
    if (results.back().size() != lines.lines() ||
        results.back().element() != operands[i]->element())
      site.fail("result " + results.back().type.str() + " does not match " +
                operands[i]->type.str() + " reduced along the axis");
  }
  for (int64_t line = 0; line < lines.lines(); ++line) {
    std::vector<RuntimeValue> acc = combiner.first(lines.lane(line, 0));
    for (int64_t k = 1; k < lines.length; ++k)
      combiner.step(acc, lines.lane(line, k));
    for (size_t i = 0; i < acc.size(); ++i)
      store_lane(results[i], line, acc[i]);
  }
  return results;
}

std::vector<RuntimeValue>
eval_scan(const ExecutionSite &site,
          const std::vector<const RuntimeValue *> &operands,
          const RegionRunner &run) {
  Combiner combiner = make_combiner(site, operands, run);
  std::vector<int64_t> shape = operands[0]->type.shape();
  if (shape.empty())
    site.fail("scan needs a block, got a scalar");
  AxisLines lines =
      lines_along(shape, axis_of(site, static_cast<int64_t>(shape.size())));
  bool reverse =
      site.op->has_attr("reverse") && site.op->int_attr("reverse") != 0;
  std::vector<RuntimeValue> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    results.emplace_back(site.op->result(i)->type());
    if (results.back().type.shape() != shape ||
        results.back().element() != operands[i]->element())
      site.fail("result " + results.back().type.str() + " does not match " +
                operands[i]->type.str());
  }
  for (int64_t line = 0; line < lines.lines(); ++line) {
    auto lane_at = [&](int64_t step) {
      return lines.lane(line, reverse ? lines.length - 1 - step : step);
    };
    std::vector<RuntimeValue> acc = combiner.first(lane_at(0));
    for (int64_t k = 0; k < lines.length; ++k) {
      if (k > 0)
        combiner.step(acc, lane_at(k));
      for (size_t i = 0; i < acc.size(); ++i)
        store_lane(results[i], lane_at(k), acc[i]);
    }
  }
  return results;
}

RuntimeValue eval_dot(const ExecutionSite &site,
                      const std::vector<const RuntimeValue *> &operands) {
  if (operands.size() != 3)
    site.fail("expects (a, b, acc), got " + std::to_string(operands.size()) +
              " operands");
  const RuntimeValue &a = *operands[0], &b = *operands[1], &acc = *operands[2];
  int rank = a.type.rank();
  bool valid = (rank == 2 || rank == 3) && b.type.rank() == rank &&
               acc.type.rank() == rank && !a.is_pointer() && !b.is_pointer() &&
               !acc.is_pointer();
  int64_t batch = 1, m = 0, k = 0, n = 0;
  if (valid) {
    int o = rank - 2; // offset of the matrix dims after the batch dim
    batch = rank == 3 ? a.type.dim(0) : 1;
    m = a.type.dim(o);
    k = a.type.dim(o + 1);
    n = b.type.dim(o + 1);
    valid = b.type.dim(o) == k && acc.type.dim(o) == m &&
            acc.type.dim(o + 1) == n &&
            (rank == 2 || (b.type.dim(0) == batch && acc.type.dim(0) == batch));
  }
  if (!valid)
    site.fail("cannot multiply " + a.type.str() + " by " + b.type.str() +
              " into " + acc.type.str());
  RuntimeValue r(site.op->result()->type());
  if (r.type != acc.type)
    site.fail("result " + r.type.str() + " differs from the accumulator " +
              acc.type.str());
  ir::Scalar t = acc.element();
  // Each input element is converted once, up front.
  auto converted = [&](const RuntimeValue &x) {
    std::vector<uint64_t> v(x.bits.size());
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = convert(x.bits[i], x.element(), t);
    return v;
  };
  int64_t lane = 0;
  try {
    std::vector<uint64_t> at = converted(a), bt = converted(b);
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          lane = (p * m + i) * n + j;
          uint64_t c = acc.bits[lane];
          for (int64_t q = 0; q < k; ++q)
            c = fma_element(t, at[(p * m + i) * k + q], bt[(p * k + q) * n + j],
                            c);
          r.bits[lane] = c;
        }
  } catch (const LaneError &e) {
    site.fail(lane_str(lane, r.type.shape()) + ": " + e.message);
  }
  return r;
}

} // namespace blocc::interp
