// permute, join, split and cat: results that reorder their operands'
// elements. The operands sit in slots (filled where the op stands); a
// result is evaluated lazily on any lanes by reading the operand elements
// those lanes come from (contiguous vector loads where the order keeps
// rows intact, gathers elsewhere). splat, broadcast, expand_dims and
// reshape need no code of their own: they only map lanes (chunk_loop.cpp,
// kernel_lowering.cpp).
#include "backends/cpu/kernel_lowering.h"

#include "ir/error.h"

#include <bit>

namespace blocc::cpu {

using ir::OpCode;

namespace {

std::vector<int> shifts_of(const std::vector<int64_t> &shape) {
  std::vector<int> shifts(shape.size(), 0);
  int shift = 0;
  for (size_t d = shape.size(); d-- > 0;) {
    shifts[d] = shift;
    shift += std::countr_zero(static_cast<uint64_t>(shape[d]));
  }
  return shifts;
}

} // namespace

llvm::Value *KernelLowering::element_of(const ir::Value *v, int64_t index) {
  if (!v->type().is_block())
    return scalar(v);
  Chunk chunk{1, {}};
  return builder.CreateExtractElement(
      evaluate(chunk, v, Lanes::contiguous(i32(index))), uint64_t{0});
}

void KernelLowering::lower_shape_op(const ir::Operation &op) {
  bool scalar_results = !op.result()->type().is_block();
  if (scalar_results) {
    // A block of one element (or a scalar) seen as a scalar: split of a
    // [2] block gives elements 0 and 1.
    for (size_t k = 0; k < op.num_results(); ++k)
      set_scalar(op.result(k),
                 element_of(op.operand(0), static_cast<int64_t>(k)));
    return;
  }
  OpCode code = op.code();
  if (code == OpCode::Permute || code == OpCode::Join ||
      code == OpCode::Split || code == OpCode::Cat) {
    for (const ir::Value *operand : op.operands()) {
      if (operand->type().is_block()) {
        remap_sources[&op].push_back(materialized_slot(operand));
        continue;
      }
      // A scalar operand (join of two scalars): a slot of one element.
      ir::Scalar element = operand->type().element();
      llvm::Value *slot = allocate_slot_for(operand->type());
      llvm::Value *x = scalar(operand);
      if (element == ir::Scalar::I1)
        x = builder.CreateZExt(x, storage_type(element));
      builder.CreateStore(x, slot);
      remap_sources[&op].push_back(slot);
    }
  }
  set_lazy_from_operands(op, false, false);
  define_block_result(op);
}

llvm::Value *KernelLowering::remap_vector(Chunk &chunk, const ir::Value *result,
                                          const Lanes &lanes) {
  const ir::Operation &op = *result->defining_op();
  const std::vector<llvm::Value *> &sources = remap_sources.at(&op);
  int vl = chunk.vl;
  ir::Scalar element = result->type().element();
  std::vector<int64_t> shape = result->type().shape();
  std::vector<int> shifts = shifts_of(shape);
  auto coordinate = [&](llvm::Value *index, size_t d) {
    return builder.CreateAnd(builder.CreateLShr(index, shifts[d]),
                             shape[d] - 1);
  };
  switch (op.code()) {
  case OpCode::Permute: {
    // Result dimension i is operand dimension order[i].
    const std::vector<int64_t> &order = op.ints_attr("order");
    std::vector<int> from = shifts_of(op.operand(0)->type().shape());
    auto map = [&](llvm::Value *index) {
      llvm::Value *out = nullptr;
      for (size_t i = 0; i < shape.size(); ++i) {
        llvm::Value *placed =
            builder.CreateShl(coordinate(index, i), from[order[i]]);
        out = out ? builder.CreateOr(out, placed) : placed;
      }
      return out;
    };
    bool rows_kept = order.back() == static_cast<int64_t>(shape.size()) - 1;
    if (rows_kept && lanes.kind != Lanes::Kind::General &&
        (lanes.kind == Lanes::Kind::Uniform || vl <= shape.back())) {
      Lanes mapped = lanes.kind == Lanes::Kind::Uniform
                         ? Lanes::uniform(map(lanes.base))
                         : Lanes::contiguous(map(lanes.base));
      return read_slot(sources[0], element, mapped, vl);
    }
    return read_slot(sources[0], element,
                     Lanes::general(map(lane_indices(lanes, vl))), vl);
  }
  case OpCode::Join: {
    // The new last dimension has size 2: lane 2j + s is element j of
    // operand s.
    llvm::Value *index = lane_indices(lanes, vl);
    Lanes half = Lanes::general(builder.CreateLShr(index, 1));
    llvm::Value *second =
        builder.CreateICmpNE(builder.CreateAnd(index, 1),
                             llvm::Constant::getNullValue(index->getType()));
    return builder.CreateSelect(second,
                                read_slot(sources[1], element, half, vl),
                                read_slot(sources[0], element, half, vl));
  }
  case OpCode::Split: {
    int which = result == op.result(1) ? 1 : 0;
    llvm::Value *index =
        builder.CreateOr(builder.CreateShl(lane_indices(lanes, vl), 1), which);
    return read_slot(sources[0], element, Lanes::general(index), vl);
  }
  case OpCode::Cat: {
    size_t axis = static_cast<size_t>(op.int_attr("axis"));
    std::vector<int64_t> a_shape = op.operand(0)->type().shape();
    std::vector<int64_t> b_shape = op.operand(1)->type().shape();
    std::vector<int> a_shifts = shifts_of(a_shape),
                     b_shifts = shifts_of(b_shape);
    llvm::Value *index = lane_indices(lanes, vl);
    llvm::Value *along = coordinate(index, axis);
    llvm::Value *split_point = splat(vl, i32(a_shape[axis]));
    llvm::Value *in_a = builder.CreateICmpULT(along, split_point);
    // Clamped so that lanes of the other operand still read inside each
    // slot; the select keeps the right one.
    llvm::Value *a_along =
        builder.CreateSelect(in_a, along, splat(vl, i32(a_shape[axis] - 1)));
    llvm::Value *b_along = builder.CreateSelect(
        in_a, llvm::Constant::getNullValue(along->getType()),
        builder.CreateSub(along, split_point));
    llvm::Value *a_index = nullptr, *b_index = nullptr;
    for (size_t d = 0; d < shape.size(); ++d) {
      llvm::Value *c = coordinate(index, d);
      llvm::Value *ca = builder.CreateShl(d == axis ? a_along : c, a_shifts[d]);
      llvm::Value *cb = builder.CreateShl(d == axis ? b_along : c, b_shifts[d]);
      a_index = a_index ? builder.CreateOr(a_index, ca) : ca;
      b_index = b_index ? builder.CreateOr(b_index, cb) : cb;
    }
    return builder.CreateSelect(
        in_a, read_slot(sources[0], element, Lanes::general(a_index), vl),
        read_slot(sources[1], element, Lanes::general(b_index), vl));
  }
  default:
    unsupported(op, "internal: not a permutation");
  }
}

} // namespace blocc::cpu
