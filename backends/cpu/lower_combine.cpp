// The combine regions of reduce and scan. The folds (lower_reduce.cpp,
// lower_scan.cpp) hand a region either one combination on scalars or VL
// independent combinations at once, one per lane of a vector, and take its
// yielded values back in the same form.
//
// On vectors, a region of elementwise ops (integer division and remainder
// included), constants, hints and ifs whose branches are such regions runs
// on the vectors themselves: an if evaluates both branches and selects per
// lane, and an integer division reports a zero divisor only in lanes that
// reach it, so a combine faults exactly where the interpreter's scalar run
// of the same combination does. Any other region (a loop, a nested
// reduction, block values) runs on one lane at a time, in a loop over the
// lanes, through the lowering of the kernel body itself (lower_block): one
// copy of the region per place a fold combines, whatever VL is.
//
// The verifier keeps memory accesses, prints and asserts out of combine
// regions (a combine is a pure function of its arguments, run as often and
// in whatever order a backend folds), so no memory ordering matters here:
// the kernel body's pending loads are neither flushed nor extended by a
// region.
#include "backends/cpu/kernel_lowering.h"

#include "backends/llvm/element_ops.h"
#include "ir/error.h"

namespace blocc::cpu {

using ir::OpCode;

namespace {

/// Whether `block` can run on vectors of combinations: elementwise ops,
/// constants, hints and ifs of such blocks, every value a scalar.
bool runs_on_vectors(const ir::Block &block) {
  for (const auto &owned : block.ops()) {
    const ir::Operation &op = *owned;
    for (const ir::Value *r : op.results())
      if (r->type().is_block())
        return false;
    switch (op.code()) {
    case OpCode::Yield:
    case OpCode::Constant:
    case OpCode::MultipleOf:
    case OpCode::MaxContiguous:
    case OpCode::MaxConstancy:
      continue;
    case OpCode::If:
      if (!runs_on_vectors(*op.region(0)) || !runs_on_vectors(*op.region(1)))
        return false;
      continue;
    default:
      if (!ir::is_elementwise(op.code()))
        return false;
    }
  }
  return true;
}

} // namespace

std::vector<llvm::Value *>
KernelLowering::combine(const ir::Operation &op,
                        const std::vector<llvm::Value *> &lhs,
                        const std::vector<llvm::Value *> &rhs) {
  const ir::Block &region = *op.region(0);
  std::vector<llvm::Value *> arguments = lhs;
  arguments.insert(arguments.end(), rhs.begin(), rhs.end());
  auto *vector = llvm::dyn_cast<llvm::FixedVectorType>(lhs[0]->getType());
  if (!vector)
    return combine_scalars(region, arguments);
  int vl = static_cast<int>(vector->getNumElements());
  if (!runs_on_vectors(region))
    return combine_lane_by_lane(region, arguments, vl);
  CombineValues values;
  for (size_t i = 0; i < arguments.size(); ++i)
    values[region.argument(i)] = arguments[i];
  return combine_vectors(region, values, nullptr, vl);
}

std::vector<llvm::Value *>
KernelLowering::combine_vectors(const ir::Block &block, CombineValues &values,
                                llvm::Value *reached, int vl) {
  // Values of the kernel body (a parameter the combine captures) are the
  // same in every lane.
  auto value_of = [&](const ir::Value *v) -> llvm::Value * {
    auto it = values.find(v);
    return it != values.end() ? it->second : splat(vl, scalar(v));
  };
  for (const auto &owned : block.ops()) {
    const ir::Operation &inner = *owned;
    switch (inner.code()) {
    case OpCode::Yield: {
      std::vector<llvm::Value *> results;
      for (const ir::Value *v : inner.operands())
        results.push_back(value_of(v));
      return results;
    }
    case OpCode::Constant:
      values[inner.result()] = splat(vl, constant_value(inner));
      continue;
    case OpCode::MultipleOf:
    case OpCode::MaxContiguous:
    case OpCode::MaxConstancy:
      values[inner.result()] = value_of(inner.operand(0));
      continue;
    case OpCode::If: {
      llvm::Value *condition = value_of(inner.operand(0));
      llvm::Value *otherwise = builder.CreateNot(condition);
      if (reached) {
        condition = builder.CreateAnd(reached, condition);
        otherwise = builder.CreateAnd(reached, otherwise);
      }
      std::vector<llvm::Value *> taken =
          combine_vectors(*inner.region(0), values, condition, vl);
      std::vector<llvm::Value *> not_taken =
          combine_vectors(*inner.region(1), values, otherwise, vl);
      llvm::Value *select = value_of(inner.operand(0));
      for (size_t k = 0; k < inner.num_results(); ++k)
        values[inner.result(k)] =
            builder.CreateSelect(select, taken[k], not_taken[k]);
      continue;
    }
    default:
      break;
    }
    std::vector<llvm::Value *> operands;
    for (const ir::Value *v : inner.operands())
      operands.push_back(value_of(v));
    if (is_integer_division(inner))
      check_divisors(inner, operands[1], nullptr, vl, reached);
    ir::Scalar element = inner.result()->type().element();
    bool is_min_max =
        inner.code() == OpCode::Minimum || inner.code() == OpCode::Maximum;
    if (is_min_max && operands[1]->getType()->isVectorTy() &&
        (element == ir::Scalar::F32 || element == ir::Scalar::F64)) {
      // A fold's second operand is its new chunk, in which NaNs and zeros
      // are rare: one MAXPS per chunk instead of the full rule's selects.
      values[inner.result()] = llvm_backend::emit_fold_min_max(
          builder, inner.code() == OpCode::Maximum, operands[0], operands[1]);
      continue;
    }
    values[inner.result()] = apply_elementwise(inner, operands);
  }
  throw Error("internal: a combine region without yield");
}

std::vector<llvm::Value *>
KernelLowering::combine_scalars(const ir::Block &region,
                                const std::vector<llvm::Value *> &arguments) {
  for (size_t i = 0; i < arguments.size(); ++i)
    set_scalar(region.argument(i), arguments[i]);
  // The region reads no memory and writes none: the body's pending loads
  // stay pending across it.
  std::vector<const ir::Value *> body_pending;
  std::swap(body_pending, pending_loads_);
  int position = current_position;
  lower_block(region);
  current_position = position;
  std::swap(body_pending, pending_loads_);
  std::vector<llvm::Value *> results;
  for (const ir::Value *v : region.terminator()->operands())
    results.push_back(scalar(v));
  return results;
}

std::vector<llvm::Value *> KernelLowering::combine_lane_by_lane(
    const ir::Block &region, const std::vector<llvm::Value *> &arguments,
    int vl) {
  // Arguments and results in stack variables the loop over lanes reads
  // and fills one element at a time; the region yields one element per
  // operand, of the type of the operand's arguments.
  size_t n = arguments.size() / 2;
  std::vector<llvm::AllocaInst *> in, out;
  for (llvm::Value *a : arguments) {
    in.push_back(entry_variable(a->getType()));
    builder.CreateStore(a, in.back());
  }
  for (size_t i = 0; i < n; ++i)
    out.push_back(entry_variable(arguments[i]->getType()));
  counted_loop(i64(vl), [&](llvm::Value *lane) {
    std::vector<llvm::Value *> lane_arguments;
    for (size_t i = 0; i < in.size(); ++i)
      lane_arguments.push_back(builder.CreateExtractElement(
          builder.CreateLoad(arguments[i]->getType(), in[i]), lane));
    std::vector<llvm::Value *> results =
        combine_scalars(region, lane_arguments);
    for (size_t i = 0; i < n; ++i) {
      llvm::Value *v = builder.CreateLoad(arguments[i]->getType(), out[i]);
      builder.CreateStore(builder.CreateInsertElement(v, results[i], lane),
                          out[i]);
    }
  });
  std::vector<llvm::Value *> results;
  for (size_t i = 0; i < n; ++i)
    results.push_back(builder.CreateLoad(arguments[i]->getType(), out[i]));
  return results;
}

} // namespace blocc::cpu
