// A dot on Hopper's warpgroup MMA (wgmma.mma_async, sm_90a; the GPU IR's
// engine "wgmma"): each warpgroup of four warps multiplies the 64 rows of
// A it holds in the accumulator by all of B, reading both from their
// tiles in shared memory through matrix descriptors, without loading a
// fragment into registers (mma_layouts.h: wgmma_fragments_layout,
// WgmmaOperand). The later link of a chain (attention's P) takes A from
// the registers it was computed in instead (mma_a_in_registers): four
// words of its warp's m16n8k16 fragment per MMA, never in shared memory.
//
// The accumulator is held as wgmma_fragments_layout says: a warp's 16
// rows of each pass of 16 * num_warps rows, 8 columns a fragment. For
// pass t, warpgroup g issues MMAs on rows t * 16 * num_warps + 64 g of A,
// one per step of 32 bytes along K, into the registers of that pass in
// the instruction's order: per 8 columns j, the fragment's c0..c3 (the
// second column of a pair, then the row 8 below) as d[4 j] .. d[4 j + 3].
//
// The MMAs run asynchronously in the tensor cores: wgmma.fence orders the
// accumulator's registers (written by ordinary instructions before) ahead
// of the first MMA, the MMAs are committed as one group, and the group is
// waited for before the result is first read (lower_wgmma_waits.cpp); a
// pipelined loop's accumulator waits only for the previous iteration's
// group, its own staying in flight (loop_pipeline.h). The tiles were written
// through the generic proxy (cp.async or stores); their writers fenced them for
// the async proxy before the barrier that precedes the MMAs
// (fence_async_proxy: the pipelined loop's stage wait, fence_tile_writes).
#include "backends/nvptx/a_fragment_registers.h"
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/kernel_lowering.h"
#include "backends/nvptx/mma_layouts.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <llvm/IR/InlineAsm.h>

namespace blocc::nvptx {

namespace {

using ir::Scalar;

class WarpgroupDot {
public:
  WarpgroupDot(KernelLowering &k, const ir::Operation &op)
      : k_(k), b_(k.builder), op_(op), home_(*k.layouts().home(op.result())),
        parent_(k.parent(home_)), mma_(*mma_instruction(op, k.arch)),
        a_registers_(k, op) {
    const ir::Type &c = op.result()->type();
    n_ = c.dim(1);
    depth_ = op.operand(0)->type().dim(1);
    passes_ = c.dim(0) / parent_.tile(0);
  }

  void lower() {
    for (int side = a_registers_ ? 1 : 0; side < 2; ++side)
      find_operand(side);
    k_.fence_tile_writes();
    const bool from_zero = reads_no_accumulator();
    std::vector<std::vector<llvm::Value *>> acc =
        initial_accumulator(from_zero);
    // The warpgroup's 64 rows of A in each pass, from its first warp.
    llvm::Value *group_rows_bytes =
        a_registers_ ? nullptr
                     : b_.CreateMul(b_.CreateLShr(k_.warp, 2),
                                    b_.getInt32(static_cast<uint32_t>(
                                        operand_[0].start_bytes(64, 0))));
    const int64_t steps = depth_ / mma_.k;
    std::vector<std::array<llvm::Value *, 4>> a_fragments = fragments_of_a();
    // Ordinary instructions wrote the accumulator, and A where it is in
    // registers: the fence orders them ahead of the MMAs that read them.
    k_.ordering_ptx("wgmma.fence.sync.aligned;");
    for (int64_t step = 0; step < steps; ++step) {
      const int64_t k = step * mma_.k;
      llvm::Value *b = descriptor(1, nullptr, operand_[1].start_bytes(0, k));
      for (int64_t pass = 0; pass < passes_; ++pass) {
        if (a_registers_) {
          const std::array<llvm::Value *, 4> &a =
              a_fragments[size_t(step * passes_ + pass)];
          mma(acc[size_t(pass)], {a.begin(), a.end()}, b,
              !from_zero || step > 0);
          continue;
        }
        llvm::Value *a =
            descriptor(0, group_rows_bytes,
                       operand_[0].start_bytes(pass * parent_.tile(0), k));
        mma(acc[size_t(pass)], {a}, b, !from_zero || step > 0);
      }
    }
    k_.ordering_ptx("wgmma.commit_group.sync.aligned;");
    std::vector<llvm::Value *> by_register(parent_.num_registers());
    for (int64_t r = 0; r < parent_.num_registers(); ++r) {
      auto [pass, slot] = slot_of(r);
      by_register[r] = acc[size_t(pass)][size_t(slot)];
    }
    KernelLowering::Registers result =
        k_.per_register(home_, [&](int64_t r) { return by_register[r]; });
    // The loop's accumulator stays in flight into the next iteration
    // (loop_pipeline.h), waiting only for the groups before it; any other
    // result is waited for where it is first read (lower_wgmma_waits.cpp),
    // unless it takes other layouts, converted from it here.
    if (in_flight()) {
      k_.wait_for_warpgroup_mmas(1, /*untracked=*/1);
    } else if (k_.layouts().layouts_of(op_.result()).size() == 1) {
      // A carried by the loop (attention's P of the previous block, the
      // softmax of the next running meanwhile), or its rounding: its
      // registers are kept until the wait (keep_alive_until_here). A
      // computed in the iteration needs no such care: ptxas was seen to
      // keep it.
      std::vector<llvm::Value *> read;
      if (a_carried_by_loop())
        for (const std::array<llvm::Value *, 4> &fragment : a_fragments)
          read.insert(read.end(), fragment.begin(), fragment.end());
      k_.leave_mma_group_in_flight(op_.result(), home_, std::move(result),
                                   std::move(read));
      return;
    } else {
      k_.wait_for_warpgroup_mmas(0);
    }
    k_.define_block(op_.result(), home_, std::move(result));
  }

private:
  /// Whether the dot's MMAs need not read its accumulator: +0 whose zero's
  /// sign nothing observes, or an integer 0. The first step's MMAs then do
  /// not add to it (scale-d = 0), and no register is set to zero for them.
  bool reads_no_accumulator() const {
    return is_positive_zero(op_.operand(2)) &&
           (mma_.accumulator != Scalar::F32 ||
            k_.zero_sign_unobserved(op_.result()));
  }

  /// The accumulator's registers by pass and place among the MMA's
  /// registers: the dot's third operand's, or undefined `from_zero`.
  std::vector<std::vector<llvm::Value *>> initial_accumulator(bool from_zero) {
    std::vector<std::vector<llvm::Value *>> acc(
        static_cast<size_t>(passes_),
        std::vector<llvm::Value *>(static_cast<size_t>(n_ / 2)));
    llvm::Type *type =
        mma_.accumulator == Scalar::F32 ? b_.getFloatTy() : b_.getInt32Ty();
    const KernelLowering::Registers *init =
        from_zero ? nullptr : &k_.registers(op_.operand(2), home_);
    for (int64_t r = 0; r < parent_.num_registers(); ++r) {
      auto [pass, slot] = slot_of(r);
      acc[size_t(pass)][size_t(slot)] =
          init ? (*init)[r] : llvm::UndefValue::get(type);
    }
    return acc;
  }

  /// A's fragments where A is in registers (none otherwise), by step of K
  /// then pass of rows, all made before the MMAs' fence: an instruction
  /// writing a register that an MMA after the fence reads makes ptxas
  /// fence again and wait for each MMA before the next (serialized MMAs,
  /// one at a time on the tensor cores).
  std::vector<std::array<llvm::Value *, 4>> fragments_of_a() {
    std::vector<std::array<llvm::Value *, 4>> fragments;
    for (int64_t step = 0; a_registers_ && step < depth_ / mma_.k; ++step)
      for (int64_t pass = 0; pass < passes_; ++pass)
        // The warp's rows g and g + 8 of the pass are 8 apart.
        fragments.push_back(
            a_registers_.fragment(pass * parent_.tile(0), 8, 16 * step));
    return fragments;
  }

  /// The operand's tile and the address of its first byte (i32, in the
  /// shared window), read by descriptors.
  void find_operand(int side) {
    const ir::Value *x = op_.operand(static_cast<size_t>(side));
    const SharedLayout *shared = k_.layouts().shared_layout(x);
    const int64_t bytes = llvm_backend::storage_bytes(x->type().element());
    std::optional<FragmentTile> tile =
        shared ? fragment_tile_of(*shared, side, bytes, /*warpgroups=*/true)
               : std::nullopt;
    const KernelLowering::StagedOperand *staged = k_.staged_operand(x);
    if (!tile || !staged)
      throw Error("internal: " + op_.describe() + ": operand " +
                  std::to_string(side) +
                  " is in no tile of shared memory that warpgroup MMAs read "
                  "(gpu-stage-dot-operands puts it there)");
    operand_[side] = wgmma_operand(*tile);
    llvm::Value *first = k_.reserved_shared_element(
        k_.storage_type(x->type().element()), staged->first_element);
    llvm::Value *address = b_.CreateTrunc(
        b_.CreatePtrToInt(first, b_.getInt64Ty()), b_.getInt32Ty());
    // The fields that do not move: LBO, SBO and the swizzling mode.
    const WgmmaOperand &o = operand_[side];
    const uint64_t fixed = (uint64_t(o.leading_bytes >> 4) << 16) |
                           (uint64_t(o.stride_bytes >> 4) << 32) |
                           (uint64_t(o.swizzle_mode) << 62);
    base_[side] =
        b_.CreateOr(b_.CreateZExt(b_.CreateLShr(address, 4), b_.getInt64Ty()),
                    b_.getInt64(fixed));
  }

  /// The descriptor of operand `side` at `bytes` (plus `extra`, i32, where
  /// given) from its tile's start: the start address field moves by their
  /// 16-byte units (a tile ends below 256 KB: the 14-bit field does not
  /// carry).
  llvm::Value *descriptor(int side, llvm::Value *extra, int64_t bytes) {
    llvm::Value *units = b_.getInt64(static_cast<uint64_t>(bytes >> 4));
    if (extra)
      units = b_.CreateAdd(
          units, b_.CreateZExt(b_.CreateLShr(extra, 4), b_.getInt64Ty()));
    return b_.CreateAdd(base_[side], units);
  }

  /// Whether A is a value the loop carries, or its rounding.
  bool a_carried_by_loop() const {
    const ir::Value *a = op_.operand(0);
    while (a->defining_op() && a->defining_op()->code() == ir::OpCode::Cast)
      a = a->defining_op()->operand(0);
    return a->is_block_argument();
  }

  bool in_flight() const {
    const ir::Operation *loop = op_.parent_op();
    const PipelinedLoop *plan = loop ? k_.pipelined_loop(*loop) : nullptr;
    return plan && plan->mma_in_flight == &op_;
  }

  /// Register r's pass of rows and its place among the MMA's registers.
  std::pair<int64_t, int64_t> slot_of(int64_t r) const {
    std::vector<int64_t> offset = parent_.register_offset(r);
    const int64_t pass = offset[0] / parent_.tile(0);
    const int64_t lower_half = (offset[0] % parent_.tile(0)) / 8;
    const int64_t column = offset[1] / 8, second = offset[1] % 8;
    return {pass, 4 * column + 2 * lower_half + second};
  }

  /// acc += A x B (acc = A x B unless `accumulate`) for one warpgroup MMA
  /// of 64 x N x K: f32 and s32 accumulators, one register an element. `a`
  /// is A's descriptor, or the four words of its fragment where A is in
  /// registers.
  void mma(std::vector<llvm::Value *> &acc, const std::vector<llvm::Value *> &a,
           llvm::Value *b, bool accumulate) {
    const bool integer = mma_.accumulator == Scalar::I32;
    const bool a_in_registers = a.size() > 1;
    llvm::Type *i32 = b_.getInt32Ty();
    const size_t regs = acc.size();
    llvm::Type *reg_type = integer ? i32 : b_.getFloatTy();
    std::string d, constraints;
    for (size_t i = 0; i < regs; ++i) {
      d += (i ? ", $" : "$") + std::to_string(i);
      constraints += integer ? (i ? ",=r" : "=r") : (i ? ",=f" : "=f");
    }
    auto operand = [&](size_t i) { return "$" + std::to_string(regs + i); };
    std::string a_text;
    for (size_t i = 0; i < a.size(); ++i) {
      a_text += (i ? ", " : "") + operand(i);
      constraints += a_in_registers ? ",r" : ",l";
    }
    if (a_in_registers)
      a_text = "{" + a_text + "}";
    constraints += ",l,r";
    for (size_t i = 0; i < regs; ++i)
      constraints += "," + std::to_string(i);
    std::string text =
        "{\n.reg .pred p;\nsetp.ne.b32 p, " + operand(a.size() + 1) +
        ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n_) + "k" +
        std::to_string(mma_.k) + "." + (integer ? "s32" : "f32") + "." +
        mma_.a + "." + mma_.b + " {" + d + "}, " + a_text + ", " +
        operand(a.size()) + ", p";
    if (!integer)
      text += ", 1, 1"; // no negation of A or B
    // 16-bit operands in shared memory may be MN-major; A in registers
    // has no such choice.
    if (mma_.input_bytes == 2 && !a_in_registers)
      text += std::string(", ") + (operand_[0].mn_major ? "1" : "0");
    if (mma_.input_bytes == 2)
      text += std::string(", ") + (operand_[1].mn_major ? "1" : "0");
    text += ";\n}";
    std::vector<llvm::Type *> params;
    for (llvm::Value *word : a)
      params.push_back(word->getType());
    params.insert(params.end(), {b_.getInt64Ty(), i32});
    params.insert(params.end(), regs, reg_type);
    auto *result = llvm::StructType::get(
        k_.context, std::vector<llvm::Type *>(regs, reg_type));
    auto *signature = llvm::FunctionType::get(result, params, false);
    std::vector<llvm::Value *> args(a.begin(), a.end());
    args.insert(args.end(), {b, b_.getInt32(accumulate ? 1 : 0)});
    args.insert(args.end(), acc.begin(), acc.end());
    llvm::Value *out =
        b_.CreateCall(llvm::InlineAsm::get(signature, text, constraints,
                                           /*hasSideEffects=*/true),
                      args);
    for (unsigned i = 0; i < regs; ++i)
      acc[i] = b_.CreateExtractValue(out, i);
  }

  KernelLowering &k_;
  llvm::IRBuilder<> &b_;
  const ir::Operation &op_;
  const Layout &home_;
  const BlockedLayout &parent_;
  MmaInstruction mma_;
  int64_t n_ = 0, depth_ = 0, passes_ = 0;
  WgmmaOperand operand_[2];
  llvm::Value *base_[2] = {nullptr, nullptr}; // descriptors at tile starts
  AFragmentRegisters a_registers_;
};

} // namespace

void KernelLowering::lower_warpgroup_dot(const ir::Operation &op) {
  WarpgroupDot(*this, op).lower();
}

} // namespace blocc::nvptx
