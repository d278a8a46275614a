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

bool KernelLowering::reduces_within_warps(const ir::Operation &op) {
  if (!op.operand(0)->type().is_block())
    return true;
  const Layout &layout = layouts().reduce_layout(op);
  return warps_across(layout, parent(layout),
                      static_cast<int>(op.int_attr("axis"))) == 1;
}

void KernelLowering::lower_reduce(const ir::Operation &op) {
  const size_t n = op.num_operands();
  const ir::Block &region = *op.region(0);
  if (!op.operand(0)->type().is_block()) {
    for (size_t i = 0; i < n; ++i) // reducing a scalar gives it back
      set_scalar(op.result(i), scalar(op.operand(i)));
    return;
  }
  const int axis = static_cast<int>(op.int_attr("axis"));
  const Layout &layout = layouts().reduce_layout(op);
  const BlockedLayout &p = parent(layout);
  const int d = layout.dims[axis];
  Layout sliced = layout;
  sliced.dims.erase(sliced.dims.begin() + axis);
  sliced.shape.erase(sliced.shape.begin() + axis);

  std::vector<const Registers *> inputs;
  for (size_t i = 0; i < n; ++i)
    inputs.push_back(&registers(op.operand(i), layout));
  // results[i][r]: operand i's partial result at (sliced) register r.
  std::vector<Registers> results(n, Registers(p.num_registers(), nullptr));

  // 1. In each thread: registers differing only along d.
  int64_t stride = 1; // between register numbers along d
  for (int e = p.rank() - 1; e > d; --e)
    stride *= p.registers_along(e);
  const int64_t along = layout.shape[axis] == 1 ? 1 : p.registers_along(d);
  std::vector<int64_t> canonicals;
  for (int64_t r = 0; r < p.num_registers(); ++r) {
    int64_t c = canonical_register(p, sliced, r);
    if (c != r)
      continue;
    canonicals.push_back(r);
    // A pairwise tree (neighbours first, the earlier one on the left): a
    // chain of `along` dependent combines made ptxas start it between the
    // loads of the operand, delaying the later loads.
    std::vector<std::vector<llvm::Value *>> level;
    for (int64_t k = 0; k < along; ++k) {
      std::vector<llvm::Value *> element;
      for (size_t i = 0; i < n; ++i)
        element.push_back((*inputs[i])[r + k * stride]);
      level.push_back(std::move(element));
    }
    while (level.size() > 1) {
      std::vector<std::vector<llvm::Value *>> next;
      for (size_t k = 0; k + 1 < level.size(); k += 2)
        next.push_back(combine(region, level[k], level[k + 1]));
      if (level.size() % 2)
        next.push_back(level.back());
      level = std::move(next);
    }
    for (size_t i = 0; i < n; ++i)
      results[i][r] = level[0][i];
  }

  const int64_t distinct = distinct_threads(layout, p, axis);
  // 2. Across lanes.
  const int64_t lanes = std::min<int64_t>(p.threads_per_warp[d], distinct);
  int64_t lane_stride = 1;
  for (int e = p.rank() - 1; e > d; --e)
    lane_stride *= p.threads_per_warp[e];
  for (int64_t k = 1; k < lanes; k *= 2) {
    int mask = static_cast<int>(k * lane_stride);
    for (int64_t r : canonicals) {
      std::vector<llvm::Value *> mine, theirs;
      for (size_t i = 0; i < n; ++i) {
        mine.push_back(results[i][r]);
        theirs.push_back(shuffle_xor(results[i][r], mask));
      }
      std::vector<llvm::Value *> acc = combine(region, mine, theirs);
      for (size_t i = 0; i < n; ++i)
        results[i][r] = acc[i];
    }
  }

  // 3. Across warps.
  const int64_t warps = warps_across(layout, p, axis);
  if (warps > 1) {
    int64_t warp_stride = 1;
    for (int e = p.rank() - 1; e > d; --e)
      warp_stride *= p.warps_per_cta[e];
    // Warps beyond `warps` along d hold replicas: they write where their
    // originals do, the same values.
    llvm::Value *warp_d = builder.CreateURem(
        builder.CreateUDiv(
            warp, builder.getInt32(static_cast<uint32_t>(warp_stride))),
        builder.getInt32(static_cast<uint32_t>(warps)));
    int64_t slots = warps;
    for (int64_t s : sliced.shape)
      slots *= s;
    std::vector<int64_t> offsets;
    int64_t offset = 0;
    for (size_t i = 0; i < n; ++i) {
      offset = (offset + 7) / 8 * 8;
      offsets.push_back(offset);
      llvm::Type *t = results[i][canonicals[0]]->getType();
      offset += slots *
                static_cast<int64_t>(
                    module.getDataLayout().getTypeAllocSize(t).getFixedValue());
    }
    auto slot = [&](int64_t r, llvm::Value *w) {
      return builder.CreateAdd(
          builder.CreateMul(linear_index(sliced, r),
                            builder.getInt32(static_cast<uint32_t>(warps))),
          w);
    };
    before_shared_write();
    for (int64_t r : canonicals)
      for (size_t i = 0; i < n; ++i) {
        llvm::Value *v = results[i][r];
        builder.CreateStore(v, shared_element(offsets[i], slots, v->getType(),
                                              slot(r, warp_d)));
      }
    after_shared_write();
    for (int64_t r : canonicals) {
      std::vector<llvm::Value *> acc;
      for (int64_t w = 0; w < warps; ++w) {
        std::vector<llvm::Value *> partial;
        for (size_t i = 0; i < n; ++i) {
          llvm::Type *t = results[i][r]->getType();
          partial.push_back(builder.CreateLoad(
              t, shared_element(
                     offsets[i], slots, t,
                     slot(r, builder.getInt32(static_cast<uint32_t>(w))))));
        }
        acc = w == 0 ? partial : combine(region, acc, partial);
      }
      for (size_t i = 0; i < n; ++i)
        results[i][r] = acc[i];
    }
  }

  for (size_t i = 0; i < n; ++i) {
    Registers &values = results[i];
    for (int64_t r = 0; r < p.num_registers(); ++r)
      values[r] = values[canonical_register(p, sliced, r)];
    if (op.result(i)->type().is_block())
      define_block(op.result(i), *layouts().home(op.result(i)), values);
    else
      set_scalar(op.result(i), values[0]);
  }
}

} // namespace blocc::nvptx
