// The lowering of a software-pipelined loop's tile loads (the plan:
// pipeline_loads.h). lower_for drives the loop; a LoopPipeline adds, at
// fixed points of it, what pipelining needs:
//
//   before the loop    reserve S stages of shared memory (after the dots'
//                      inputs written before the loop, which the GPU IR
//                      writes there: gpu-stage-dot-operands); for iterations
//                      0 .. S-2, compute the address ops, issue the tiles'
//                      cp.async copies into stage s (zero-size copies
//                      past the trip count), commit a group each; carry
//                      the carried address values S - 1 iterations ahead
//   loop header        phis: this iteration's stage, the values ahead
//   top of the body    wait until at most S - 2 groups are pending (this
//                      iteration's tiles have landed), barrier (every
//                      thread's copies are visible, and every warp is done
//                      with the stage read last iteration); issue the
//                      copies of iteration i + S - 1 into that stage;
//                      the dots then read this iteration's stage in place
//   after the loop     wait for every copy, barrier; release the stages
//
// Where a dot on warpgroup MMAs accumulates the loop's carried value
// (PipelinedLoop::mma_in_flight), its MMAs stay in flight while the next
// iteration waits for its tiles: the dot waits only for the previous
// iteration's MMAs, and the copies of iteration i + S - 1 are issued at
// the end of the body, after a barrier (every warpgroup is then done with
// the stage read last iteration, which they go to); the loop waits for
// the last MMAs after it.
//
// Such a loop, where it runs no iteration, is jumped over, prologue and
// all, to where its values join those of its last iteration: the wait
// after the loop is then reached from the loop alone. Where the values of
// no iteration joined before it (as the lowering of other loops leaves
// them, once LLVM has rotated the loop), ptxas found registers of the
// MMAs in flight written before their wait and serialized every
// warpgroup MMA of the kernel (its warning C7515), as block placement
// happened to fall.
//
// Masked-off elements are copied as zero bytes (cp.async's source size 0),
// which is the load's `other`.
//
// Tiles the Tensor Memory Accelerator copies (PipelinedLoad::tma) complete
// on an mbarrier of their stage instead of a cp.async group: thread 0
// initializes one per stage before the loop, and with each stage's copies
// arrives on it expecting their bytes; iteration i waits for the phase
// (i / S) % 2 of its stage's mbarrier. The barrier at the top of the body
// then only serves cp.async copies and the reuse of a stage (where the
// copies are issued there, not after the MMAs); after the loop thread 0
// invalidates the mbarriers.
#pragma once

#include "backends/nvptx/kernel_lowering.h"

namespace blocc::nvptx {

/// A carried value of a loop: a scalar, or a block's registers in its
/// home layout.
struct CarriedValue {
  llvm::Value *scalar = nullptr;
  KernelLowering::Registers registers;
};

/// Where a loop runs: iv = lb + trip * step for trip < count (unsigned, of
/// llvm_backend::counter_type: i32 for induction variables of up to 32
/// bits).
struct LoopBounds {
  llvm::Value *lb = nullptr, *step = nullptr, *count = nullptr;
  bool is_signed = true;
};

class LoopPipeline {
public:
  LoopPipeline(KernelLowering &k, const ir::Operation &loop,
               const PipelinedLoop &plan, LoopBounds bounds);

  /// Before the loop's header: the copies of the first S - 1 iterations.
  void prologue(const std::vector<CarriedValue> &initial);
  /// In the header, after the loop's own phis.
  void add_phis(llvm::BasicBlock *preheader);
  /// At the top of the body, before the body's ops; `trip` is the phi.
  void start_iteration(llvm::Value *trip);
  /// At the end of the body (`latch`: the block that branches back,
  /// which code issued here may move).
  void end_iteration(llvm::BasicBlock *&latch);
  /// At the top of the block after the loop.
  void finish();

private:
  /// Binds the body's induction variable and the carried address values
  /// to an iteration's, computes the address ops and issues the copies
  /// into the stage whose first element is `stage_first` (i32), each
  /// copying nothing unless `valid` (i1); returns the carried address
  /// values of the iteration after.
  std::vector<CarriedValue> issue(llvm::Value *iv,
                                  const std::vector<CarriedValue> &carried,
                                  llvm::Value *stage, llvm::Value *valid);
  void copy_tile(const PipelinedLoad &load, llvm::Value *stage_first,
                 llvm::Value *valid);
  /// The copies of a prefetched load's elements into stage `stage` (i32).
  void copy_prefetched(const PrefetchedLoad &load, llvm::Value *stage,
                       llvm::Value *valid);
  /// Index of a prefetched load's first element in stage `stage`, in
  /// elements of its type from the start of shared memory.
  llvm::Value *prefetched_first(const PrefetchedLoad &load, llvm::Value *stage);
  /// Index of the first element of stage `stage` (i32) in shared memory.
  llvm::Value *stage_first(llvm::Value *stage);
  /// Index of the element `byte_offset` bytes into stage `stage` (i32), in
  /// elements of `element_bytes` from the start of shared memory.
  llvm::Value *stage_element(llvm::Value *stage, int64_t byte_offset,
                             int64_t element_bytes);
  /// The address of stage `stage`'s mbarrier (i32, in the shared window).
  llvm::Value *stage_barrier(llvm::Value *stage);
  void bind(const ir::Value *argument, size_t k, const CarriedValue &v);
  /// Issues the copies of the iteration S - 1 ahead into the stage read
  /// last iteration.
  void issue_ahead(llvm::Value *trip);
  /// Whether copies take cp.async's ignore-src predicate (copy_async).
  bool ignore_source_predicate() const;
  /// `n` in the type iterations are counted in (LoopBounds::count's).
  llvm::Value *trip_constant(int64_t n) const;
  /// The stage the previous iteration read (i32).
  llvm::Value *previous_stage();
  /// The values issue() binds: the body's arguments and the address ops'
  /// results.
  std::vector<const ir::Value *> address_values() const;

  // A warp-specialized loop (warp_specialize.h,
  // lower_warp_specialized_loop.cpp).
  /// Before the loop, in the consumers: the stages' full and empty
  /// mbarriers, the producer's inputs written to shared memory, the
  /// meeting with the producer; then the producer's code.
  void hand_over(const std::vector<CarriedValue> &initial);
  /// The values from before the loop that the copies' coordinates read,
  /// in program order.
  std::vector<const ir::Value *> producer_inputs() const;
  /// The producer warpgroup's code, in KernelLowering::producer_entry():
  /// `given` is what hand_over wrote, at `inputs_at` bytes.
  void lower_producer(const std::vector<const ir::Value *> &inputs,
                      const std::vector<llvm::Value *> &given,
                      int64_t inputs_at);
  /// The producer's loop, its inputs bound: for each iteration, waits for
  /// its stage to be empty and issues its copies.
  void lower_producer_loop(llvm::Value *lb, llvm::Value *step,
                           llvm::Value *count,
                           const std::vector<CarriedValue> &carried);
  /// At the end of an iteration, in the consumers: the last stage whose
  /// MMAs are done is empty for the producer to fill (the previous
  /// iteration's where the accumulating MMAs stay in flight, else this
  /// iteration's).
  void release_read_stage();
  /// The address of stage `stage`'s empty mbarrier (after the full ones).
  llvm::Value *empty_barrier(llvm::Value *stage);

  KernelLowering &k_;
  llvm::IRBuilder<> &b_;
  const ir::Operation &loop_;
  const ir::Block &body_;
  const PipelinedLoop &plan_;
  LoopBounds bounds_;
  int64_t base_bytes_ = 0;  // where the stages start in shared memory
  int64_t barriers_at_ = 0; // where their mbarriers start (TMA copies)
  int64_t saved_reserve_ = 0;
  bool specialized_ = false;        // a producer warpgroup issues the copies
  std::vector<CarriedValue> ahead_; // after the prologue
  std::vector<std::vector<llvm::PHINode *>> ahead_phis_;
  llvm::PHINode *stage_ = nullptr; // this iteration's stage
  llvm::Value *next_stage_ = nullptr;
  llvm::Value *trip_ = nullptr;          // this iteration's trip
  std::vector<CarriedValue> ahead_next_; // computed in the body
};

} // namespace blocc::nvptx
