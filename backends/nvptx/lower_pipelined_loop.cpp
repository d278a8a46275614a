// LoopPipeline (loop_pipeline.h): the cp.async and TMA copies, stages and
// waits of a software-pipelined loop.
#include "backends/llvm/trip_count.h"
#include "backends/nvptx/loop_pipeline.h"
#include "backends/nvptx/tile_addresses.h"

#include <algorithm>

#include <llvm/IR/IntrinsicsNVPTX.h>

namespace blocc::nvptx {

namespace {

/// The carried values the address ops read, as bound now.
CarriedValue carried_now(KernelLowering &k, const ir::Operation &loop,
                         const ir::Value *v, size_t index) {
  CarriedValue out;
  if (v->type().is_block())
    out.registers = k.registers(v, *k.layouts().home(loop.result(index)));
  else
    out.scalar = k.scalar(v);
  return out;
}

/// The mask registers in `layout` of a load copied ahead, or nullptr where
/// it has no mask or one known to be true.
const KernelLowering::Registers *
copy_masks(KernelLowering &k, const ir::Operation &load, const Layout &layout) {
  if (load.num_operands() < 2 ||
      ir::provably_all_true(k.axis_info, load.operand(1)))
    return nullptr;
  return &k.registers(load.operand(1), layout);
}

/// One cp.async of `bytes` (4, 8 or 16) from `source` to `destination`,
/// copying zeros where `active` is false. 16-byte copies go around L1
/// (.cg), which only the smaller sizes may not. Where the target's PTX has
/// it (`ignore_source_predicate`), a copy that may be inactive takes
/// `active` as its ignore-src predicate: one predicate per copy, where the
/// source-size form costs a select of the size and a compare of it after
/// the predicates' own.
void copy_async(llvm::IRBuilder<> &b, int64_t bytes, llvm::Value *destination,
                llvm::Value *source, llvm::Value *active,
                bool ignore_source_predicate) {
  auto *constant = llvm::dyn_cast<llvm::ConstantInt>(active);
  if (ignore_source_predicate && !(constant && constant->isOne())) {
    inline_ptx(b,
               std::string("cp.async.") + (bytes == 16 ? "cg" : "ca") +
                   ".shared.global [$0], [$1], " + std::to_string(bytes) +
                   ", $2;",
               "l,l,b",
               {b.CreatePtrToInt(destination, b.getInt64Ty()),
                b.CreatePtrToInt(source, b.getInt64Ty()), b.CreateNot(active)});
    return;
  }
  using I = llvm::Intrinsic::ID;
  I copy = bytes == 16  ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s
           : bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s
                        : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s;
  llvm::Value *size = b.CreateSelect(
      active, b.getInt32(static_cast<uint32_t>(bytes)), b.getInt32(0));
  b.CreateIntrinsic(copy, {}, {destination, source, size});
}

} // namespace

LoopPipeline::LoopPipeline(KernelLowering &k, const ir::Operation &loop,
                           const PipelinedLoop &plan, LoopBounds bounds)
    : k_(k), b_(k.builder), loop_(loop), body_(*loop.region(0)), plan_(plan),
      bounds_(bounds), specialized_(k.specialized_loop() == &loop) {}

llvm::Value *LoopPipeline::stage_element(llvm::Value *stage,
                                         int64_t byte_offset,
                                         int64_t element_bytes) {
  return b_.CreateAdd(
      b_.getInt32(
          static_cast<uint32_t>((base_bytes_ + byte_offset) / element_bytes)),
      b_.CreateMul(stage, b_.getInt32(static_cast<uint32_t>(plan_.stage_bytes /
                                                            element_bytes))));
}

llvm::Value *LoopPipeline::stage_first(llvm::Value *stage) {
  return stage_element(stage, 0, plan_.loads.front().tile.element_bytes);
}

llvm::Value *LoopPipeline::stage_barrier(llvm::Value *stage) {
  return k_.shared_window_address(
      b_.getInt64Ty(),
      b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(barriers_at_ / 8)),
                   stage));
}

void LoopPipeline::bind(const ir::Value *argument, size_t k,
                        const CarriedValue &v) {
  if (v.scalar)
    k_.set_scalar(argument, v.scalar);
  else
    k_.define_block(argument, *k_.layouts().home(loop_.result(k)), v.registers);
}

void LoopPipeline::copy_tile(const PipelinedLoad &load, llvm::Value *first,
                             llvm::Value *valid) {
  const ir::Operation &op = *load.load;
  // The load's result is its tile (gpu-stage-dot-operands); its pointers'
  // layout says which thread copies which elements.
  const Layout &layout = *k_.layouts().home(op.operand(0));
  const BlockedLayout &p = k_.parent(layout);
  const KernelLowering::Registers &addresses =
      k_.registers(op.operand(0), layout);
  const KernelLowering::Registers *masks = copy_masks(k_, op, layout);
  const SharedTile &tile = load.tile;
  const int last = p.rank() - 1;
  llvm::Type *element = k_.storage_type(op.result()->type().element());
  const int64_t bytes = load.width * tile.element_bytes;
  llvm::Value *start =
      b_.CreateAdd(first, b_.getInt32(static_cast<uint32_t>(load.offset)));
  // The thread's first element is its part of the destinations, each
  // register's offset a constant (tile_addresses.h).
  const int row_dim = static_cast<int>(load.layout.order[1]);
  TileAddresses destinations(
      b_, tile,
      thread_part_of(linear_layout_of(p, layout), row_dim,
                     k_.element_index(layout, 0, row_dim),
                     k_.element_index(layout, 0, 1 - row_dim)),
      element, [&](llvm::Value *index) {
        return k_.reserved_shared_element(element, b_.CreateAdd(start, index));
      });
  for (int64_t r = 0; r < p.num_registers(); ++r) {
    if (canonical_register(p, layout, r) != r ||
        p.register_offset(r)[last] % load.width != 0)
      continue;
    std::vector<int64_t> offset = p.register_offset(r);
    llvm::Value *destination = destinations.at(
        offset[layout.dims[row_dim]], offset[layout.dims[1 - row_dim]]);
    copy_async(b_, bytes, destination, addresses[r],
               masks ? b_.CreateAnd(valid, (*masks)[r]) : valid,
               ignore_source_predicate());
  }
}

llvm::Value *LoopPipeline::prefetched_first(const PrefetchedLoad &load,
                                            llvm::Value *stage) {
  return stage_element(stage, load.byte_offset,
                       ir::scalar_bits(load.load->result()->type().element()) /
                           8);
}

void LoopPipeline::copy_prefetched(const PrefetchedLoad &load,
                                   llvm::Value *stage, llvm::Value *valid) {
  const ir::Operation &op = *load.load;
  // Each thread copies the elements its pointers address; threads holding
  // the same element copy the same bytes.
  const Layout &layout = *k_.layouts().home(op.operand(0));
  const BlockedLayout &p = k_.parent(layout);
  const KernelLowering::Registers &addresses =
      k_.registers(op.operand(0), layout);
  const KernelLowering::Registers *masks = copy_masks(k_, op, layout);
  llvm::Type *element = k_.storage_type(op.result()->type().element());
  const int64_t bytes =
      load.width * (ir::scalar_bits(op.result()->type().element()) / 8);
  llvm::Value *first = prefetched_first(load, stage);
  const int dim = layout.dims[0];
  for (int64_t r = 0; r < p.num_registers(); ++r) {
    if (canonical_register(p, layout, r) != r ||
        p.register_offset(r)[dim] % load.width != 0)
      continue;
    llvm::Value *destination = k_.reserved_shared_element(
        element, b_.CreateAdd(first, k_.element_index(layout, r, 0)));
    copy_async(b_, bytes, destination, addresses[r],
               masks ? b_.CreateAnd(valid, (*masks)[r]) : valid,
               ignore_source_predicate());
  }
}

std::vector<CarriedValue>
LoopPipeline::issue(llvm::Value *iv, const std::vector<CarriedValue> &carried,
                    llvm::Value *stage, llvm::Value *valid) {
  k_.set_scalar(body_.argument(0), iv);
  for (size_t i = 0; i < plan_.carried.size(); ++i)
    bind(body_.argument(1 + plan_.carried[i]), plan_.carried[i], carried[i]);
  for (const ir::Operation *op : plan_.address_ops)
    k_.lower_again(*op);
  llvm::Value *first = stage_first(stage);
  if (plan_.tma_bytes()) {
    // The arrival announces the bytes before any copy can complete them.
    llvm::Value *barrier = stage_barrier(stage);
    k_.expect_tma_bytes(barrier, plan_.tma_bytes(), valid);
    for (const PipelinedLoad &load : plan_.loads)
      if (load.tma)
        k_.issue_tma_copy(k_.tma_copy_of(*load.load),
                          b_.CreateAdd(first, b_.getInt32(static_cast<uint32_t>(
                                                  load.offset))),
                          barrier, valid);
  }
  if (plan_.copies_with_cp_async()) {
    for (const PipelinedLoad &load : plan_.loads)
      if (!load.tma)
        copy_tile(load, first, valid);
    for (const PrefetchedLoad &load : plan_.prefetched)
      copy_prefetched(load, stage, valid);
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
  }
  const ir::Operation *yield = body_.terminator();
  std::vector<CarriedValue> next;
  for (size_t index : plan_.carried)
    next.push_back(carried_now(k_, loop_, yield->operand(index), index));
  return next;
}

void LoopPipeline::prologue(const std::vector<CarriedValue> &initial) {
  // Copies read global memory and write shared memory: order them after
  // earlier stores and shared reads.
  auto [stored, shared_read] = k_.barrier_state();
  if (stored || shared_read)
    k_.barrier();
  saved_reserve_ = k_.shared_reserved_bytes();
  base_bytes_ = align_up(saved_reserve_, stages_alignment(plan_.alignment));
  barriers_at_ = base_bytes_ + plan_.stages * plan_.stage_bytes;
  if (specialized_) {
    hand_over(initial);
    return;
  }
  k_.reserve_shared_bytes(barriers_at_ + plan_.barrier_bytes());
  if (plan_.tma_bytes())
    k_.init_mbarriers(stage_barrier(b_.getInt32(0)), plan_.stages);
  std::vector<CarriedValue> carried;
  for (size_t index : plan_.carried)
    carried.push_back(initial[index]);
  for (int s = 0; s + 1 < plan_.stages; ++s) {
    llvm::Value *trip = trip_constant(s);
    llvm::Value *iv = llvm_backend::induction_value(
        b_, bounds_.lb, bounds_.step, trip, bounds_.is_signed);
    carried = issue(iv, carried, b_.getInt32(s),
                    b_.CreateICmpULT(trip, bounds_.count));
  }
  ahead_ = carried;
}

void LoopPipeline::add_phis(llvm::BasicBlock *preheader) {
  stage_ = b_.CreatePHI(b_.getInt32Ty(), 2, "stage");
  stage_->addIncoming(b_.getInt32(0), preheader);
  for (size_t i = 0; i < ahead_.size(); ++i) {
    CarriedValue &v = ahead_[i];
    std::vector<llvm::PHINode *> phis;
    auto phi_of = [&](llvm::Value *initial) {
      llvm::PHINode *phi = b_.CreatePHI(initial->getType(), 2);
      phi->addIncoming(initial, preheader);
      phis.push_back(phi);
      return phi;
    };
    if (v.scalar) {
      v.scalar = phi_of(v.scalar);
    } else {
      // Registers holding one element share its phi.
      const Layout &home = *k_.layouts().home(loop_.result(plan_.carried[i]));
      const BlockedLayout &p = k_.parent(home);
      for (int64_t r = 0; r < p.num_registers(); ++r) {
        int64_t c = canonical_register(p, home, r);
        v.registers[r] = c == r ? phi_of(v.registers[r]) : v.registers[c];
      }
    }
    ahead_phis_.push_back(phis);
  }
}

void LoopPipeline::start_iteration(llvm::Value *trip) {
  const int stages = plan_.stages;
  const bool cp_async = plan_.copies_with_cp_async();
  if (cp_async) {
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {},
                       {b_.getInt32(static_cast<uint32_t>(stages - 2))});
    // Warpgroup MMAs read the stage through the async proxy: the copies
    // this thread made visible to it (before the barrier shares them).
    if (plan_.warpgroups)
      k_.fence_async_proxy();
  }
  if (plan_.tma_bytes()) {
    // Use (trip / S) of this stage: its mbarrier's phase of that parity.
    llvm::Value *use = b_.CreateUDiv(trip, trip_constant(stages));
    k_.wait_mbarrier(
        stage_barrier(stage_),
        b_.CreateTrunc(b_.CreateAnd(use, trip_constant(1)), b_.getInt32Ty()));
  }
  // cp.async copies are shared by the barrier; copies issued right below
  // go to the stage every warp read last iteration (a producer warpgroup
  // issues them where the loop has one).
  const bool issues_here = !specialized_ && !plan_.mma_in_flight;
  if (cp_async || issues_here)
    k_.barrier();
  trip_ = trip;
  if (issues_here)
    issue_ahead(trip);
  llvm::Value *last_stage = b_.getInt32(static_cast<uint32_t>(stages - 1));
  next_stage_ =
      b_.CreateSelect(b_.CreateICmpEQ(stage_, last_stage), b_.getInt32(0),
                      b_.CreateAdd(stage_, b_.getInt32(1)));
  // The dots of this iteration read its stage.
  llvm::Value *first = stage_first(stage_);
  for (const PipelinedLoad &load : plan_.loads) {
    KernelLowering::StagedOperand staged{
        b_.CreateAdd(first, b_.getInt32(static_cast<uint32_t>(load.offset)))};
    k_.set_staged_operand(load.load->result(), staged);
    for (const ir::Operation *view : load.views)
      k_.set_staged_operand(view->result(), staged);
  }
  for (const PrefetchedLoad &load : plan_.prefetched)
    k_.set_prefetched(load.load->result(), prefetched_first(load, stage_));
}

llvm::Value *LoopPipeline::previous_stage() {
  return b_.CreateSelect(b_.CreateICmpEQ(stage_, b_.getInt32(0)),
                         b_.getInt32(static_cast<uint32_t>(plan_.stages - 1)),
                         b_.CreateSub(stage_, b_.getInt32(1)));
}

std::vector<const ir::Value *> LoopPipeline::address_values() const {
  std::vector<const ir::Value *> values;
  for (const ir::Value *argument : body_.arguments())
    values.push_back(argument);
  for (const ir::Operation *op : plan_.address_ops)
    for (const ir::Value *result : op->results())
      values.push_back(result);
  return values;
}

void LoopPipeline::issue_ahead(llvm::Value *trip) {
  // Iteration trip + S - 1 goes to the stage read last iteration.
  const int stages = plan_.stages;
  llvm::Value *ahead_stage = previous_stage();
  llvm::Value *ahead = trip_constant(stages - 1);
  llvm::Value *ahead_iv = llvm_backend::induction_value(
      b_, bounds_.lb, bounds_.step, b_.CreateAdd(trip, ahead),
      bounds_.is_signed);
  // trip + S - 1 < count, written so that it cannot wrap (trip < count).
  ahead_next_ =
      issue(ahead_iv, ahead_, ahead_stage,
            b_.CreateICmpULT(ahead, b_.CreateSub(bounds_.count, trip)));
}

bool LoopPipeline::ignore_source_predicate() const {
  // cp.async's ignore-src operand came with PTX ISA 7.5, which the PTX of
  // sm_89 and later is (that of sm_80 and sm_86 is older). Loops of
  // mma.sync keep the source-size form: there ptxas kept the predicates
  // live across the loop and spilled (tf32x3 on 8 warps: 68 bytes).
  return k_.arch.sm >= 89 && plan_.warpgroups;
}

llvm::Value *LoopPipeline::trip_constant(int64_t n) const {
  return llvm::ConstantInt::get(bounds_.count->getType(),
                                static_cast<uint64_t>(n));
}

void LoopPipeline::end_iteration(llvm::BasicBlock *&latch) {
  if (specialized_) {
    release_read_stage();
    latch = b_.GetInsertBlock();
  } else if (plan_.mma_in_flight) {
    // Issuing computes the address ops again for a later iteration: the
    // loop's own values (what it yields) are put back after.
    KernelLowering::Bindings own = k_.bindings_of(address_values());
    k_.barrier();
    issue_ahead(trip_);
    k_.restore(own);
    latch = b_.GetInsertBlock();
  }
  stage_->addIncoming(next_stage_, latch);
  for (size_t i = 0; i < ahead_phis_.size(); ++i) {
    const CarriedValue &next = ahead_next_[i];
    if (next.scalar) {
      ahead_phis_[i][0]->addIncoming(next.scalar, latch);
      continue;
    }
    const Layout &home = *k_.layouts().home(loop_.result(plan_.carried[i]));
    const BlockedLayout &p = k_.parent(home);
    size_t phi = 0;
    for (int64_t r = 0; r < p.num_registers(); ++r)
      if (canonical_register(p, home, r) == r)
        ahead_phis_[i][phi++]->addIncoming(next.registers[r], latch);
  }
}

void LoopPipeline::finish() {
  if (plan_.mma_in_flight)
    k_.wait_for_warpgroup_mmas(0);
  if (plan_.copies_with_cp_async())
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_all, {}, {});
  k_.barrier();
  // Every copy issued was waited for in its iteration (a producer's
  // empty mbarriers follow the full ones).
  if (plan_.tma_bytes())
    k_.invalidate_mbarriers(stage_barrier(b_.getInt32(0)),
                            (specialized_ ? 2 : 1) * plan_.stages);
  for (const PipelinedLoad &load : plan_.loads) {
    k_.clear_staged_operand(load.load->result());
    for (const ir::Operation *view : load.views)
      k_.clear_staged_operand(view->result());
  }
  for (const PrefetchedLoad &load : plan_.prefetched)
    k_.clear_prefetched(load.load->result());
  k_.reserve_shared_bytes(saved_reserve_);
}

} // namespace blocc::nvptx
