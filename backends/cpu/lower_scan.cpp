// scan: inclusive prefix combination along an axis (from the end when
// `reverse`), in the interpreter's sequential order exactly: each lane of a
// vector carries one independent scan, so no combine is reassociated.
// Along an axis that is not the innermost, vectors run across the
// dimensions after it (contiguous lanes). Along the innermost axis of a
// block with several rows, vectors run across rows (lane r reads element k
// of row r: a gather with the row length as stride), which turns the
// sequential dependence on the combine's latency into one step per vector.
// A single row is scanned element by element.
#include "backends/cpu/kernel_lowering.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

namespace blocc::cpu {

void KernelLowering::lower_scan(const ir::Operation &op) {
  const ir::Type &type = op.operand(0)->type();
  int64_t axis = op.int_attr("axis");
  bool reverse = op.has_attr("reverse") && op.int_attr("reverse") != 0;
  int64_t outer = 1, length = type.dim(static_cast<int>(axis)), inner = 1;
  for (int d = 0; d < type.rank(); ++d) {
    if (d < axis)
      outer *= type.dim(d);
    else if (d > axis)
      inner *= type.dim(d);
  }
  size_t n = op.num_operands();
  std::vector<llvm::Value *> slots;
  for (size_t i = 0; i < n; ++i)
    slots.push_back(allocate_slot_for(op.result(i)->type()));
  std::vector<llvm::AllocaInst *> acc(n, nullptr);
  // Position k of the scan order along the axis.
  auto position = [&](llvm::Value *k) {
    return reverse ? builder.CreateSub(i64(length - 1), k) : k;
  };
  // Step k of the scan: the running values after combining `next` (the
  // first step starts them), kept in entry-block variables across steps.
  // The first step branches around the combine, which must not run on
  // running values that do not exist yet: it may divide by one of them.
  auto step = [&](llvm::Value *k, const std::vector<llvm::Value *> &next) {
    for (size_t i = 0; i < n; ++i)
      if (!acc[i])
        acc[i] = entry_variable(next[i]->getType());
    llvm::BasicBlock *start = builder.GetInsertBlock();
    auto *later = llvm::BasicBlock::Create(context, "scan.combine", function);
    auto *join = llvm::BasicBlock::Create(context, "scan.step", function);
    builder.CreateCondBr(builder.CreateICmpEQ(k, i64(0)), join, later);
    builder.SetInsertPoint(later);
    std::vector<llvm::Value *> current;
    for (size_t i = 0; i < n; ++i)
      current.push_back(builder.CreateLoad(next[i]->getType(), acc[i]));
    std::vector<llvm::Value *> combined = combine(op, current, next);
    llvm::BasicBlock *combined_at = builder.GetInsertBlock();
    builder.CreateBr(join);
    builder.SetInsertPoint(join);
    std::vector<llvm::Value *> sums;
    for (size_t i = 0; i < n; ++i) {
      llvm::PHINode *sum = builder.CreatePHI(next[i]->getType(), 2);
      sum->addIncoming(next[i], start);
      sum->addIncoming(combined[i], combined_at);
      sums.push_back(sum);
    }
    for (size_t i = 0; i < n; ++i)
      builder.CreateStore(sums[i], acc[i]);
    return sums;
  };

  if (inner > 1) {
    int vl = vector_width(ir::Type::block(type.element_type(), {inner}));
    counted_loop(i64(outer * (inner / vl)), [&](llvm::Value *job) {
      llvm::Value *o = builder.CreateUDiv(job, i64(inner / vl));
      llvm::Value *in_row =
          builder.CreateMul(builder.CreateURem(job, i64(inner / vl)), i64(vl));
      auto base_at = [&](llvm::Value *k) {
        llvm::Value *flat = builder.CreateAdd(
            builder.CreateMul(
                builder.CreateAdd(builder.CreateMul(o, i64(length)),
                                  position(k)),
                i64(inner)),
            in_row);
        return builder.CreateTrunc(flat, builder.getInt32Ty());
      };
      counted_loop(i64(length), [&](llvm::Value *k) {
        llvm::Value *base = base_at(k);
        Chunk chunk{vl, {}};
        std::vector<llvm::Value *> next =
            evaluate_all(chunk, op, Lanes::contiguous(base));
        std::vector<llvm::Value *> sums = step(k, next);
        for (size_t i = 0; i < n; ++i)
          write_slot(slots[i], op.result(i)->type().element(), base, sums[i]);
      });
    });
  } else if (outer > 1) {
    int vl = vector_width(ir::Type::block(type.element_type(), {outer}));
    // Lane r of `vector` to element index[r] of `slot` (storage form).
    auto scatter = [&](llvm::Value *slot, ir::Scalar element,
                       llvm::Value *index, llvm::Value *vector) {
      llvm::Type *storage = storage_type(element);
      if (element == ir::Scalar::I1)
        vector = builder.CreateZExt(vector, vector_of(storage, vl));
      builder.CreateMaskedScatter(
          vector, builder.CreateGEP(storage, slot, index),
          llvm::Align(llvm_backend::storage_bytes(element)));
    };
    counted_loop(i64(outer / vl), [&](llvm::Value *job) {
      // Element 0 of each of the vl rows this job scans.
      llvm::Value *row_starts = builder.CreateMul(
          builder.CreateAdd(
              splat(vl, builder.CreateTrunc(builder.CreateMul(job, i64(vl)),
                                            builder.getInt32Ty())),
              iota(vl)),
          splat(vl, i32(length)));
      counted_loop(i64(length), [&](llvm::Value *k) {
        llvm::Value *index = builder.CreateAdd(
            row_starts,
            splat(vl, builder.CreateTrunc(position(k), builder.getInt32Ty())));
        Chunk chunk{vl, {}};
        std::vector<llvm::Value *> next =
            evaluate_all(chunk, op, Lanes::general(index));
        std::vector<llvm::Value *> sums = step(k, next);
        for (size_t i = 0; i < n; ++i)
          scatter(slots[i], op.result(i)->type().element(), index, sums[i]);
      });
    });
  } else {
    std::vector<llvm::Value *> sources;
    for (size_t i = 0; i < n; ++i)
      sources.push_back(materialized_slot(op.operand(i)));
    counted_loop(i64(outer), [&](llvm::Value *o) {
      counted_loop(i64(length), [&](llvm::Value *k) {
        llvm::Value *index = builder.CreateTrunc(
            builder.CreateAdd(builder.CreateMul(o, i64(length)), position(k)),
            builder.getInt32Ty());
        std::vector<llvm::Value *> next;
        for (size_t i = 0; i < n; ++i) {
          llvm::Value *lane =
              read_slot(sources[i], op.operand(i)->type().element(),
                        Lanes::uniform(index), 1);
          next.push_back(builder.CreateExtractElement(lane, uint64_t{0}));
        }
        std::vector<llvm::Value *> sums = step(k, next);
        for (size_t i = 0; i < n; ++i) {
          llvm::Value *v = sums[i];
          ir::Scalar element = op.result(i)->type().element();
          if (element == ir::Scalar::I1)
            v = builder.CreateZExt(v, storage_type(element));
          builder.CreateStore(
              v, builder.CreateGEP(storage_type(element), slots[i], index));
        }
      });
    });
  }
  for (size_t i = 0; i < n; ++i)
    set_materialized(op.result(i), slots[i]);
}

} // namespace blocc::cpu
