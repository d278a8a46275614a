#include "backends/cpu/masked_access.h"

#include "backends/cpu/kernel_lowering.h"

namespace blocc::cpu {

namespace {

/// i1: every lane of `mask` is set.
llvm::Value *all_lanes_set(llvm::IRBuilder<> &builder, llvm::Value *mask) {
  auto *type = llvm::cast<llvm::FixedVectorType>(mask->getType());
  llvm::Value *bits =
      builder.CreateBitCast(mask, builder.getIntNTy(type->getNumElements()));
  return builder.CreateICmpEQ(bits,
                              llvm::Constant::getAllOnesValue(bits->getType()));
}

/// Emits `if (all lanes of mask) full() else partial()` and returns the
/// value each side gives (nullptr when they give none).
template <typename Full, typename Partial>
llvm::Value *branch_on_full_mask(llvm::IRBuilder<> &builder, llvm::Value *mask,
                                 Full full, Partial partial) {
  llvm::Function *function = builder.GetInsertBlock()->getParent();
  llvm::LLVMContext &context = builder.getContext();
  auto *full_block = llvm::BasicBlock::Create(context, "chunk.full", function);
  auto *partial_block =
      llvm::BasicBlock::Create(context, "chunk.partial", function);
  auto *done = llvm::BasicBlock::Create(context, "chunk.access", function);
  builder.CreateCondBr(all_lanes_set(builder, mask), full_block, partial_block);
  builder.SetInsertPoint(full_block);
  llvm::Value *full_value = full();
  builder.CreateBr(done);
  builder.SetInsertPoint(partial_block);
  llvm::Value *partial_value = partial();
  builder.CreateBr(done);
  builder.SetInsertPoint(done);
  if (!full_value)
    return nullptr;
  llvm::PHINode *value = builder.CreatePHI(full_value->getType(), 2);
  value->addIncoming(full_value, full_block);
  value->addIncoming(partial_value, partial_block);
  return value;
}

} // namespace

llvm::Value *masked_load_fast_when_full(llvm::IRBuilder<> &builder,
                                        llvm::Type *vector,
                                        llvm::Value *address, llvm::Align align,
                                        llvm::Value *mask, llvm::Value *other) {
  return branch_on_full_mask(
      builder, mask,
      [&]() -> llvm::Value * {
        return builder.CreateAlignedLoad(vector, address, align);
      },
      [&]() -> llvm::Value * {
        return builder.CreateMaskedLoad(vector, address, align, mask, other);
      });
}

void masked_store_fast_when_full(llvm::IRBuilder<> &builder, llvm::Value *data,
                                 llvm::Value *address, llvm::Align align,
                                 llvm::Value *mask) {
  branch_on_full_mask(
      builder, mask,
      [&]() -> llvm::Value * {
        builder.CreateAlignedStore(data, address, align);
        return nullptr;
      },
      [&]() -> llvm::Value * {
        builder.CreateMaskedStore(data, address, align, mask);
        return nullptr;
      });
}

llvm::Value *KernelLowering::first_lane_address(Chunk &chunk,
                                                const ir::Value *pointer,
                                                const Lanes &lanes) {
  // The pointer tree evaluated on one lane (vectors of one element, which
  // LLVM makes scalars) rather than lane 0 of the chunk's address vector:
  // LLVM keeps extracting lane 0 of vector index arithmetic in vector
  // registers, several instructions per chunk.
  Chunk first_lane{1, {}};
  return builder.CreateExtractElement(
      evaluate(first_lane, pointer, Lanes::contiguous(lanes.base)),
      uint64_t{0});
}

} // namespace blocc::cpu
