// Lowering of one block-IR kernel specialization to one LLVM function that
// runs one program instance (the ABI is runtime/cpu/program_abi.h).
//
// How block values become vector code
// -----------------------------------
// Scalars (rank 0) are LLVM scalars, computed where they are defined.
// A block value is never one LLVM vector (a 128x128 block would be a
// 16384-lane vector: compile time and code size explode). Instead each
// block value is either
//  - materialized: its elements in a slot of the program's scratch memory,
//    in storage form (backends/llvm/llvm_types.h); or
//  - lazy: not computed yet. Its defining op is evaluated on demand, inside
//    the loop of whatever consumes it, on vectors of VL lanes.
// A consumer that needs all elements (a store, a reduction, a
// materialization) emits a *chunk loop* over the flat index of its own
// shape, VL lanes per iteration, and evaluates its operands' lazy trees on
// those lanes: a chain of elementwise ops, broadcasts, index arithmetic and
// loads fuses into that one loop.
//
// The lanes a vector holds are described by `Lanes`: a contiguous run of
// flat indices, one index repeated (a broadcast along the lanes), or an
// arbitrary vector of indices. Broadcasts, expand_dims, reshape and the
// permutations map the lanes of their result to lanes of their operand,
// staying contiguous or uniform where the shapes allow (which keeps loads
// plain vector loads) and falling back to explicit indices elsewhere.
//
// When a lazy value is computed eagerly instead (kernel_lowering.cpp,
// `should_materialize`): when it holds expensive work (loads, math,
// divisions) and would otherwise be recomputed (several consumers, a
// broadcast consumer that reads each element many times, a consumer in a
// loop body), when a consumer needs its elements in memory (dot, scan,
// shape permutations, atomics, print), and when it reads memory and a later
// op writes memory or runs regions while it is still needed (so that every
// load sees memory as of its own place in the program; see liveness.h).
// Integer division and remainder are computed where they stand, so that a
// division by zero is reported exactly where the interpreter reports it.
//
// Concerns live in separate files, each implementing part of this class:
// kernel_lowering.cpp (the walk over ops, values, materialization policy),
// chunk_loop.cpp (loops, lanes, reading and writing slots), lower_*.cpp
// (one group of ops each), vector_width.cpp (VL).
#pragma once

#include "backends/cpu/host_target.h"
#include "backends/cpu/kernel_info.h"
#include "backends/cpu/liveness.h"
#include "ir/axis_info.h"
#include "ir/function.h"

#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

namespace blocc::cpu {

/// Which flat indices of a block the lanes of one vector hold.
struct Lanes {
  enum class Kind {
    Contiguous, // base, base + 1, ..., base + VL - 1
    Uniform,    // base in every lane
    General,    // index[lane]
  };
  Kind kind = Kind::Contiguous;
  llvm::Value *base = nullptr;  // i32 (Contiguous, Uniform)
  llvm::Value *index = nullptr; // <VL x i32> (General)

  static Lanes contiguous(llvm::Value *base) {
    return {Kind::Contiguous, base, nullptr};
  }
  static Lanes uniform(llvm::Value *base) {
    return {Kind::Uniform, base, nullptr};
  }
  static Lanes general(llvm::Value *index) {
    return {Kind::General, nullptr, index};
  }
};

/// Integer div or rem: the ops that may fault on a zero divisor.
bool is_integer_division(const ir::Operation &op);

/// The state of one iteration of a chunk loop: its vector width and the
/// vectors already computed in it (so that a value several consumers share
/// is evaluated once per chunk).
struct Chunk {
  int vl = 1;
  std::map<std::tuple<const ir::Value *, int, llvm::Value *, llvm::Value *>,
           llvm::Value *>
      memo;
};

class KernelLowering {
public:
  KernelLowering(const ir::Function &kernel, llvm::Module &module,
                 const HostTarget &target, KernelInfo &info);

  /// Builds the kernel function `symbol` in the module; throws
  /// blocc::Error naming the op for anything the backend cannot lower.
  llvm::Function *lower(const std::string &symbol);

  // ---- Everything below is shared by the lower_*.cpp files. -------------

  /// How a block value is held (see the file comment).
  struct BlockState {
    llvm::Value *slot = nullptr; // materialized: elements in storage form
    bool reads_memory = false;   // lazy, and its tree holds a load
    bool expensive = false;      // lazy, and its tree holds costly work
  };

  // Types.
  llvm::Type *storage_type(ir::Scalar s);
  llvm::Type *register_type(ir::Scalar s);
  llvm::Type *vector_of(llvm::Type *element, int vl);

  // Values.
  llvm::Value *scalar(const ir::Value *v);
  void set_scalar(const ir::Value *v, llvm::Value *x);
  bool is_materialized(const ir::Value *v) const;
  BlockState &state(const ir::Value *v);
  void set_materialized(const ir::Value *v, llvm::Value *slot);
  void set_lazy(const ir::Value *v, bool reads_memory, bool expensive);
  /// Marks op's results lazy, reading memory / expensive when `op` is or
  /// any lazy operand is.
  void set_lazy_from_operands(const ir::Operation &op, bool reads_memory,
                              bool expensive);
  /// Materializes op's results where the policy says so.
  void define_block_result(const ir::Operation &op);

  /// v's elements on `lanes` of the current chunk, in register form.
  llvm::Value *evaluate(Chunk &chunk, const ir::Value *v, const Lanes &lanes);
  /// The address of v's elements in storage form: its slot, or (for a lazy
  /// value) a fresh slot it is evaluated into. Records the slot as v's only
  /// when v is defined in the block being lowered (a slot filled inside a
  /// region must not be trusted outside it).
  llvm::Value *materialized_slot(const ir::Value *v);
  /// Computes v into its own slot now (v must be defined in the current
  /// block or be lazy and about to be materialized where it stands).
  void materialize(const ir::Value *v);
  /// Evaluates v into `slot` (a fresh one or a region result).
  void evaluate_into(const ir::Value *v, llvm::Value *slot);

  // Chunk loops and slots (chunk_loop.cpp).
  /// A new slot of `bytes` in scratch (64-byte aligned).
  llvm::Value *allocate_slot(int64_t bytes);
  llvm::Value *allocate_slot_for(const ir::Type &type);
  /// Emits `for (base = 0; base < elements; base += vl) body(base)` (no
  /// loop when one chunk covers everything); base is an i32.
  void chunk_loop(int64_t elements, int vl,
                  const std::function<void(llvm::Value *base)> &body);
  /// A counted scalar loop `for (i = 0; i < count; ++i)`, i of type i64
  /// (count an i64 value).
  void counted_loop(llvm::Value *count,
                    const std::function<void(llvm::Value *i)> &body);
  llvm::Value *read_slot(llvm::Value *slot, ir::Scalar element,
                         const Lanes &lanes, int vl);
  void write_slot(llvm::Value *slot, ir::Scalar element, llvm::Value *base,
                  llvm::Value *vector);
  /// A stack variable in the entry block, for values that loops carry
  /// (LLVM promotes them to registers).
  llvm::AllocaInst *entry_variable(llvm::Type *type);
  /// lanes as explicit indices (<vl x i32>).
  llvm::Value *lane_indices(const Lanes &lanes, int vl);
  /// i32 vector <0, 1, ..., vl-1>.
  llvm::Value *iota(int vl);
  llvm::Value *splat(int vl, llvm::Value *scalar);
  llvm::Value *i32(int64_t v) {
    return builder.getInt32(static_cast<int32_t>(v));
  }
  llvm::Value *i64(int64_t v) { return builder.getInt64(v); }

  /// The lanes of `from`-shaped operand that the lanes of a `to`-shaped
  /// broadcast result read.
  Lanes broadcast_lanes(const Lanes &lanes, int vl,
                        const std::vector<int64_t> &to,
                        const std::vector<int64_t> &from);

  // Vector width (vector_width.cpp).
  /// VL for a loop over values of `type` (a block type).
  int vector_width(const ir::Type &type) const;

  // Faults (kernel_lowering.cpp).
  /// If `failed` (i1) holds, calls the fault hook for site `site` with
  /// `lane` (i64, or -1) and returns 1 from the kernel.
  void fail_if(llvm::Value *failed, int site,
               const std::function<llvm::Value *()> &lane);
  int add_fault_site(const ir::Operation &op, std::string message,
                     std::vector<int64_t> shape,
                     FaultSite::Form form = FaultSite::Form::LaneFirst);
  /// For a vector of i1 with some lane set: the first such lane (i64).
  llvm::Value *first_set_lane(llvm::Value *mask, int vl);

  [[noreturn]] void unsupported(const ir::Operation &op,
                                const std::string &why) const;

  // Op groups (lower_*.cpp). Each lowers `op` where it stands.
  void lower_op(const ir::Operation &op);
  void lower_block(const ir::Block &block);
  llvm::Value *elementwise_vector(Chunk &chunk, const ir::Operation &op,
                                  const Lanes &lanes);
  llvm::Value *apply_elementwise(const ir::Operation &op,
                                 const std::vector<llvm::Value *> &operands);
  void lower_scalar_elementwise(const ir::Operation &op);
  /// Stops the program when a lane of `divisor` is zero (only lanes set in
  /// `active`, when given). The failing lane is `base` + its lane, or 0
  /// without a base (a scalar op of a combine region, run on vectors).
  void check_divisors(const ir::Operation &op, llvm::Value *divisor,
                      llvm::Value *base, int vl, llvm::Value *active = nullptr);
  llvm::Value *constant_value(const ir::Operation &op);

  llvm::Value *load_vector(Chunk &chunk, const ir::Operation &op,
                           const Lanes &lanes);
  /// The address of the first of contiguous `lanes` of block `pointer`
  /// (masked_access.cpp).
  llvm::Value *first_lane_address(Chunk &chunk, const ir::Value *pointer,
                                  const Lanes &lanes);
  void lower_store(const ir::Operation &op);
  void lower_scalar_load(const ir::Operation &op);
  void lower_scalar_store(const ir::Operation &op);
  void lower_atomic(const ir::Operation &op);
  /// v is a lazy block whose tree holds a load.
  bool lazily_reads_memory(const ir::Value *v);

  void lower_for(const ir::Operation &op);
  void lower_if(const ir::Operation &op);

  void lower_reduce(const ir::Operation &op);
  /// Whether v is the operand of the reduce right after v's definition,
  /// along the innermost axis: then that reduce writes v's slot in the
  /// loop that folds it, and v is not materialized before.
  bool materialized_by_next_reduce(const ir::Value *v) const;
  void lower_scan(const ir::Operation &op);
  /// Runs the combine region of reduce/scan `op` on register-form values:
  /// scalars, or vectors of independent combinations (lower_combine.cpp).
  std::vector<llvm::Value *> combine(const ir::Operation &op,
                                     const std::vector<llvm::Value *> &lhs,
                                     const std::vector<llvm::Value *> &rhs);
  using CombineValues = std::unordered_map<const ir::Value *, llvm::Value *>;
  /// `block` of a combine region on vectors of VL combinations, `reached`
  /// (<VL x i1>, or null for all) the lanes that run it; returns what it
  /// yields.
  std::vector<llvm::Value *> combine_vectors(const ir::Block &block,
                                             CombineValues &values,
                                             llvm::Value *reached, int vl);
  /// A combine region on one combination, through lower_block.
  std::vector<llvm::Value *>
  combine_scalars(const ir::Block &region,
                  const std::vector<llvm::Value *> &arguments);
  /// A combine region on vectors, one lane at a time (combine_scalars in a
  /// loop over the lanes).
  std::vector<llvm::Value *>
  combine_lane_by_lane(const ir::Block &region,
                       const std::vector<llvm::Value *> &arguments, int vl);
  /// The elements of operand `k` of reduce/scan `op` on `lanes`.
  std::vector<llvm::Value *> evaluate_all(Chunk &chunk, const ir::Operation &op,
                                          const Lanes &lanes);

  void lower_dot(const ir::Operation &op);

  /// splat .. cat where they stand (lower_shape.cpp).
  void lower_shape_op(const ir::Operation &op);
  /// Element `index` of v (a block or a scalar), as a scalar.
  llvm::Value *element_of(const ir::Value *v, int64_t index);
  /// A result of permute, join, split or cat on `lanes`, read from its
  /// operands' slots.
  llvm::Value *remap_vector(Chunk &chunk, const ir::Value *result,
                            const Lanes &lanes);

  void lower_print(const ir::Operation &op);
  void lower_assert(const ir::Operation &op);

  // Checked mode (lower_checks.cpp), emitted only when info.check_bounds:
  // kernels compiled without checks are exactly as before.
  /// Loads every pointer argument's bounds from the program state.
  void load_argument_bounds();
  /// The number of load/store/atomic `op`'s AccessSite (one per op).
  int access_site(const ir::Operation &op);
  /// Checks every active lane of one chunk of access `site` through
  /// `pointer` on `lanes` (`mask` <vl x i1> or null) and stops the program
  /// with a report before memory is touched. `contiguous`: lane k is at
  /// the first lane's address + k elements, so that one compare (or the
  /// first and last active lanes) decide.
  void check_chunk(int site, Chunk &chunk, const ir::Value *pointer,
                   llvm::Value *mask, const Lanes &lanes, bool contiguous);
  /// i1: every lane of rank-1 access `op`, masked or not, lies in its
  /// buffer; for accesses whose lanes axis info proves consecutive over the
  /// whole block and whose addresses read no memory (else null). Chunks
  /// need no check then.
  llvm::Value *block_in_bounds(const ir::Operation &op);
  /// Emits `emit()` where it runs only when `skip` (i1; null: never) is
  /// false.
  void unless(llvm::Value *skip, const std::function<void()> &emit);
  /// The same for one element at `address` (a ptr), lane `lane` (i64) of
  /// the access, when `active` (i1, or null for always).
  void check_lane(int site, llvm::Value *address, llvm::Value *active,
                  llvm::Value *lane);
  /// Race detection: hands the active lanes of one chunk of store `site`
  /// (`data` in storage form) to the launch's shadow map and stops the
  /// program when another program stored a different value there.
  void record_stores(int site, llvm::Value *addresses, llvm::Value *data,
                     llvm::Value *mask, const Lanes &lanes, int vl);

  // ---- State. -----------------------------------------------------------
  const ir::Function &kernel;
  llvm::Module &module;
  llvm::LLVMContext &context;
  llvm::IRBuilder<> builder;
  const HostTarget &target;
  KernelInfo &info;
  ir::AxisInfoAnalysis axis_info;
  Liveness liveness;

  llvm::Function *function = nullptr;
  llvm::Value *args = nullptr;    // const uint64_t *
  llvm::Value *program = nullptr; // ProgramState *
  llvm::Value *scratch = nullptr; // void *
  llvm::BasicBlock *fail_block = nullptr;
  int64_t scratch_used = 0;
  /// The operand slots of each permute, join, split and cat, filled where
  /// the op stands.
  std::unordered_map<const ir::Operation *, std::vector<llvm::Value *>>
      remap_sources;

  /// The block being lowered (materializations record slots only for
  /// values defined there).
  const ir::Block *current_block = nullptr;
  /// Position (Liveness numbering) of the op being lowered.
  int current_position = 0;

  /// Checked kernels: each argument's buffer bounds, loaded in the entry
  /// block (null for non-pointer arguments).
  struct ArgumentBounds {
    llvm::Value *begin = nullptr; // i64
    llvm::Value *size = nullptr;  // i64
  };
  std::vector<ArgumentBounds> argument_bounds;
  std::unordered_map<const ir::Operation *, int> access_sites;
  /// Block loads: block_in_bounds where they are defined.
  std::unordered_map<const ir::Operation *, llvm::Value *> loads_in_bounds;
  /// Set while a store's loop evaluates the trees its check loop already
  /// checked: their loads need no second check when their addresses and
  /// masks read no memory (the same lanes give the same addresses).
  bool loads_prechecked = false;

  /// Whether a lazy value is worth materializing where it is defined
  /// (see the file comment).
  bool should_materialize(const ir::Value *v) const;

private:
  void lower_arguments();
  /// Materializes lazy values that read memory and are still needed after
  /// the current op (before it writes memory or runs regions).
  void flush_pending_loads();

  std::unordered_map<const ir::Value *, llvm::Value *> scalars_;
  std::unordered_map<const ir::Value *, BlockState> blocks_;
  std::vector<const ir::Value *> pending_loads_;
};

} // namespace blocc::cpu
