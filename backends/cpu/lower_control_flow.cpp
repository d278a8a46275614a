// for and if. Scalars carried by a loop or produced by an if are phis;
// block values live in slots: a loop's carried block has one slot, which
// the body reads and the yield overwrites (through temporaries when a
// yielded value reads another carried slot, e.g. a swap); an if's block
// result has one slot that each branch fills.
//
// The loop runs `iv = lb, lb + step, ...` while iv < ub (step > 0) or
// iv > ub (step < 0), as the interpreter does, with the trip count
// computed up front in 64 bits so that iv + step never overflows near the
// type's maximum. A zero step is reported as an error.
#include "backends/cpu/kernel_lowering.h"
#include "backends/llvm/trip_count.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <algorithm>

namespace blocc::cpu {

using ir::Scalar;

namespace {

int64_t bytes_of(const ir::Type &type) {
  return type.num_elements() * llvm_backend::storage_bytes(type.element());
}

/// Whether evaluating `v` chunk by chunk may write its chunks straight into
/// the slot of carried block `own` (v the value yielded for it): v's lazy
/// tree (walked through values `is_lazy` says are not materialized) reads
/// `own` only through elementwise ops and loads, so at the lanes it is
/// computing, and reads no other carried block of `carried`. Then the
/// chunk being written is never read again, and the yield needs neither a
/// temporary nor a copy (an accumulator `acc = acc + x`).
template <typename IsLazy>
bool yields_in_place(const ir::Value *v, const ir::Value *own,
                     const std::vector<const ir::Value *> &carried,
                     IsLazy is_lazy, bool same_lanes = true) {
  if (v == own)
    return same_lanes;
  if (std::find(carried.begin(), carried.end(), v) != carried.end())
    return false;
  const ir::Operation *op = v->defining_op();
  if (!v->type().is_block() || !op || !is_lazy(v))
    return true; // a scalar, or elements in a slot of their own
  bool elementwise =
      ir::is_elementwise(op->code()) || op->code() == ir::OpCode::Load;
  for (const ir::Value *operand : op->operands())
    if (!yields_in_place(operand, own, carried, is_lazy,
                         same_lanes && elementwise))
      return false;
  return true;
}

/// The yield's blocks into their carried slots (`slots`; the carried
/// scalars, which feed phis, are those with a phi in `phis`): copied once
/// every yielded block has been computed, except those evaluated in
/// place (yields_in_place), which are written after the others are
/// computed and before the copies.
void yield_blocks(KernelLowering &k, const ir::Block &body,
                  const std::vector<llvm::Value *> &slots,
                  const std::vector<llvm::PHINode *> &phis) {
  const ir::Operation *yield = body.terminator();
  const size_t carried = slots.size();
  std::vector<const ir::Value *> carried_blocks;
  for (size_t i = 0; i < carried; ++i)
    if (!phis[i])
      carried_blocks.push_back(body.argument(1 + i));
  auto is_lazy = [&](const ir::Value *v) { return !k.is_materialized(v); };
  // Whether carried block i needs no write: unchanged, or computed in its
  // carried slot (a dot's accumulator).
  auto stays = [&](size_t i) {
    const ir::Value *yielded = yield->operand(i);
    return yielded == body.argument(1 + i) ||
           (k.is_materialized(yielded) && k.state(yielded).slot == slots[i]);
  };
  std::vector<bool> in_place(carried, false);
  for (size_t i = 0; i < carried; ++i) {
    const ir::Value *yielded = yield->operand(i);
    in_place[i] =
        !phis[i] && yielded != body.argument(1 + i) && is_lazy(yielded) &&
        yields_in_place(yielded, body.argument(1 + i), carried_blocks, is_lazy);
  }
  std::vector<std::pair<llvm::Value *, llvm::Value *>> copies; // slot, source
  for (size_t i = 0; i < carried; ++i) {
    if (phis[i] || in_place[i] || stays(i))
      continue;
    const ir::Value *yielded = yield->operand(i);
    llvm::Value *source = nullptr;
    if (k.is_materialized(yielded)) {
      llvm::Value *own = k.state(yielded).slot;
      if (std::find(slots.begin(), slots.end(), own) == slots.end())
        source = own; // not another carried slot, which the copies change
    }
    if (!source) {
      source = k.allocate_slot_for(yielded->type());
      k.evaluate_into(yielded, source);
    }
    copies.emplace_back(slots[i], source);
  }
  for (size_t i = 0; i < carried; ++i)
    if (in_place[i])
      k.evaluate_into(yield->operand(i), slots[i]);
  for (size_t i = 0, c = 0; i < carried; ++i) {
    if (phis[i] || in_place[i] || stays(i))
      continue;
    auto [slot, source] = copies[c++];
    k.builder.CreateMemCpy(slot, llvm::MaybeAlign(64), source,
                           llvm::MaybeAlign(64),
                           bytes_of(yield->operand(i)->type()));
  }
}

} // namespace

void KernelLowering::lower_for(const ir::Operation &op) {
  const ir::Block &body = *op.region(0);
  const ir::Type &iv_type = op.operand(0)->type();
  const bool is_signed = ir::is_signed(iv_type.element());
  llvm::Type *wide = builder.getInt64Ty();
  llvm::Value *lb = scalar(op.operand(0));
  llvm::Value *ub = scalar(op.operand(1));
  llvm::Value *step = scalar(op.operand(2));

  int zero_step = add_fault_site(op, "step is 0: the loop would never end", {},
                                 FaultSite::Form::NoLane);
  fail_if(
      builder.CreateICmpEQ(step, llvm::Constant::getNullValue(step->getType())),
      zero_step, [&] { return i64(-1); });

  llvm::Value *count =
      llvm_backend::trip_count(builder, lb, ub, step, is_signed);

  // Carried values: scalars as phis, blocks in slots filled from init.
  size_t carried = op.num_operands() - 3;
  std::vector<llvm::Value *> slots(carried, nullptr);
  std::vector<llvm::Value *> initial(carried, nullptr);
  for (size_t k = 0; k < carried; ++k) {
    const ir::Value *init = op.operand(3 + k);
    if (init->type().is_block()) {
      slots[k] = allocate_slot_for(init->type());
      evaluate_into(init, slots[k]);
    } else {
      initial[k] = scalar(init);
    }
  }

  llvm::BasicBlock *before = builder.GetInsertBlock();
  auto *check = llvm::BasicBlock::Create(context, "for.check", function);
  auto *loop = llvm::BasicBlock::Create(context, "for.body", function);
  auto *after = llvm::BasicBlock::Create(context, "for.done", function);
  builder.CreateBr(check);
  builder.SetInsertPoint(check);
  llvm::PHINode *trip = builder.CreatePHI(wide, 2, "trip");
  trip->addIncoming(builder.getInt64(0), before);
  std::vector<llvm::PHINode *> phis(carried, nullptr);
  for (size_t k = 0; k < carried; ++k)
    if (initial[k]) {
      phis[k] = builder.CreatePHI(initial[k]->getType(), 2);
      phis[k]->addIncoming(initial[k], before);
    }
  builder.CreateCondBr(builder.CreateICmpULT(trip, count), loop, after);

  builder.SetInsertPoint(loop);
  llvm::Value *iv =
      llvm_backend::induction_value(builder, lb, step, trip, is_signed);
  set_scalar(body.argument(0), iv);
  for (size_t k = 0; k < carried; ++k) {
    if (phis[k])
      set_scalar(body.argument(1 + k), phis[k]);
    else
      set_materialized(body.argument(1 + k), slots[k]);
  }
  lower_block(body);

  // The yield: blocks into their slots, scalars to the phis.
  yield_blocks(*this, body, slots, phis);
  const ir::Operation *yield = body.terminator();
  std::vector<llvm::Value *> next_scalars(carried, nullptr);
  for (size_t k = 0; k < carried; ++k)
    if (phis[k])
      next_scalars[k] = scalar(yield->operand(k));
  llvm::BasicBlock *latch = builder.GetInsertBlock();
  trip->addIncoming(builder.CreateAdd(trip, builder.getInt64(1)), latch);
  for (size_t k = 0; k < carried; ++k)
    if (phis[k])
      phis[k]->addIncoming(next_scalars[k], latch);
  builder.CreateBr(check);

  builder.SetInsertPoint(after);
  for (size_t k = 0; k < carried; ++k) {
    if (phis[k])
      set_scalar(op.result(k), phis[k]);
    else
      set_materialized(op.result(k), slots[k]);
  }
}

void KernelLowering::lower_if(const ir::Operation &op) {
  size_t results = op.num_results();
  std::vector<llvm::Value *> slots(results, nullptr);
  for (size_t k = 0; k < results; ++k)
    if (op.result(k)->type().is_block())
      slots[k] = allocate_slot_for(op.result(k)->type());
  auto *then_block = llvm::BasicBlock::Create(context, "if.then", function);
  auto *else_block = llvm::BasicBlock::Create(context, "if.else", function);
  auto *after = llvm::BasicBlock::Create(context, "if.done", function);
  builder.CreateCondBr(scalar(op.operand(0)), then_block, else_block);

  std::vector<std::vector<std::pair<llvm::Value *, llvm::BasicBlock *>>>
      incoming(results);
  llvm::BasicBlock *branches[] = {then_block, else_block};
  for (int r = 0; r < 2; ++r) {
    builder.SetInsertPoint(branches[r]);
    const ir::Block &region = *op.region(r);
    lower_block(region);
    const ir::Operation *yield = region.terminator();
    for (size_t k = 0; k < results; ++k) {
      const ir::Value *yielded = yield->operand(k);
      if (slots[k])
        evaluate_into(yielded, slots[k]);
    }
    for (size_t k = 0; k < results; ++k)
      if (!slots[k])
        incoming[k].emplace_back(scalar(yield->operand(k)),
                                 builder.GetInsertBlock());
    builder.CreateBr(after);
  }
  builder.SetInsertPoint(after);
  for (size_t k = 0; k < results; ++k) {
    if (slots[k]) {
      set_materialized(op.result(k), slots[k]);
      continue;
    }
    llvm::PHINode *phi = builder.CreatePHI(incoming[k][0].first->getType(), 2);
    for (auto &[value, block] : incoming[k])
      phi->addIncoming(value, block);
    set_scalar(op.result(k), phi);
  }
}

} // namespace blocc::cpu
