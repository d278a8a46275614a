// The lowering of warp specialization (warp_specialize.h): the CTA's warps
// split at the kernel's entry, the consumers' side of the specialized loop
// (LoopPipeline, in place of the copies it would issue itself), and the
// producer warpgroup's code.
//
// Shared memory, after the stages (loop_pipeline.h): S full mbarriers
// (one arrival: the producer's, announcing the stage's bytes), S empty
// ones (one arrival per consumer warp), then the producer's inputs, 8
// bytes each: the loop's lower bound, step and trip count, the values from
// before the loop its address ops read, the initial values of the carried
// values they advance. Consumer thread 0 initializes the mbarriers and
// writes the inputs; hardware barrier 2 then meets the consumers and the
// producer's first warp, which reads them.
//
// Phases: the consumers wait on full[s] for phase (i / S) % 2 as any TMA
// loop does; the producer, issuing iteration i into stage s = i % S, waits
// on empty[s] for the phase of use i / S - 1, whose parity is that of
// i / S + 1 (for the first use, the phase before the mbarrier's first,
// which counts as complete: it does not wait).
#include "backends/llvm/trip_count.h"
#include "backends/nvptx/loop_pipeline.h"
#include "backends/nvptx/warp_specialize.h"
#include "ir/tensor_descriptor.h"

#include <algorithm>

#include <llvm/IR/IntrinsicsNVPTX.h>

namespace blocc::nvptx {

namespace {

/// `v` (an integer scalar) in an 8-byte slot, and back.
llvm::Value *widened(llvm::IRBuilderBase &b, llvm::Value *v) {
  return b.CreateZExt(v, b.getInt64Ty());
}
llvm::Value *narrowed(llvm::IRBuilderBase &b, llvm::Value *slot,
                      llvm::Type *type) {
  return b.CreateTrunc(slot, type);
}

} // namespace

void KernelLowering::split_producer_warps() {
  llvm::Function *f = builder.GetInsertBlock()->getParent();
  producer_entry_ = llvm::BasicBlock::Create(context, "producer", f);
  auto *consumers = llvm::BasicBlock::Create(context, "consumers", f);
  builder.CreateCondBr(builder.CreateICmpUGE(warp, builder.getInt32(num_warps)),
                       producer_entry_, consumers);
  builder.SetInsertPoint(consumers);
  builder.CreateIntrinsic(llvm::Intrinsic::nvvm_setmaxnreg_inc_sync_aligned_u32,
                          {},
                          {builder.getInt32(consumer_registers(num_warps))});
}

void KernelLowering::named_barrier(int id, int threads) {
  builder.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier_sync_cnt, {},
                          {builder.getInt32(id), builder.getInt32(threads)});
}

llvm::Value *LoopPipeline::empty_barrier(llvm::Value *stage) {
  return k_.shared_window_address(
      b_.getInt64Ty(), b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(
                                        barriers_at_ / 8 + plan_.stages)),
                                    stage));
}

std::vector<const ir::Value *> LoopPipeline::producer_inputs() const {
  std::vector<const ir::Value *> inputs;
  auto take = [&](const ir::Value *v) {
    const ir::Block *owner = v->owner_block();
    if ((owner && owner->is_nested_in(&body_)) ||
        std::find(inputs.begin(), inputs.end(), v) != inputs.end())
      return;
    inputs.push_back(v);
  };
  for (const ir::Operation *op : plan_.address_ops)
    for (const ir::Value *v : op->operands())
      take(v);
  for (const PipelinedLoad &load : plan_.loads) {
    ir::DescriptorOperands d(*load.load);
    for (int dim = 0; dim < d.rank(); ++dim)
      take(d.offset(dim));
  }
  return inputs;
}

void LoopPipeline::hand_over(const std::vector<CarriedValue> &initial) {
  const int stages = plan_.stages;
  std::vector<const ir::Value *> inputs = producer_inputs();
  std::vector<llvm::Value *> given = {bounds_.lb, bounds_.step, bounds_.count};
  for (const ir::Value *v : inputs)
    given.push_back(k_.scalar(v));
  for (size_t index : plan_.carried)
    given.push_back(initial[index].scalar);
  const int64_t inputs_at = barriers_at_ + 16 * int64_t{stages};
  k_.reserve_shared_bytes(inputs_at + 8 * static_cast<int64_t>(given.size()));
  k_.start_mbarriers(stage_barrier(b_.getInt32(0)), stages, 1);
  k_.start_mbarriers(empty_barrier(b_.getInt32(0)), stages, k_.num_warps);
  llvm::Function *f = b_.GetInsertBlock()->getParent();
  auto *write = llvm::BasicBlock::Create(k_.context, "hand_over", f);
  auto *written = llvm::BasicBlock::Create(k_.context, "handed_over", f);
  b_.CreateCondBr(
      b_.CreateICmpEQ(b_.CreateOr(k_.lane, k_.warp), b_.getInt32(0)), write,
      written);
  b_.SetInsertPoint(write);
  for (size_t i = 0; i < given.size(); ++i)
    b_.CreateStore(widened(b_, given[i]),
                   k_.reserved_shared_element(
                       b_.getInt64Ty(), b_.getInt32(static_cast<uint32_t>(
                                            inputs_at / 8 + int64_t(i)))));
  b_.CreateBr(written);
  b_.SetInsertPoint(written);
  k_.named_barrier(KernelLowering::kHandOverBarrier,
                   kWarpSize * (k_.num_warps + 1));
  k_.barrier();
  lower_producer(inputs, given, inputs_at);
}

void LoopPipeline::lower_producer(const std::vector<const ir::Value *> &inputs,
                                  const std::vector<llvm::Value *> &given,
                                  int64_t inputs_at) {
  llvm::IRBuilderBase::InsertPoint consumers = b_.saveIP();
  b_.SetInsertPoint(k_.producer_entry());
  b_.CreateIntrinsic(llvm::Intrinsic::nvvm_setmaxnreg_dec_sync_aligned_u32, {},
                     {b_.getInt32(kProducerRegisters)});
  // One warp issues; the others' part ends here.
  llvm::Function *f = b_.GetInsertBlock()->getParent();
  auto *issuer = llvm::BasicBlock::Create(k_.context, "producer.issuer", f);
  auto *idle = llvm::BasicBlock::Create(k_.context, "producer.idle", f);
  b_.CreateCondBr(b_.CreateICmpEQ(k_.warp, b_.getInt32(k_.num_warps)), issuer,
                  idle);
  b_.SetInsertPoint(idle);
  b_.CreateRetVoid();
  b_.SetInsertPoint(issuer);
  k_.named_barrier(KernelLowering::kHandOverBarrier,
                   kWarpSize * (k_.num_warps + 1));
  auto read = [&](size_t i) {
    llvm::Value *slot = b_.CreateLoad(
        b_.getInt64Ty(),
        k_.reserved_shared_element(
            b_.getInt64Ty(),
            b_.getInt32(static_cast<uint32_t>(inputs_at / 8 + int64_t(i)))));
    return narrowed(b_, slot, given[i]->getType());
  };
  // The producer's values of the consumers' ops, bound while its code is
  // lowered, and the consumers' put back after.
  std::vector<const ir::Value *> rebound = inputs;
  for (const ir::Value *v : address_values())
    rebound.push_back(v);
  KernelLowering::Bindings theirs = k_.bindings_of(rebound);
  for (size_t i = 0; i < inputs.size(); ++i)
    k_.set_scalar(inputs[i], read(3 + i));
  std::vector<CarriedValue> carried(plan_.carried.size());
  for (size_t j = 0; j < carried.size(); ++j)
    carried[j].scalar = read(3 + inputs.size() + j);
  k_.set_issuing_warp(k_.num_warps);
  lower_producer_loop(read(0), read(1), read(2), carried);
  k_.set_issuing_warp(0);
  k_.restore(theirs);
  b_.restoreIP(consumers);
}

void LoopPipeline::lower_producer_loop(
    llvm::Value *lb, llvm::Value *step, llvm::Value *count,
    const std::vector<CarriedValue> &carried) {
  llvm::Function *f = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock *before = b_.GetInsertBlock();
  auto *check = llvm::BasicBlock::Create(k_.context, "producer.check", f);
  auto *copy = llvm::BasicBlock::Create(k_.context, "producer.copy", f);
  auto *done = llvm::BasicBlock::Create(k_.context, "producer.done", f);
  b_.CreateBr(check);
  b_.SetInsertPoint(check);
  llvm::PHINode *trip = b_.CreatePHI(count->getType(), 2, "producer_trip");
  trip->addIncoming(trip_constant(0), before);
  std::vector<llvm::PHINode *> phis;
  std::vector<CarriedValue> current(carried.size());
  for (size_t j = 0; j < carried.size(); ++j) {
    phis.push_back(b_.CreatePHI(carried[j].scalar->getType(), 2));
    phis.back()->addIncoming(carried[j].scalar, before);
    current[j].scalar = phis.back();
  }
  b_.CreateCondBr(b_.CreateICmpULT(trip, count), copy, done);

  b_.SetInsertPoint(copy);
  llvm::Value *stages = trip_constant(plan_.stages);
  llvm::Value *stage =
      b_.CreateZExtOrTrunc(b_.CreateURem(trip, stages), b_.getInt32Ty());
  llvm::Value *use = b_.CreateUDiv(trip, stages);
  k_.wait_mbarrier(
      empty_barrier(stage),
      b_.CreateZExtOrTrunc(
          b_.CreateXor(b_.CreateAnd(use, trip_constant(1)), trip_constant(1)),
          b_.getInt32Ty()));
  llvm::Value *iv =
      llvm_backend::induction_value(b_, lb, step, trip, bounds_.is_signed);
  std::vector<CarriedValue> next = issue(iv, current, stage, b_.getTrue());
  llvm::BasicBlock *latch = b_.GetInsertBlock();
  trip->addIncoming(b_.CreateAdd(trip, trip_constant(1)), latch);
  for (size_t j = 0; j < phis.size(); ++j)
    phis[j]->addIncoming(next[j].scalar, latch);
  b_.CreateBr(check);

  b_.SetInsertPoint(done);
  b_.CreateRetVoid();
}

void LoopPipeline::release_read_stage() {
  // The accumulating dot has just waited for the previous iteration's
  // MMAs; the first iteration has no previous stage to release.
  if (plan_.mma_in_flight)
    return k_.arrive_per_warp(empty_barrier(previous_stage()),
                              b_.CreateICmpNE(trip_, trip_constant(0)));
  // Every MMA of this iteration was waited for before its yield.
  k_.arrive_per_warp(empty_barrier(stage_), b_.getTrue());
}

} // namespace blocc::nvptx
