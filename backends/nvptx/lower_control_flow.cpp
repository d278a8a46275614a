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

namespace {

/// A run-time step of 0 stops the program (the step is a scalar, alike in
/// every thread), as the interpreter reports it. A non-zero constant, or
/// the grid's size along an axis (a grid-stride loop's step: at least 1),
/// needs no check; a check makes the kernel one that can fail, whose every
/// launch waits for it to read its fault record.
void check_step(KernelLowering &k, const ir::Operation &loop,
                llvm::Value *step) {
  std::optional<int64_t> known_step =
      k.axis_info.get(loop.operand(2)).constant_value;
  const ir::Operation *step_producer = loop.operand(2)->defining_op();
  const bool step_is_grid_size =
      step_producer && step_producer->code() == ir::OpCode::NumPrograms;
  if (!step_is_grid_size && (!known_step || *known_step == 0))
    k.fail_if(k.builder.CreateICmpEQ(
                  step, llvm::Constant::getNullValue(step->getType())),
              k.builder.getInt32(0),
              k.add_fault_site(loop, "step is 0: the loop would never end",
                               FaultSite::Form::NoLane),
              true);
}

/// The loop's carried values before its first iteration.
std::vector<CarriedValue> initial_values(KernelLowering &k,
                                         const ir::Operation &loop) {
  std::vector<CarriedValue> initial(loop.num_operands() - 3);
  for (size_t i = 0; i < initial.size(); ++i) {
    const ir::Value *init = loop.operand(3 + i);
    if (init->type().is_block())
      initial[i].registers =
          k.registers(init, *k.layouts().home(loop.result(i)));
    else
      initial[i].scalar = k.scalar(init);
  }
  return initial;
}

/// In the loop's header: a phi per distinct carried value (registers of a
/// block share values), from `initial` on entry from `before`. `current`
/// becomes the phis, `phis` lists each value's.
void add_carried_phis(KernelLowering &k, const ir::Operation &loop,
                      const std::vector<CarriedValue> &initial,
                      llvm::BasicBlock *before,
                      std::vector<std::vector<llvm::PHINode *>> &phis,
                      std::vector<CarriedValue> &current) {
  for (size_t i = 0; i < initial.size(); ++i) {
    if (initial[i].scalar) {
      llvm::PHINode *phi = k.builder.CreatePHI(initial[i].scalar->getType(), 2);
      phi->addIncoming(initial[i].scalar, before);
      phis[i].push_back(phi);
      current[i].scalar = phi;
      continue;
    }
    const Layout &home = *k.layouts().home(loop.result(i));
    const BlockedLayout &p = k.parent(home);
    current[i].registers.assign(p.num_registers(), nullptr);
    for (int64_t r = 0; r < p.num_registers(); ++r) {
      int64_t c = canonical_register(p, home, r);
      if (c != r) {
        current[i].registers[r] = current[i].registers[c];
        continue;
      }
      llvm::PHINode *phi =
          k.builder.CreatePHI(initial[i].registers[r]->getType(), 2);
      phi->addIncoming(initial[i].registers[r], before);
      phis[i].push_back(phi);
      current[i].registers[r] = phi;
    }
  }
}

/// The values the body yields, into the phis from `latch`.
void add_yielded(KernelLowering &k, const ir::Operation &loop,
                 const ir::Operation &yield,
                 const std::vector<CarriedValue> &current,
                 std::vector<std::vector<llvm::PHINode *>> &phis,
                 llvm::BasicBlock *latch) {
  for (size_t i = 0; i < current.size(); ++i) {
    const ir::Value *next = yield.operand(i);
    if (current[i].scalar) {
      phis[i][0]->addIncoming(k.scalar(next), latch);
      continue;
    }
    const Layout &home = *k.layouts().home(loop.result(i));
    const KernelLowering::Registers &values = k.registers(next, home);
    size_t phi = 0;
    for (int64_t r = 0; r < static_cast<int64_t>(values.size()); ++r)
      if (canonical_register(k.parent(home), home, r) == r)
        phis[i][phi++]->addIncoming(values[r], latch);
  }
}

/// The carried `values` bound to `targets`: the body's arguments after
/// the induction variable, or the loop's results.
void bind_carried(KernelLowering &k, const ir::Operation &loop,
                  const std::vector<const ir::Value *> &targets,
                  const std::vector<CarriedValue> &values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].scalar)
      k.set_scalar(targets[i], values[i].scalar);
    else
      k.define_block(targets[i], *k.layouts().home(loop.result(i)),
                     values[i].registers);
  }
}

} // namespace

void KernelLowering::lower_for(const ir::Operation &op) {
  const ir::Block &body = *op.region(0);
  const ir::Type &iv_type = op.operand(0)->type();
  const bool is_signed = ir::is_signed(iv_type.element());
  llvm::Value *lb = scalar(op.operand(0));
  llvm::Value *ub = scalar(op.operand(1));
  llvm::Value *step = scalar(op.operand(2));
  llvm::Function *f = builder.GetInsertBlock()->getParent();
  check_step(*this, op, step);
  // Iterations are counted in 32 bits where they fit: 64-bit counters
  // cost two instructions an add and a compare on the GPU.
  llvm::Type *counter = llvm_backend::counter_type(builder, lb);
  llvm::Value *count = builder.CreateTrunc(
      llvm_backend::trip_count(builder, lb, ub, step, is_signed), counter);
  const size_t carried = op.num_operands() - 3;
  std::vector<CarriedValue> initial = initial_values(*this, op);

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
          builder.CreateICmpNE(count, llvm::Constant::getNullValue(counter)),
          runs, end);
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
  llvm::PHINode *trip = builder.CreatePHI(counter, 2, "trip");
  trip->addIncoming(llvm::ConstantInt::get(counter, 0), before);
  std::vector<std::vector<llvm::PHINode *>> phis(carried);
  std::vector<CarriedValue> current(carried);
  add_carried_phis(*this, op, initial, before, phis, current);
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
  std::vector<ir::Value *> arguments = body.arguments();
  bind_carried(*this, op, {arguments.begin() + 1, arguments.end()}, current);
  const ir::Operation *yield = lower_region(body);
  llvm::BasicBlock *latch = builder.GetInsertBlock();
  if (pipeline)
    pipeline->end_iteration(latch);
  trip->addIncoming(builder.CreateAdd(trip, llvm::ConstantInt::get(counter, 1)),
                    latch);
  add_yielded(*this, op, *yield, current, phis, latch);
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
  std::vector<ir::Value *> results = op.results();
  bind_carried(*this, op, {results.begin(), results.end()}, current);
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
