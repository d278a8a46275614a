// Lowering of one block-IR kernel specialization to one NVVM kernel (an
// LLVM function with the PTX kernel calling convention) that runs one
// program instance per CTA of 32 * num_warps threads (and a producer
// warpgroup beside them where a loop is warp-specialized:
// warp_specialize.h).
//
// Every block value lives in the registers of the threads, distributed as
// its layout says (layout.h, assign_layouts.h): a thread holds one LLVM
// scalar per register of the layout's parent, and registers holding the
// same element share one LLVM value. Scalars (rank 0) are LLVM scalars that
// every thread computes alike. Elementwise ops therefore run register by
// register with backends/llvm's element ops; broadcast and expand_dims
// move nothing; loads and stores group a thread's consecutive registers
// into one vector access where axis info proves the addresses contiguous
// and aligned (lower_memory.cpp).
//
// Ops run in program order; a value needed in several layouts (index
// arithmetic) is computed once per layout where it stands, except values
// with a home layout (assign_layouts.h), which are converted through
// shared memory right where they are defined. Between a store and any
// later memory access of the program a CTA barrier orders the threads, so
// that a program reads what it wrote, as on the interpreter.
//
// Shared memory (lower_convert.cpp) is one buffer per kernel, sized for its
// largest user: every conversion and cross-warp reduction step writes it,
// waits at a barrier and reads it back before the next user, so no two uses
// are ever live at once and all may start at offset 0. A barrier precedes a
// write only when the buffer has been read since the last barrier. Up to
// 48 KB the buffer is static (`.shared`); beyond, it is the kernel's
// dynamic shared memory (`.extern .shared`, sized at launch:
// dynamic_shared_bytes()), up to the architecture's opt-in limit.
//
// Every op of the block IR is lowered; ops with operand types the backend
// does not handle are reported, before any code is generated, as a
// blocc::Error naming the op and its source line.
//
// Concerns live in separate files, each implementing part of this class:
// kernel_lowering.cpp (the walk, values, threads), lower_elementwise.cpp,
// lower_memory.cpp, lower_creation.cpp (constants, arange, program ids,
// splat, broadcast, expand_dims), lower_convert.cpp (shared memory and
// layout conversions), lower_reduce.cpp, lower_scan.cpp, lower_dot.cpp,
// lower_shape.cpp (reshape, permute, join, split, cat),
// lower_control_flow.cpp (for, if),
// lower_atomic.cpp, lower_debug.cpp (print, assert, checked integer
// division), lower_fault.cpp (stopping a program with an error),
// supported_ops.cpp.
#pragma once

#include "backends/nvptx/assign_layouts.h"
#include "backends/nvptx/fault_sites.h"
#include "backends/nvptx/gpu_arch.h"
#include "backends/nvptx/mma_layouts.h"
#include "backends/nvptx/nan_blind_uses.h"
#include "backends/nvptx/pipeline_loads.h"
#include "backends/nvptx/tma.h"
#include "ir/axis_info.h"
#include "ir/error.h"
#include "ir/function.h"

#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace blocc::nvptx {

struct WarpRoute;

/// Global memory: where every pointer of the block IR points.
constexpr unsigned kGlobalAddressSpace = 1;
/// Shared memory: conversions and reductions across warps.
constexpr unsigned kSharedAddressSpace = 3;
/// Shared memory a kernel may use without opting in: up to this much the
/// buffer is static, beyond it dynamic (GpuArch::max_shared_bytes() caps).
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

/// What the lowering throws when a kernel needs more shared memory than
/// the architecture gives a CTA: the backend then tries the kernel again
/// without pipelined loops, whose stages may be what filled it.
class SharedMemoryExhausted : public Error {
public:
  using Error::Error;
};

/// Throws blocc::Error naming the first op (in program order, regions
/// included) that the GPU backend cannot lower yet.
void check_supported(const ir::Function &function,
                     const ir::AxisInfoAnalysis &axis_info);

/// The loads of `kernel` whose innermost loop streams: reduces, scans or
/// multiplies no block (lower_memory.cpp says what that changes).
std::set<const ir::Operation *>
loads_in_streaming_loops(const ir::Function &kernel);

/// Inline PTX with side effects and a memory clobber, its operands
/// `values` as `constraints` says (without the clobber).
void inline_ptx(llvm::IRBuilder<> &b, const std::string &text,
                const std::string &constraints,
                const std::vector<llvm::Value *> &values);

class KernelLowering {
public:
  /// `kernel` is GPU IR (gpu_ir.h: the GPU passes have annotated it; a
  /// kernel without dots and loops needs nothing); `arch` bounds the shared
  /// memory the kernel may use. Throws blocc::Error naming the op for IR
  /// the backend cannot lower or GPU attributes that cannot be followed.
  KernelLowering(const ir::Function &kernel, llvm::Module &module,
                 int num_warps, const GpuArch &arch = {});

  /// Builds the kernel entry `symbol` in the module.
  llvm::Function *lower(const std::string &symbol);

  // ---- Shared by the lower_*.cpp files. ---------------------------------

  /// One LLVM value per register of the layout's parent.
  using Registers = std::vector<llvm::Value *>;

  /// Register-form LLVM type of an element (pointers: global pointers).
  llvm::Type *value_type(const ir::Type &type);
  llvm::Type *storage_type(ir::Scalar s);

  llvm::Value *scalar(const ir::Value *v);
  /// v's registers in `layout`, or in a layout equal to it as a linear
  /// layout (the same registers of the same threads).
  const Registers &registers(const ir::Value *v, const Layout &layout);
  const BlockedLayout &parent(const Layout &layout) const {
    return layouts_->parent(layout);
  }
  const LayoutAssignment &layouts() const { return *layouts_; }
  /// Registers for a value in `layout`, computing `element(r)` only for
  /// canonical registers and sharing it with the others.
  Registers per_register(const Layout &layout,
                         const std::function<llvm::Value *(int64_t)> &element);

  /// The index along value dimension k of register r's element (i32).
  llvm::Value *element_index(const Layout &layout, int64_t r, int k);
  /// True (i1) in threads that own the elements of `parent`'s registers
  /// rather than hold replicas of them.
  llvm::Value *owns_elements(const BlockedLayout &parent);

  // Per-op lowering (lower_*.cpp).
  llvm::Value *lower_scalar(const ir::Operation &op);
  Registers lower_block(const ir::Operation &op, const Layout &layout);
  llvm::Value *elementwise(const ir::Operation &op,
                           const std::vector<llvm::Value *> &operands);
  /// The GPU's own form of an element op (lower_math.cpp), or nullptr
  /// where backends/llvm's is used.
  llvm::Value *gpu_element_op(const ir::Operation &op,
                              const std::vector<llvm::Value *> &operands);
  /// An f32 division of a block by one divisor per thread
  /// (lower_divide.cpp), or nothing where that does not apply.
  std::optional<Registers> divide_by_one_divisor(const ir::Operation &op,
                                                 const Layout &layout);
  llvm::Value *creation_scalar(const ir::Operation &op);
  Registers creation_block(const ir::Operation &op, const Layout &layout);
  llvm::Value *load_scalar(const ir::Operation &op);
  Registers load_block(const ir::Operation &op, const Layout &layout);
  void store(const ir::Operation &op);
  void lower_reduce(const ir::Operation &op);
  /// Whether lowering the reduction `op` combines its partial results
  /// within warps alone (registers and shuffles, no shared memory).
  bool reduces_within_warps(const ir::Operation &op);
  void lower_scan(const ir::Operation &op);
  /// Reshape (moving elements), permute, join, split, cat
  /// (lower_shape.cpp).
  void lower_shape(const ir::Operation &op);
  void lower_dot(const ir::Operation &op);
  /// A dot on warpgroup MMAs (lower_wgmma.cpp).
  void lower_warpgroup_dot(const ir::Operation &op);
  void lower_for(const ir::Operation &op);
  /// The loop's plan when its loads are pipelined (pipeline_loads.h).
  const PipelinedLoop *pipelined_loop(const ir::Operation &for_op) const;
  void lower_if(const ir::Operation &op);
  /// A convert_layout of the GPU IR's explicit form (lower_convert.cpp).
  void lower_convert_layout(const ir::Operation &op);
  /// Lowers `op` once more, rebinding its results: a pipelined loop's
  /// address ops for a later iteration (loop_pipeline.h).
  void lower_again(const ir::Operation &op) { lower_op(op); }
  /// What `values` are bound to now (their scalars and registers), so
  /// that lowering ops again for another iteration can be undone.
  struct Bindings {
    std::vector<const ir::Value *> values; // restore() unbinds the others
    std::map<const ir::Value *, llvm::Value *> scalars;
    std::map<std::pair<const ir::Value *, int>, Registers> blocks;
  };
  Bindings bindings_of(const std::vector<const ir::Value *> &values) const;
  void restore(const Bindings &bindings);
  /// Lowers every op of `block` but its terminator, which it returns.
  const ir::Operation *lower_region(const ir::Block &block);
  /// The results of a reduction's combine region on (lhs..., rhs...).
  std::vector<llvm::Value *> combine(const ir::Block &region,
                                     const std::vector<llvm::Value *> &lhs,
                                     const std::vector<llvm::Value *> &rhs);
  /// Byte offsets in shared memory of `count` elements of each of
  /// `types`, one array after the other, each 8-byte aligned: where the
  /// warps of a reduction or a scan leave their operands' partials.
  std::vector<int64_t> stacked_arrays(const std::vector<llvm::Type *> &types,
                                      int64_t count) const;
  /// v from the lane whose id differs from this one's in `mask`'s bits.
  llvm::Value *shuffle_xor(llvm::Value *v, int mask);
  /// v from another lane of the warp (shfl.sync): lane ^ b (Xor), lane - b
  /// (Up), lane + b (Down) or lane b (Index); a lane whose source is
  /// outside the warp gets its own v.
  enum class Shuffle { Xor, Up, Down, Index };
  llvm::Value *shuffle(llvm::Value *v, Shuffle mode, llvm::Value *b);
  // Atomics (lower_atomic.cpp), print, assert and checked integer division
  // (lower_debug.cpp), faults (lower_fault.cpp).
  void lower_atomic(const ir::Operation &op);
  void lower_print(const ir::Operation &op);
  void lower_assert(const ir::Operation &op);
  /// Stops the program where an integer division or remainder by a value
  /// not known when compiling meets a zero divisor.
  void check_division(const ir::Operation &op);
  int add_fault_site(const ir::Operation &op, std::string message,
                     FaultSite::Form form);
  /// Stops the program when `failed` (i1) holds in any thread, reporting
  /// `site` and the smallest `lane` (i32) among the failing threads; with
  /// `uniform`, `failed` and `lane` are alike in every thread (scalars).
  void fail_if(llvm::Value *failed, llvm::Value *lane, int site, bool uniform);
  const std::vector<FaultSite> &fault_sites() const { return fault_sites_; }

  // Values and shared memory (lower_convert.cpp).
  void set_scalar(const ir::Value *v, llvm::Value *value) {
    scalars_[v] = value;
  }
  /// Binds v's registers in `home` and converts them to every other layout
  /// v is needed in.
  void define_block(const ir::Value *v, const Layout &home, Registers values);
  /// v's registers in `from` as `to` needs them: renumbered, shuffled
  /// between lanes, or through shared memory (conversion_path.h says which).
  Registers convert_layout(const ir::Value *v, const Layout &from,
                           const Registers &values, const Layout &to);
  /// Writes `values`, v held in `from`, to the kernel's shared buffer as
  /// `shared` places them (barriers before, where it was read since the
  /// last one, and after).
  void write_shared(const ir::Value *v, const SharedLayout &shared,
                    const Layout &from, const Registers &values);
  /// v's registers in `to`, read from the shared buffer, where
  /// write_shared put it as `shared` places it.
  Registers read_shared(const ir::Value *v, const SharedLayout &shared,
                        const Layout &to);
  /// How many consecutive registers of `layout` a write or read of `v`
  /// through `shared` moves as one vector: vector_run, shortened to stay
  /// within the stretches between pads and aligned in the buffer.
  int64_t shared_run(const ir::Value *v, const SharedLayout &shared,
                     const Layout &layout);
  /// The shared address of each register of v held in `layout`, as
  /// `shared` places it (padded row by row, or a swizzled tile).
  std::function<llvm::Value *(int64_t)>
  shared_value_addresses(const ir::Value *v, const SharedLayout &shared,
                         const Layout &layout);
  /// Whether a convert_layout reads `in_shared`, a value in shared memory,
  /// back into registers (a conversion's write), not a dot in place.
  bool read_into_registers(const ir::Value *in_shared);
  /// The shared address of register `r` of v held in a padded `shared`.
  llvm::Value *shared_value_address(const ir::Value *v,
                                    const SharedLayout &shared,
                                    const Layout &layout, int64_t r);
  /// A conversion within each warp, along `route`.
  Registers convert_within_warps(const WarpRoute &route,
                                 const Registers &values, const Layout &to);
  /// Address of element `index` (i32) of a `type` array starting `offset`
  /// bytes into the kernel's shared memory, reserving what it needs.
  /// Offsets count from the end of what pipelined loops keep
  /// (shared_reserved_bytes()).
  llvm::Value *shared_element(int64_t offset, int64_t count, llvm::Type *type,
                              llvm::Value *index);
  /// Bytes at the start of shared memory that the pipelined loop being
  /// lowered keeps its tiles in (lower_pipelined_loop.cpp), which no other
  /// user may touch; shared_element places the others after them.
  int64_t shared_reserved_bytes() const { return shared_reserved_; }
  void reserve_shared_bytes(int64_t bytes);
  /// Address of element `index` (i32) of `type` from the start of the
  /// kernel's shared memory, inside the reserved bytes.
  llvm::Value *reserved_shared_element(llvm::Type *type, llvm::Value *index);
  /// A value in a swizzled tile of shared memory, which a dot reads in
  /// place: written by a convert_layout (lower_shared_tile.cpp), or copied
  /// by a pipelined loop (its load is not lowered; the tile is the current
  /// iteration's stage).
  struct StagedOperand {
    /// i32: index of the tile's first element, in elements of its type,
    /// from the start of shared memory.
    llvm::Value *first_element = nullptr;
  };
  const StagedOperand *staged_operand(const ir::Value *v) const;
  void set_staged_operand(const ir::Value *v, StagedOperand staged) {
    staged_operands_[v] = staged;
  }
  void clear_staged_operand(const ir::Value *v) { staged_operands_.erase(v); }
  /// A prefetched load (pipeline_loads.h) whose elements the current
  /// iteration's stage holds from `first_element` (i32, in elements of its
  /// type from the start of shared memory): lowered as reads of them.
  void set_prefetched(const ir::Value *v, llvm::Value *first_element) {
    prefetched_[v] = first_element;
  }
  void clear_prefetched(const ir::Value *v) { prefetched_.erase(v); }
  void barrier();
  /// The barrier alone, leaving what barrier() tracks as it is (a path
  /// that leaves the kernel).
  void emit_barrier();
  /// The hardware barriers of a kernel with a producer warpgroup: the
  /// consumers' own (barrier()), and the one where the producer's first
  /// warp meets them before its loop.
  static constexpr int kConsumersBarrier = 1;
  static constexpr int kHandOverBarrier = 2;
  /// Call before writing shared memory, and after writing it (before the
  /// reads).
  void before_shared_write();
  void after_shared_write();
  // Registers written to shared memory (lower_convert.cpp).
  /// The index along value dimension `dim` of the thread's first element
  /// (i32; 0 where the value has size 1 there).
  llvm::Value *first_index(const Layout &layout, int dim);
  /// Register r's offset from the thread's first element along value
  /// dimension `dim`.
  int64_t register_offset_along(const Layout &layout, int64_t r, int dim) const;
  /// Stores the canonical registers of `values` (held in `layout`) as
  /// vectors of `run` registers of `type`, each run at address_of(its
  /// first register); `stored` makes a register's value what is stored.
  void store_register_runs(
      const Layout &layout, const Registers &values, int64_t run,
      llvm::Type *type, int64_t element_bytes,
      const std::function<llvm::Value *(int64_t)> &address_of,
      const std::function<llvm::Value *(llvm::Value *)> &stored);
  // Swizzled tiles (lower_shared_tile.cpp).
  /// Writes the operand of `convert` into a tile of `shared` (swizzled)
  /// after the bytes kept so far, which it keeps until its last reader.
  void write_tile(const ir::Operation &convert, const SharedLayout &shared);
  /// Where a tile of `bytes` (and what follows it) starts at `alignment`
  /// after the bytes kept so far; throws SharedMemoryExhausted, naming
  /// `what` and giving `advice`, where the CTA's shared memory ends first.
  int64_t tile_start(int64_t alignment, int64_t bytes, const std::string &what,
                     const std::string &advice);
  /// Stores `values`, held in `from`, into `tile`, whose rows run along
  /// the value's dimension `row_dim`; `element_at` gives the address of
  /// the tile's element at an index.
  void
  store_tile(const Layout &from, const Registers &values,
             const SharedTile &tile, int row_dim, ir::Scalar element,
             const std::function<llvm::Value *(llvm::Value *)> &element_at);
  /// Call before reading a tile: the barrier after tile writes, where one
  /// is due (preceded by fence_async_proxy in kernels of warpgroup MMAs).
  void fence_tile_writes();
  /// Orders this thread's writes of shared memory before the reads of the
  /// async proxy (warpgroup MMAs) that follow the next barrier.
  void fence_async_proxy();
  // Waits for warpgroup MMAs (lower_wgmma_waits.cpp).
  /// Waits until at most `pending` groups of this warpgroup's MMAs are in
  /// flight (wgmma.wait_group), the newest `untracked` of them committed
  /// by a dot that keeps its own group in flight (a pipelined loop's
  /// accumulator); the results of the groups it completes are read after
  /// it from here on.
  void wait_for_warpgroup_mmas(int pending, int untracked = 0);
  /// Reads `operands` (registers MMAs in flight read) right here, after
  /// the value computed last, so that ptxas keeps them until the wait
  /// that follows.
  void keep_alive_until_here(const std::vector<llvm::Value *> &operands);
  /// Leaves the group of MMAs just committed for `result` (in `home`, its
  /// only layout, as `values`) in flight until an op reads the result or
  /// might disturb the MMAs (wait_for_mmas_before). `operands`: the
  /// registers its MMAs read, which are read again before its wait, so
  /// that nothing takes them while the MMAs may still read them.
  void leave_mma_group_in_flight(const ir::Value *result, const Layout &home,
                                 Registers values,
                                 std::vector<llvm::Value *> operands);
  /// Before `op` is lowered: waits for the groups in flight whose results
  /// it reads (and those committed before them), or for every group where
  /// lowering `op` might write shared memory, synchronize, branch or leave
  /// its block.
  void wait_for_mmas_before(const ir::Operation &op);
  /// Whether nothing observes the sign of a zero in `v` (an f32 maximum,
  /// minimum or dot into +0: unobserved_zero_signs.h).
  bool zero_sign_unobserved(const ir::Value *v) const {
    return zero_signs_unobserved_.count(v) != 0;
  }
  /// An instruction of PTX without operands that orders memory accesses
  /// (a fence, a wait): inline, with side effects and a memory clobber.
  void ordering_ptx(const std::string &text);
  /// Whether the kernel has dots on warpgroup MMAs: its tiles then start
  /// at their swizzle pattern's multiple, the buffer at 1024 bytes.
  bool warpgroup_mma() const { return warpgroup_mma_; }
  /// Gives back the bytes of the tiles whose last reader `op` (of the
  /// tile's block) holds.
  void release_tiles_after(const ir::Operation &op);
  // Copies by the Tensor Memory Accelerator (lower_tma.cpp).
  /// The TMA copy of a descriptor_load marked tma (tma.h).
  const TmaCopy &tma_copy_of(const ir::Operation &load) const;
  /// What the host encodes for the entry's tensor-map parameters, in
  /// their order (one per descriptor_load marked tma, in program order).
  std::vector<cuda::TensorMapRequest> tensor_maps() const;
  /// The i32 address, in the shared window, of element `index` (i32) of
  /// `type` from the start of the kernel's shared memory.
  llvm::Value *shared_window_address(llvm::Type *type, llvm::Value *index);
  /// Orders what the CTA wrote before ahead of the async proxy's copies;
  /// thread 0 initializes `count` mbarriers of 8 bytes from `first` (an
  /// address in the shared window), each expecting one arrival, and fences
  /// the initialization for the async proxy; a barrier follows, after
  /// which every thread may wait on them.
  void init_mbarriers(llvm::Value *first, int count);
  /// Thread 0 invalidates them (after a barrier that every wait precedes).
  void invalidate_mbarriers(llvm::Value *first, int count);
  /// Where `issue` (i1) holds in thread 0: arrives on `barrier`, expecting
  /// `bytes` from the copies that follow.
  void expect_tma_bytes(llvm::Value *barrier, int64_t bytes,
                        llvm::Value *issue);
  /// Where `issue` (i1) holds in thread 0: copies `copy`'s tile, its
  /// offsets as the load's operands are bound now, into the tile whose
  /// first element is `first` (i32, elements from the start of shared
  /// memory), completing on `barrier`.
  void issue_tma_copy(const TmaCopy &copy, llvm::Value *first,
                      llvm::Value *barrier, llvm::Value *issue);
  /// Every thread waits until `barrier`'s phase of parity `parity` (i32)
  /// has completed.
  void wait_mbarrier(llvm::Value *barrier, llvm::Value *parity);
  /// Thread 0, as init_mbarriers, initializes `count` mbarriers from
  /// `first`, each expecting `arrivals` arrivals; no barrier follows.
  void start_mbarriers(llvm::Value *first, int count, int arrivals);
  /// Lane 0 of each warp arrives on `barrier` where `arrive` (i1) holds.
  void arrive_per_warp(llvm::Value *barrier, llvm::Value *arrive);
  // Warp specialization (warp_specialize.h,
  // lower_warp_specialized_loop.cpp).
  /// The loop whose copies a producer warpgroup issues (nullptr: none).
  const ir::Operation *specialized_loop() const { return specialized_loop_; }
  /// The block the producer warpgroup starts in, empty until the
  /// specialized loop's lowering fills it.
  llvm::BasicBlock *producer_entry() const { return producer_entry_; }
  /// The warp whose lane 0 issues TMA copies and mbarrier arrivals: 0,
  /// or the producer's first warp while its code is lowered.
  void set_issuing_warp(int warp) { issuing_warp_ = warp; }
  /// A barrier of `threads` threads on hardware barrier `id` (bar.sync).
  void named_barrier(int id, int threads);
  /// Whether `failed` (i1) holds in any thread of the kernel's warps (a
  /// barrier too: bar.red.or).
  llvm::Value *vote_any(llvm::Value *failed);
  /// Bytes of shared memory the kernel needs so far.
  int64_t shared_bytes() const { return shared_bytes_; }
  /// After lower(): the dynamic shared memory each launch must request
  /// (0 when the buffer is static or the kernel uses none).
  int64_t dynamic_shared_bytes() const { return dynamic_shared_bytes_; }
  /// The element's position in a row-major array of the value's shape.
  llvm::Value *linear_index(const Layout &layout, int64_t r);

  llvm::Value *lane = nullptr; // i32 thread id within the warp
  llvm::Value *warp = nullptr; // i32 warp id within the CTA

  const ir::Function &kernel;
  llvm::Module &module;
  llvm::LLVMContext &context;
  llvm::IRBuilder<> builder;
  ir::AxisInfoAnalysis axis_info;
  int num_warps;
  GpuArch arch;

private:
  void bind_arguments(llvm::Function *f);
  /// Replaces the placeholder with the kernel's shared buffer, static or
  /// dynamic by its final size (lower_convert.cpp).
  void define_shared_buffer();
  /// Notes that shared memory is used up to byte `end`; throws where that
  /// is more than the architecture allows a CTA.
  void claim_shared_bytes(int64_t end);
  /// Address of element `index` of a `count`-element `type` array
  /// starting `offset` bytes from the start of shared memory, claiming
  /// those bytes.
  llvm::Value *shared_address(int64_t offset, int64_t count, llvm::Type *type,
                              llvm::Value *index);
  void compute_thread_positions();
  /// For each value in a tile written by a convert_layout, the op of its
  /// block after which it is no longer read.
  void find_tile_releases();
  void lower_op(const ir::Operation &op);
  int layout_id(const Layout &layout);
  /// A descriptor_load copied by TMA outside a pipelined loop: into a tile
  /// kept until its last reader, waited for at once.
  void lower_tma_load(const ir::Operation &load);
  /// A descriptor_store copied by TMA: the value written to a swizzled
  /// tile of shared memory, which thread 0 copies out box by box.
  void lower_tma_store(const ir::Operation &store);
  /// f(shared address (i32), inner and row coordinates (i32)) for each box
  /// of `copy`'s tile, whose first element is `first`.
  void for_each_box(const TmaCopy &copy, llvm::Value *first,
                    const std::function<void(llvm::Value *, llvm::Value *,
                                             llvm::Value *)> &f);
  /// The generic address of `copy`'s tensor-map parameter (i64).
  /// TMA's 32-bit coordinate for a descriptor offset: an i32 as it is, an
  /// i64 clamped (cuda::TensorMapRequest::wide_offsets).
  llvm::Value *tma_coordinate(const ir::Value *offset);
  llvm::Value *tensor_map_address(const TmaCopy &copy);
  /// i32, non-zero in thread 0 (which issues the CTA's TMA copies) where
  /// `issue` (i1, where given) holds: the predicate of predicated().
  llvm::Value *issuing_thread(llvm::Value *issue = nullptr);
  void on_each_mbarrier(const std::string &text, llvm::Value *first, int count);
  /// Where the kernel has a warp-specialized loop: sends the producer
  /// warpgroup to producer_entry() and gives the consumers its registers.
  void split_producer_warps();
  const ir::Operation *specialized_loop_ = nullptr;
  llvm::BasicBlock *producer_entry_ = nullptr;
  int issuing_warp_ = 0;

  std::unique_ptr<LayoutAssignment> layouts_;
  std::map<const ir::Value *, llvm::Value *> scalars_;
  /// f16/bf16 -> f32 casts and f32 exps whose NaN bits nothing observes,
  /// which skip their NaN fix-up (nan_blind_uses.h).
  std::set<const ir::Value *> nan_bits_unobserved_;
  /// f32 -> f16/bf16 casts that give the hardware's NaN (nan_blind_uses.h).
  std::set<const ir::Value *> narrows_of_hardware_nans_;
  /// f32 maximum/minimum whose zero's sign nothing observes, which skip
  /// their signed-zero fix-up, and f32 dots into +0 that need not read it
  /// (unobserved_zero_signs.h).
  std::set<const ir::Value *> zero_signs_unobserved_;
  /// Loads in the body of a loop that streams (loads_in_streaming_loops).
  std::set<const ir::Operation *> in_streaming_loop_;

  std::vector<Layout> layout_ids_;
  std::map<std::pair<const ir::Value *, int>, Registers> blocks_;
  /// Groups of warpgroup MMAs committed and not yet waited for, oldest
  /// first: the dots' results, read only after the wait that completes
  /// them (lower_wgmma_waits.cpp).
  struct MmaGroupInFlight {
    const ir::Value *result;
    int home; // layout_id of its only layout
    /// Registers its MMAs read (A's fragments): kept alive until its wait.
    std::vector<llvm::Value *> operands;
  };
  std::vector<MmaGroupInFlight> mma_groups_in_flight_;
  /// The values of the GPU IR in shared memory (`#sharedN`): what was
  /// written, from which layout, so that a read after something else used
  /// the buffer can write it again.
  struct SharedValue {
    Layout from;
    Registers values;
  };
  std::map<const ir::Value *, SharedValue> shared_values_;
  /// The values in shared memory read back into registers (lazily).
  std::optional<std::set<const ir::Value *>> read_from_shared_;
  /// The shared value the buffer holds now (nullptr: none, or another
  /// user's data).
  const ir::Value *shared_holder_ = nullptr;
  // Per parent layout and dimension: the thread's first element (i32).
  std::vector<std::vector<llvm::Value *>> thread_offsets_;
  std::vector<llvm::Value *> owners_; // per parent layout (i1)
  // Barriers: stores not yet ordered before later accesses; shared memory
  // read since the last barrier (so a write must wait).
  bool stored_since_barrier_ = false;
  bool shared_read_since_barrier_ = false;
  llvm::GlobalVariable *shared_ = nullptr; // placeholder until the end
  int64_t shared_bytes_ = 0;
  int64_t shared_reserved_ = 0;
  int64_t dynamic_shared_bytes_ = 0;
  std::map<const ir::Operation *, PipelinedLoop> pipelined_loops_;
  std::map<const ir::Value *, StagedOperand> staged_operands_;
  std::map<const ir::Value *, llvm::Value *> prefetched_;
  /// The load `op` as reads of its stage's elements, from `first`.
  void lower_prefetched(const ir::Operation &op, llvm::Value *first);
  /// Tiles written by convert_layout ops: by the op after which they are
  /// read no more; those holding their bytes (each with the bytes kept
  /// before it), the last written last; those released but not yet on top.
  std::map<const ir::Operation *, std::vector<const ir::Value *>>
      tiles_released_after_;
  struct LiveTile {
    const ir::Value *value = nullptr;
    int64_t reserved_before = 0;
  };
  std::vector<LiveTile> live_tiles_;
  std::set<const ir::Value *> released_;
  /// Tiles written since the last barrier.
  bool tiles_unfenced_ = false;
  bool warpgroup_mma_ = false;
  std::vector<FaultSite> fault_sites_;
  /// The kernel's TMA copies, by load, in the order of their tensor-map
  /// parameters, and those parameters (the entry's, after the user's).
  std::vector<TmaCopy> tma_copies_;
  std::map<const ir::Operation *, size_t> tma_index_;
  std::vector<llvm::Value *> tensor_map_parameters_;

public:
  std::pair<bool, bool> barrier_state() const {
    return {stored_since_barrier_, shared_read_since_barrier_};
  }
  void set_barrier_state(std::pair<bool, bool> s) {
    stored_since_barrier_ = s.first;
    shared_read_since_barrier_ = s.second;
  }
};

/// The registers of the operands a reduction or a scan combines
/// together, [operand][register]: the values it combines at register r.
struct CombinedRegisters {
  std::vector<KernelLowering::Registers> of;

  std::vector<llvm::Value *> at(int64_t r) const {
    std::vector<llvm::Value *> values;
    for (const KernelLowering::Registers &operand : of)
      values.push_back(operand[r]);
    return values;
  }
  void set(int64_t r, const std::vector<llvm::Value *> &values) {
    for (size_t i = 0; i < of.size(); ++i)
      of[i][r] = values[i];
  }
  std::vector<llvm::Type *> types(int64_t r) const {
    std::vector<llvm::Type *> out;
    for (llvm::Value *v : at(r))
      out.push_back(v->getType());
    return out;
  }
};

} // namespace blocc::nvptx
