// Chunk loops, lanes and scratch slots: the machinery every lowering of a
// block value uses (see kernel_lowering.h).
#include "backends/cpu/kernel_lowering.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <llvm/IR/Module.h>

#include <algorithm>
#include <bit>

namespace blocc::cpu {

using ir::Scalar;

namespace {

int log2_of(int64_t power_of_two) {
  return std::countr_zero(static_cast<uint64_t>(power_of_two));
}

/// Row-major strides as shifts: dims are powers of two.
std::vector<int> shifts_of(const std::vector<int64_t> &shape) {
  std::vector<int> shifts(shape.size(), 0);
  int shift = 0;
  for (size_t d = shape.size(); d-- > 0;) {
    shifts[d] = shift;
    shift += log2_of(shape[d]);
  }
  return shifts;
}

/// Product of the longest suffix of dims where `keep(d)` holds.
int64_t suffix_product(const std::vector<int64_t> &shape,
                       const std::function<bool(size_t)> &keep) {
  int64_t product = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (!keep(d))
      break;
    product *= shape[d];
  }
  return product;
}

} // namespace

llvm::Value *KernelLowering::allocate_slot(int64_t bytes) {
  int64_t offset = scratch_used;
  scratch_used += (std::max<int64_t>(bytes, 1) + 63) / 64 * 64;
  if (scratch_used > (int64_t{1} << 31))
    throw Error("the CPU backend cannot compile kernel '" + kernel.name() +
                "': its blocks need more than 2 GiB of scratch memory");
  // The address is computed in the entry block, so that it dominates
  // every use wherever the slot is first filled (a branch, a loop body).
  llvm::BasicBlock &entry = function->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.getFirstInsertionPt());
  return at_entry.CreateConstGEP1_64(builder.getInt8Ty(), scratch, offset);
}

llvm::Value *KernelLowering::allocate_slot_for(const ir::Type &type) {
  return allocate_slot(type.num_elements() *
                       llvm_backend::storage_bytes(type.element()));
}

llvm::AllocaInst *KernelLowering::entry_variable(llvm::Type *type) {
  llvm::BasicBlock &entry = function->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.getFirstInsertionPt());
  return at_entry.CreateAlloca(type);
}

llvm::Value *KernelLowering::iota(int vl) {
  std::vector<llvm::Constant *> lanes;
  for (int i = 0; i < vl; ++i)
    lanes.push_back(builder.getInt32(i));
  return llvm::ConstantVector::get(lanes);
}

llvm::Value *KernelLowering::splat(int vl, llvm::Value *scalar) {
  return builder.CreateVectorSplat(vl, scalar);
}

llvm::Value *KernelLowering::lane_indices(const Lanes &lanes, int vl) {
  switch (lanes.kind) {
  case Lanes::Kind::Contiguous:
    return builder.CreateAdd(splat(vl, lanes.base), iota(vl));
  case Lanes::Kind::Uniform:
    return splat(vl, lanes.base);
  case Lanes::Kind::General:
    return lanes.index;
  }
  return nullptr;
}

void KernelLowering::chunk_loop(
    int64_t elements, int vl,
    const std::function<void(llvm::Value *base)> &body) {
  if (elements % vl != 0)
    throw Error("internal: a chunk loop over " + std::to_string(elements) +
                " elements by " + std::to_string(vl));
  if (elements == vl) {
    body(builder.getInt32(0));
    return;
  }
  llvm::BasicBlock *before = builder.GetInsertBlock();
  auto *loop = llvm::BasicBlock::Create(context, "chunk", function);
  auto *after = llvm::BasicBlock::Create(context, "chunks.done", function);
  builder.CreateBr(loop);
  builder.SetInsertPoint(loop);
  llvm::PHINode *base = builder.CreatePHI(builder.getInt32Ty(), 2, "base");
  base->addIncoming(builder.getInt32(0), before);
  body(base);
  llvm::Value *next = builder.CreateAdd(base, builder.getInt32(vl), "",
                                        /*HasNUW=*/true, /*HasNSW=*/true);
  base->addIncoming(next, builder.GetInsertBlock());
  builder.CreateCondBr(
      builder.CreateICmpULT(next,
                            builder.getInt32(static_cast<int32_t>(elements))),
      loop, after);
  builder.SetInsertPoint(after);
}

void KernelLowering::counted_loop(
    llvm::Value *count, const std::function<void(llvm::Value *i)> &body) {
  llvm::BasicBlock *before = builder.GetInsertBlock();
  auto *check = llvm::BasicBlock::Create(context, "loop.check", function);
  auto *loop = llvm::BasicBlock::Create(context, "loop.body", function);
  auto *after = llvm::BasicBlock::Create(context, "loop.done", function);
  builder.CreateBr(check);
  builder.SetInsertPoint(check);
  llvm::PHINode *i = builder.CreatePHI(builder.getInt64Ty(), 2, "i");
  i->addIncoming(builder.getInt64(0), before);
  builder.CreateCondBr(builder.CreateICmpULT(i, count), loop, after);
  builder.SetInsertPoint(loop);
  body(i);
  llvm::Value *next = builder.CreateAdd(i, builder.getInt64(1));
  i->addIncoming(next, builder.GetInsertBlock());
  builder.CreateBr(check);
  builder.SetInsertPoint(after);
}

llvm::Value *KernelLowering::read_slot(llvm::Value *slot, Scalar element,
                                       const Lanes &lanes, int vl) {
  llvm::Type *storage = storage_type(element);
  int bytes = llvm_backend::storage_bytes(element);
  llvm::Value *vector = nullptr;
  switch (lanes.kind) {
  case Lanes::Kind::Contiguous: {
    llvm::Value *address = builder.CreateGEP(storage, slot, lanes.base);
    vector = builder.CreateAlignedLoad(
        vector_of(storage, vl), address,
        llvm::Align(std::min<int64_t>(64, int64_t{vl} * bytes)));
    break;
  }
  case Lanes::Kind::Uniform: {
    llvm::Value *address = builder.CreateGEP(storage, slot, lanes.base);
    vector = splat(
        vl, builder.CreateAlignedLoad(storage, address, llvm::Align(bytes)));
    break;
  }
  case Lanes::Kind::General: {
    llvm::Value *addresses = builder.CreateGEP(storage, slot, lanes.index);
    vector = builder.CreateMaskedGather(vector_of(storage, vl), addresses,
                                        llvm::Align(bytes));
    break;
  }
  }
  if (element == Scalar::I1)
    return builder.CreateICmpNE(
        vector, llvm::Constant::getNullValue(vector->getType()));
  return vector;
}

void KernelLowering::write_slot(llvm::Value *slot, Scalar element,
                                llvm::Value *base, llvm::Value *vector) {
  llvm::Type *storage = storage_type(element);
  int vl = static_cast<int>(
      llvm::cast<llvm::FixedVectorType>(vector->getType())->getNumElements());
  if (element == Scalar::I1)
    vector = builder.CreateZExt(vector, vector_of(storage, vl));
  llvm::Value *address = builder.CreateGEP(storage, slot, base);
  int bytes = llvm_backend::storage_bytes(element);
  builder.CreateAlignedStore(
      vector, address, llvm::Align(std::min<int64_t>(64, int64_t{vl} * bytes)));
}

Lanes KernelLowering::broadcast_lanes(const Lanes &lanes, int vl,
                                      const std::vector<int64_t> &to,
                                      const std::vector<int64_t> &from) {
  std::vector<int> to_shifts = shifts_of(to), from_shifts = shifts_of(from);
  // operand index = its coordinates, which are the result's except along
  // broadcast dims (where the operand has size 1 and coordinate 0).
  auto map = [&](llvm::Value *index) {
    llvm::Value *out = nullptr;
    for (size_t d = 0; d < to.size(); ++d) {
      if (from[d] == 1)
        continue;
      llvm::Value *coordinate =
          builder.CreateAnd(builder.CreateLShr(index, to_shifts[d]), to[d] - 1);
      llvm::Value *placed = builder.CreateShl(coordinate, from_shifts[d]);
      out = out ? builder.CreateOr(out, placed) : placed;
    }
    return out ? out : llvm::Constant::getNullValue(index->getType());
  };
  switch (lanes.kind) {
  case Lanes::Kind::Uniform:
    return Lanes::uniform(map(lanes.base));
  case Lanes::Kind::General:
    return Lanes::general(map(lanes.index));
  case Lanes::Kind::Contiguous:
    break;
  }
  // A chunk starts at a multiple of vl: inside a suffix of dims the two
  // shapes share, its lanes stay consecutive; inside a suffix the operand
  // broadcasts, they all read one element.
  if (vl <= suffix_product(to, [&](size_t d) { return from[d] == to[d]; }))
    return Lanes::contiguous(map(lanes.base));
  if (vl <= suffix_product(to, [&](size_t d) { return from[d] == 1; }))
    return Lanes::uniform(map(lanes.base));
  return Lanes::general(map(lane_indices(lanes, vl)));
}

} // namespace blocc::cpu
