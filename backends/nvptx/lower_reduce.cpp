// Reductions along one axis, in three steps:
//   1. in each thread, over its registers along the reduced dimension, as
//      a pairwise tree;
//   2. across the lanes of a warp that hold different elements along it,
//      by butterfly shuffles (shfl.sync.bfly), after which every such lane
//      holds the warp's result;
//   3. across warps, when the dimension spans several: each warp writes
//      its partial result to shared memory, and after a barrier every
//      thread combines the warps' partials in warp order.
// The result is in the slice of the operand's layout along the reduced
// dimension: every thread along it holds the result (a rank-1 block
// reduces to a scalar that every thread holds). Threads holding replicas
// along the reduced dimension (a tile larger than the block) take part in
// none of the combining with their originals, so nothing counts twice.
//
// The combine region runs on registers like scalar code, for any number of
// operands (argmax/argmin reduce (value, index) pairs). As on Triton, the
// combine must be associative and commutative: the order of combining
// differs from the interpreter's left-to-right order, so float sums may
// differ from the CPU backend's in the last bits.
#include "backends/nvptx/kernel_lowering.h"

#include "ir/error.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

namespace blocc::nvptx {

std::vector<llvm::Value *>
KernelLowering::combine(const ir::Block &region,
                        const std::vector<llvm::Value *> &lhs,
                        const std::vector<llvm::Value *> &rhs) {
  size_t n = lhs.size();
  for (size_t i = 0; i < n; ++i) {
    set_scalar(region.argument(i), lhs[i]);
    set_scalar(region.argument(n + i), rhs[i]);
  }
  const ir::Operation *yield = lower_region(region);
  std::vector<llvm::Value *> out;
  for (const ir::Value *v : yield->operands())
    out.push_back(scalar(v));
  return out;
}

llvm::Value *KernelLowering::shuffle_xor(llvm::Value *v, int mask) {
  return shuffle(v, Shuffle::Xor, builder.getInt32(mask));
}

llvm::Value *KernelLowering::shuffle(llvm::Value *v, Shuffle mode,
                                     llvm::Value *b) {
  llvm::Type *type = v->getType();
  auto shuffle32 = [&](llvm::Value *word) {
    llvm::Intrinsic::ID id = llvm::Intrinsic::nvvm_shfl_sync_bfly_i32;
    if (mode == Shuffle::Up)
      id = llvm::Intrinsic::nvvm_shfl_sync_up_i32;
    else if (mode == Shuffle::Down)
      id = llvm::Intrinsic::nvvm_shfl_sync_down_i32;
    else if (mode == Shuffle::Index)
      id = llvm::Intrinsic::nvvm_shfl_sync_idx_i32;
    // The clamp: lane 0 is the lowest source for up, lane 31 the highest
    // for the others.
    return builder.CreateIntrinsic(
        id, {},
        {builder.getInt32(0xffffffffu), word, b,
         builder.getInt32(mode == Shuffle::Up ? 0 : 0x1f)});
  };
  if (type->isPointerTy()) {
    llvm::Value *bits = builder.CreatePtrToInt(v, builder.getInt64Ty());
    return builder.CreateIntToPtr(shuffle(bits, mode, b), type);
  }
  unsigned width =
      static_cast<unsigned>(type->getPrimitiveSizeInBits().getFixedValue());
  llvm::Type *integer = builder.getIntNTy(width);
  llvm::Value *bits =
      type->isIntegerTy() ? v : builder.CreateBitCast(v, integer);
  llvm::Value *moved;
  if (width == 64) {
    llvm::Value *low = builder.CreateTrunc(bits, builder.getInt32Ty());
    llvm::Value *high =
        builder.CreateTrunc(builder.CreateLShr(bits, 32), builder.getInt32Ty());
    low = builder.CreateZExt(shuffle32(low), integer);
    high = builder.CreateZExt(shuffle32(high), integer);
    moved = builder.CreateOr(builder.CreateShl(high, 32), low);
  } else if (width <= 32) {
    moved = builder.CreateTrunc(
        shuffle32(builder.CreateZExt(bits, builder.getInt32Ty())), integer);
  } else {
    throw Error("internal: cannot shuffle a " + std::to_string(width) +
                "-bit value");
  }
  return type->isIntegerTy() ? moved : builder.CreateBitCast(moved, type);
}

namespace {

/// Thread positions along the reduced dimension of `layout` (its `axis`)
/// that hold distinct elements.
int64_t distinct_threads(const Layout &layout, const BlockedLayout &p,
                         int axis) {
  const int d = layout.dims[axis];
  return layout.shape[axis] == 1
             ? 1
             : std::max<int64_t>(1, p.shape[d] / p.size_per_thread[d]);
}

/// How many warps along the reduced dimension hold distinct elements: where
/// several do, their partial results meet in shared memory.
int64_t warps_across(const Layout &layout, const BlockedLayout &p, int axis) {
  const int d = layout.dims[axis];
  const int64_t distinct = distinct_threads(layout, p, axis);
  return distinct > p.threads_per_warp[d]
             ? std::min<int64_t>(p.warps_per_cta[d],
                                 distinct / p.threads_per_warp[d])
             : 1;
}

} // namespace

std::vector<int64_t>
KernelLowering::stacked_arrays(const std::vector<llvm::Type *> &types,
                               int64_t count) const {
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (llvm::Type *t : types) {
    offset = (offset + 7) / 8 * 8;
    offsets.push_back(offset);
    offset +=
        count * static_cast<int64_t>(
                    module.getDataLayout().getTypeAllocSize(t).getFixedValue());
  }
  return offsets;
}

bool KernelLowering::reduces_within_warps(const ir::Operation &op) {
  if (!op.operand(0)->type().is_block())
    return true;
  const Layout &layout = layouts().reduce_layout(op);
  return warps_across(layout, parent(layout),
                      static_cast<int>(op.int_attr("axis"))) == 1;
}

namespace {

/// The lowering of one reduction of a block along an axis, in the three
/// steps above. results_.of[i][r]: operand i's partial result at register r
/// of the operand's layout, for the canonical registers of the result.
class ReduceLowering {
public:
  ReduceLowering(KernelLowering &k, const ir::Operation &op)
      : k_(k), b_(k.builder), op_(op), region_(*op.region(0)),
        n_(op.num_operands()), axis_(static_cast<int>(op.int_attr("axis"))),
        layout_(k.layouts().reduce_layout(op)), p_(k.parent(layout_)),
        d_(layout_.dims[axis_]), sliced_(layout_) {
    sliced_.dims.erase(sliced_.dims.begin() + axis_);
    sliced_.shape.erase(sliced_.shape.begin() + axis_);
  }

  void lower() {
    within_threads();
    across_lanes();
    across_warps();
    define_results();
  }

private:
  /// 1. In each thread: registers differing only along d, as a pairwise
  /// tree (neighbours first, the earlier one on the left): a chain of
  /// dependent combines made ptxas start it between the loads of the
  /// operand, delaying the later loads.
  void within_threads() {
    std::vector<const KernelLowering::Registers *> inputs;
    for (size_t i = 0; i < n_; ++i)
      inputs.push_back(&k_.registers(op_.operand(i), layout_));
    results_.of.assign(n_,
                       KernelLowering::Registers(p_.num_registers(), nullptr));
    int64_t stride = 1; // between register numbers along d
    for (int e = p_.rank() - 1; e > d_; --e)
      stride *= p_.registers_along(e);
    const int64_t along =
        layout_.shape[axis_] == 1 ? 1 : p_.registers_along(d_);
    for (int64_t r = 0; r < p_.num_registers(); ++r) {
      if (canonical_register(p_, sliced_, r) != r)
        continue;
      canonicals_.push_back(r);
      std::vector<std::vector<llvm::Value *>> level;
      for (int64_t j = 0; j < along; ++j) {
        std::vector<llvm::Value *> element;
        for (size_t i = 0; i < n_; ++i)
          element.push_back((*inputs[i])[r + j * stride]);
        level.push_back(std::move(element));
      }
      while (level.size() > 1) {
        std::vector<std::vector<llvm::Value *>> next;
        for (size_t j = 0; j + 1 < level.size(); j += 2)
          next.push_back(k_.combine(region_, level[j], level[j + 1]));
        if (level.size() % 2)
          next.push_back(level.back());
        level = std::move(next);
      }
      results_.set(r, level[0]);
    }
  }

  /// 2. Across the lanes holding distinct elements along d, by butterfly
  /// shuffles.
  void across_lanes() {
    const int64_t lanes = std::min<int64_t>(
        p_.threads_per_warp[d_], distinct_threads(layout_, p_, axis_));
    int64_t lane_stride = 1;
    for (int e = p_.rank() - 1; e > d_; --e)
      lane_stride *= p_.threads_per_warp[e];
    for (int64_t j = 1; j < lanes; j *= 2) {
      const int mask = static_cast<int>(j * lane_stride);
      for (int64_t r : canonicals_) {
        std::vector<llvm::Value *> theirs;
        for (size_t i = 0; i < n_; ++i)
          theirs.push_back(k_.shuffle_xor(results_.of[i][r], mask));
        results_.set(r, k_.combine(region_, results_.at(r), theirs));
      }
    }
  }

  /// 3. Across warps, through shared memory: each warp writes its partial
  /// results, and after a barrier every thread combines the warps' in
  /// warp order. Warps beyond `warps` along d hold replicas: they write
  /// where their originals do, the same values.
  void across_warps() {
    const int64_t warps = warps_across(layout_, p_, axis_);
    if (warps <= 1)
      return;
    int64_t warp_stride = 1;
    for (int e = p_.rank() - 1; e > d_; --e)
      warp_stride *= p_.warps_per_cta[e];
    llvm::Value *warp_d = b_.CreateURem(
        b_.CreateUDiv(k_.warp, b_.getInt32(static_cast<uint32_t>(warp_stride))),
        b_.getInt32(static_cast<uint32_t>(warps)));
    int64_t slots = warps;
    for (int64_t s : sliced_.shape)
      slots *= s;
    const std::vector<int64_t> offsets =
        k_.stacked_arrays(results_.types(canonicals_[0]), slots);
    auto slot = [&](int64_t r, llvm::Value *w) {
      return b_.CreateAdd(
          b_.CreateMul(k_.linear_index(sliced_, r),
                       b_.getInt32(static_cast<uint32_t>(warps))),
          w);
    };
    auto element = [&](size_t i, int64_t r, llvm::Value *w) {
      return k_.shared_element(offsets[i], slots, results_.of[i][r]->getType(),
                               slot(r, w));
    };
    k_.before_shared_write();
    for (int64_t r : canonicals_)
      for (size_t i = 0; i < n_; ++i)
        b_.CreateStore(results_.of[i][r], element(i, r, warp_d));
    k_.after_shared_write();
    for (int64_t r : canonicals_) {
      std::vector<llvm::Value *> acc;
      for (int64_t w = 0; w < warps; ++w) {
        std::vector<llvm::Value *> theirs;
        for (size_t i = 0; i < n_; ++i)
          theirs.push_back(b_.CreateLoad(
              results_.of[i][r]->getType(),
              element(i, r, b_.getInt32(static_cast<uint32_t>(w)))));
        acc = w == 0 ? theirs : k_.combine(region_, acc, theirs);
      }
      results_.set(r, acc);
    }
  }

  void define_results() {
    for (size_t i = 0; i < n_; ++i) {
      KernelLowering::Registers &values = results_.of[i];
      for (int64_t r = 0; r < p_.num_registers(); ++r)
        values[r] = values[canonical_register(p_, sliced_, r)];
      if (op_.result(i)->type().is_block())
        k_.define_block(op_.result(i), *k_.layouts().home(op_.result(i)),
                        values);
      else
        k_.set_scalar(op_.result(i), values[0]);
    }
  }

  KernelLowering &k_;
  llvm::IRBuilderBase &b_;
  const ir::Operation &op_;
  const ir::Block &region_;
  const size_t n_;
  const int axis_;
  const Layout &layout_;
  const BlockedLayout &p_;
  const int d_;
  Layout sliced_;
  std::vector<int64_t> canonicals_;
  CombinedRegisters results_;
};

} // namespace

void KernelLowering::lower_reduce(const ir::Operation &op) {
  if (!op.operand(0)->type().is_block()) {
    for (size_t i = 0; i < op.num_operands(); ++i) // a scalar gives itself
      set_scalar(op.result(i), scalar(op.operand(i)));
    return;
  }
  ReduceLowering(*this, op).lower();
}

} // namespace blocc::nvptx
