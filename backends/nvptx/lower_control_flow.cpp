// for and if. Every thread runs the same control flow: loop bounds and if
// conditions are scalars, which every thread computes alike, so barriers
// and warp shuffles inside them are reached by the whole CTA.
//
// Carried scalars and an if's scalar results are phis; a carried block (or
// an if's block result) is one phi per distinct register of its home
// layout (assign_layouts.h): blocks stay in registers across iterations.
// The loop runs `iv = lb, lb + step, ...` while iv < ub (step > 0) or
// iv > ub (step < 0), as the interpreter does, with the trip count
// computed up front in 64 bits so that iv + step never overflows near the
// type's maximum. A zero step stops the program with the interpreter's
// error (lower_fault.cpp).
//
// Barriers: a loop body may follow its own stores and shared-memory reads,
// and an if's successor either branch, so their state is assumed unordered
// at those points (lower_convert.cpp and the store barriers then add the
// barriers that are needed).
#include "backends/llvm/trip_count.h"
#include "backends/nvptx/kernel_lowering.h"
#include "backends/nvptx/loop_pipeline.h"

#include "ir/error.h"
#include "ir/passes/side_effects.h"

namespace blocc::nvptx {

namespace {} // namespace

const ir::Operation *KernelLowering::lower_region(const ir::Block &block) {
  for (const auto &op : block.ops()) {
    if (ir::is_terminator(op->code()) && op->code() != ir::OpCode::Return) {
      wait_for_mmas_before(*op);
      return op.get();
    }
    lower_op(*op);
    release_tiles_after(*op);
  }
  return nullptr;
}

namespace {

/// After a pipelined loop that is jumped over where it runs no iteration
/// (loop_pipeline.h): at `end`, its values join the initial ones, which
/// the jump from `entry` brings; `current` becomes the joined values.
void join_skipped_loop(KernelLowering &k, const ir::Operation &loop,
                       llvm::BasicBlock *entry, llvm::BasicBlock *end,
                       const std::vector<CarriedValue> &initial,
                       std::vector<CarriedValue> &current) {
  llvm::IRBuilderBase &b = k.builder;
  llvm::BasicBlock *from_loop = b.GetInsertBlock();
  b.CreateBr(end);
  b.SetInsertPoint(end);
  auto join = [&](llvm::Value *looped, llvm::Value *skipped) {
    llvm::PHINode *phi = b.CreatePHI(looped->getType(), 2);
    phi->addIncoming(looped, from_loop);
    phi->addIncoming(skipped, entry);
    return phi;
  };
  for (size_t i = 0; i < current.size(); ++i) {
    if (current[i].scalar) {
      current[i].scalar = join(current[i].scalar, initial[i].scalar);
      continue;
    }
    const Layout &home = *k.layouts().home(loop.result(i));
    const BlockedLayout &p = k.parent(home);
    for (int64_t r = 0; r < p.num_registers(); ++r) {
      int64_t c = canonical_register(p, home, r);
      current[i].registers[r] =
          c == r ? join(current[i].registers[r], initial[i].registers[r])
                 : current[i].registers[c];
    }
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
  llvm::Function *f = builder.GetInsertBlock()->getParent();

  // A run-time step of 0 stops the program (the step is a scalar, alike
  // in every thread), as the interpreter reports it. A non-zero constant,
  // or the grid's size along an axis (a grid-stride loop's step: at least
  // 1), needs no check; a check makes the kernel one that can fail, whose
  // every launch waits for it to read its fault record.
  std::optional<int64_t> known_step =
      axis_info.get(op.operand(2)).constant_value;
  const ir::Operation *step_producer = op.operand(2)->defining_op();
  const bool step_is_grid_size =
      step_producer && step_producer->code() == ir::OpCode::NumPrograms;
  if (!step_is_grid_size && (!known_step || *known_step == 0))
    fail_if(builder.CreateICmpEQ(step,
                                 llvm::Constant::getNullValue(step->getType())),
            builder.getInt32(0),
            add_fault_site(op, "step is 0: the loop would never end",
                           FaultSite::Form::NoLane),
            true);

  llvm::Value *count =
      llvm_backend::trip_count(builder, lb, ub, step, is_signed);

  size_t carried = op.num_operands() - 3;
  std::vector<CarriedValue> initial(carried);
  for (size_t k = 0; k < carried; ++k) {
    const ir::Value *init = op.operand(3 + k);
    if (init->type().is_block())
      initial[k].registers = registers(init, *layouts().home(op.result(k)));
    else
      initial[k].scalar = scalar(init);
  }

  // Loads of tiles for dots on tensor cores run stages ahead
  // (loop_pipeline.h).
  std::optional<LoopPipeline> pipeline;
  llvm::BasicBlock *entry = builder.GetInsertBlock(), *end = nullptr;
  const bool stored_before_guard = barrier_state().first;
  if (const PipelinedLoop *plan = pipelined_loop(op)) {
    pipeline.emplace(*this, op, *plan, LoopBounds{lb, step, count, is_signed});
    // The producer warpgroup of a warp-specialized loop waits to be handed
    // its inputs whether the loop runs or not.
    const bool specialized = specialized_loop() == &op;
    if (specialized)
      pipeline->prologue(initial);
    if (plan->mma_in_flight) {
      // Jumped over where it runs no iteration (loop_pipeline.h).
      entry = builder.GetInsertBlock();
      auto *runs = llvm::BasicBlock::Create(context, "for.pipelined", f);
      end = llvm::BasicBlock::Create(context, "for.end", f);
      builder.CreateCondBr(
          builder.CreateICmpNE(count, llvm::Constant::getNullValue(wide)), runs,
          end);
      builder.SetInsertPoint(runs);
    }
    if (!specialized)
      pipeline->prologue(initial);
  }

  llvm::BasicBlock *before = builder.GetInsertBlock();
  auto *check = llvm::BasicBlock::Create(context, "for.check", f);
  auto *loop = llvm::BasicBlock::Create(context, "for.body", f);
  auto *after = llvm::BasicBlock::Create(context, "for.done", f);
  builder.CreateBr(check);
  builder.SetInsertPoint(check);
  llvm::PHINode *trip = builder.CreatePHI(wide, 2, "trip");
  trip->addIncoming(builder.getInt64(0), before);
  // One phi per distinct value (registers of a block share values).
  std::vector<std::vector<llvm::PHINode *>> phis(carried);
  std::vector<CarriedValue> current(carried);
  for (size_t k = 0; k < carried; ++k) {
    if (initial[k].scalar) {
      llvm::PHINode *phi = builder.CreatePHI(initial[k].scalar->getType(), 2);
      phi->addIncoming(initial[k].scalar, before);
      phis[k].push_back(phi);
      current[k].scalar = phi;
      continue;
    }
    const Layout &home = *layouts().home(op.result(k));
    const BlockedLayout &p = parent(home);
    current[k].registers.assign(p.num_registers(), nullptr);
    for (int64_t r = 0; r < p.num_registers(); ++r) {
      int64_t c = canonical_register(p, home, r);
      if (c != r) {
        current[k].registers[r] = current[k].registers[c];
        continue;
      }
      llvm::PHINode *phi =
          builder.CreatePHI(initial[k].registers[r]->getType(), 2);
      phi->addIncoming(initial[k].registers[r], before);
      phis[k].push_back(phi);
      current[k].registers[r] = phi;
    }
  }
  if (pipeline)
    pipeline->add_phis(before);
  builder.CreateCondBr(builder.CreateICmpULT(trip, count), loop, after);

  builder.SetInsertPoint(loop);
  // The body follows the code before the loop or its own last iteration.
  const bool body_stores = ir::writes_memory(body);
  const bool stored_before = barrier_state().first;
  set_barrier_state({stored_before || body_stores, true});
  if (pipeline)
    pipeline->start_iteration(trip);
  llvm::Value *iv =
      llvm_backend::induction_value(builder, lb, step, trip, is_signed);
  set_scalar(body.argument(0), iv);
  for (size_t k = 0; k < carried; ++k) {
    const ir::Value *argument = body.argument(1 + k);
    if (current[k].scalar)
      set_scalar(argument, current[k].scalar);
    else
      define_block(argument, *layouts().home(op.result(k)),
                   current[k].registers);
  }
  const ir::Operation *yield = lower_region(body);
  llvm::BasicBlock *latch = builder.GetInsertBlock();
  if (pipeline)
    pipeline->end_iteration(latch);
  trip->addIncoming(builder.CreateAdd(trip, builder.getInt64(1)), latch);
  for (size_t k = 0; k < carried; ++k) {
    const ir::Value *next = yield->operand(k);
    if (current[k].scalar) {
      phis[k][0]->addIncoming(scalar(next), latch);
      continue;
    }
    const Layout &home = *layouts().home(op.result(k));
    const Registers &values = registers(next, home);
    size_t i = 0;
    for (int64_t r = 0; r < static_cast<int64_t>(values.size()); ++r)
      if (canonical_register(parent(home), home, r) == r)
        phis[k][i++]->addIncoming(values[r], latch);
  }
  builder.CreateBr(check);

  builder.SetInsertPoint(after);
  set_barrier_state({stored_before || body_stores, true});
  if (pipeline)
    pipeline->finish();
  if (end) {
    join_skipped_loop(*this, op, entry, end, initial, current);
    set_barrier_state(
        {stored_before_guard || stored_before || body_stores, true});
  }
  for (size_t k = 0; k < carried; ++k) {
    if (current[k].scalar)
      set_scalar(op.result(k), current[k].scalar);
    else
      define_block(op.result(k), *layouts().home(op.result(k)),
                   current[k].registers);
  }
}

void KernelLowering::lower_if(const ir::Operation &op) {
  llvm::Function *f = builder.GetInsertBlock()->getParent();
  auto *then_block = llvm::BasicBlock::Create(context, "if.then", f);
  auto *else_block = llvm::BasicBlock::Create(context, "if.else", f);
  auto *merge = llvm::BasicBlock::Create(context, "if.done", f);
  builder.CreateCondBr(scalar(op.operand(0)), then_block, else_block);

  auto state = barrier_state();
  std::vector<std::vector<CarriedValue>> yielded;
  std::vector<llvm::BasicBlock *> ends;
  std::pair<bool, bool> merged{false, false};
  llvm::BasicBlock *blocks[] = {then_block, else_block};
  for (size_t i = 0; i < 2; ++i) {
    builder.SetInsertPoint(blocks[i]);
    set_barrier_state(state);
    std::vector<CarriedValue> values(op.num_results());
    if (i < op.num_regions()) {
      const ir::Operation *yield = lower_region(*op.region(i));
      for (size_t k = 0; k < op.num_results(); ++k) {
        const ir::Value *v = yield->operand(k);
        if (v->type().is_block())
          values[k].registers = registers(v, *layouts().home(op.result(k)));
        else
          values[k].scalar = scalar(v);
      }
    }
    merged.first |= barrier_state().first;
    merged.second |= barrier_state().second;
    yielded.push_back(values);
    ends.push_back(builder.GetInsertBlock());
    builder.CreateBr(merge);
  }

  builder.SetInsertPoint(merge);
  set_barrier_state(merged);
  // Every phi first: defining a block result may convert it to its other
  // layouts right away (code in this block), and phis must lead it.
  std::vector<CarriedValue> results(op.num_results());
  for (size_t k = 0; k < op.num_results(); ++k) {
    if (yielded[0][k].scalar) {
      llvm::PHINode *phi =
          builder.CreatePHI(yielded[0][k].scalar->getType(), 2);
      phi->addIncoming(yielded[0][k].scalar, ends[0]);
      phi->addIncoming(yielded[1][k].scalar, ends[1]);
      results[k].scalar = phi;
      continue;
    }
    const Layout &home = *layouts().home(op.result(k));
    const BlockedLayout &p = parent(home);
    Registers &values = results[k].registers;
    values.assign(p.num_registers(), nullptr);
    for (int64_t r = 0; r < p.num_registers(); ++r) {
      int64_t c = canonical_register(p, home, r);
      if (c != r) {
        values[r] = values[c];
        continue;
      }
      llvm::PHINode *phi =
          builder.CreatePHI(yielded[0][k].registers[r]->getType(), 2);
      phi->addIncoming(yielded[0][k].registers[r], ends[0]);
      phi->addIncoming(yielded[1][k].registers[r], ends[1]);
      values[r] = phi;
    }
  }
  for (size_t k = 0; k < op.num_results(); ++k) {
    if (results[k].scalar)
      set_scalar(op.result(k), results[k].scalar);
    else
      define_block(op.result(k), *layouts().home(op.result(k)),
                   results[k].registers);
  }
}

} // namespace blocc::nvptx
