// load and store. A thread's registers along the fastest dimension of its
// layout hold consecutive elements; where axis info proves their addresses
// consecutive and aligned, `width` of them (16 bytes at most) move as one
// vector access: ld.global.v4.f32 for four floats, and for elements
// narrower than 4 bytes a vector of 32-bit words (ld.global.v4.b32 for
// eight halves), which NVPTX would otherwise split into byte accesses.
//
// Masks: where axis info proves the mask constant across a group (a mask
// `offsets < n` with n divisible by the group), one predicate guards the
// vector access. Otherwise the group takes the vector access when all its
// lanes are active and falls back to per-lane accesses (llvm.masked.load /
// store, which LLVM expands into predicated scalar accesses) only in the
// group that straddles the end: the masked tail.
//
// Masked-off lanes touch no memory; a load gives `other` (or 0) there.
// Booleans occupy a byte; any nonzero byte loads as true. Only threads
// that own elements store them (replicas hold copies); a scalar store is
// made by thread 0. Volatile accesses are made one element at a time.
// Cache and eviction hints are accepted and not yet passed on.
#include "backends/nvptx/kernel_lowering.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

#include <optional>

namespace blocc::nvptx {

using ir::Scalar;

namespace {

/// A mask the analysis proves true in every lane needs no masking.
bool provably_all_true(const ir::AxisInfoAnalysis &axis_info,
                       const ir::Value *mask) {
  std::optional<int64_t> value = axis_info.get(mask).constant_value;
  return value && *value != 0;
}

/// How one group of `width` consecutive elements moves between registers
/// and memory.
struct Group {
  Scalar element;
  int64_t width = 1;
  llvm::Type *storage = nullptr; // one element in memory
  llvm::Type *access = nullptr;  // what the load/store instruction moves
  llvm::Align align;

  Group(llvm::LLVMContext &context, Scalar s, int64_t w)
      : element(s), width(w), storage(llvm_backend::storage_type(context, s)) {
    int64_t bytes = llvm_backend::storage_bytes(s), total = bytes * w;
    align = llvm::Align(static_cast<uint64_t>(total));
    if (w == 1)
      access = storage;
    else if (bytes >= 4)
      access = llvm::FixedVectorType::get(storage, static_cast<unsigned>(w));
    else if (total >= 8)
      access = llvm::FixedVectorType::get(llvm::Type::getInt32Ty(context),
                                          static_cast<unsigned>(total / 4));
    else
      access =
          llvm::IntegerType::get(context, static_cast<unsigned>(total * 8));
  }

  llvm::Type *lanes_type() const {
    return width == 1 ? storage
                      : llvm::FixedVectorType::get(
                            storage, static_cast<unsigned>(width));
  }

  /// Storage-form lanes of a loaded access value, in register form.
  std::vector<llvm::Value *> unpack(llvm::IRBuilderBase &b,
                                    llvm::Value *loaded) const {
    std::vector<llvm::Value *> lanes;
    llvm::Value *vector = b.CreateBitCast(loaded, lanes_type());
    for (int64_t i = 0; i < width; ++i) {
      llvm::Value *lane =
          width == 1 ? vector : b.CreateExtractElement(vector, uint64_t(i));
      if (element == Scalar::I1)
        lane = b.CreateICmpNE(lane, llvm::Constant::getNullValue(storage));
      lanes.push_back(lane);
    }
    return lanes;
  }

  /// Register-form lanes as one vector of storage elements.
  llvm::Value *pack_lanes(llvm::IRBuilderBase &b,
                          const std::vector<llvm::Value *> &lanes) const {
    auto to_storage = [&](llvm::Value *v) {
      return element == Scalar::I1 ? b.CreateZExt(v, storage) : v;
    };
    if (width == 1)
      return to_storage(lanes[0]);
    llvm::Value *vector = llvm::PoisonValue::get(lanes_type());
    for (int64_t i = 0; i < width; ++i)
      vector = b.CreateInsertElement(vector, to_storage(lanes[i]), uint64_t(i));
    return vector;
  }

  llvm::Value *pack(llvm::IRBuilderBase &b,
                    const std::vector<llvm::Value *> &lanes) const {
    return b.CreateBitCast(pack_lanes(b, lanes), access);
  }
};

llvm::Value *all_of(llvm::IRBuilderBase &b,
                    const std::vector<llvm::Value *> &bits) {
  llvm::Value *all = bits[0];
  for (size_t i = 1; i < bits.size(); ++i)
    all = b.CreateAnd(all, bits[i]);
  return all;
}

llvm::Value *as_vector(llvm::IRBuilderBase &b,
                       const std::vector<llvm::Value *> &lanes) {
  if (lanes.size() == 1)
    return lanes[0];
  llvm::Value *v = llvm::PoisonValue::get(llvm::FixedVectorType::get(
      lanes[0]->getType(), static_cast<unsigned>(lanes.size())));
  for (size_t i = 0; i < lanes.size(); ++i)
    v = b.CreateInsertElement(v, lanes[i], uint64_t(i));
  return v;
}

/// Loads one group. `masks` is empty (no mask), one predicate (uniform
/// over the group) or one per lane; `others` holds register-form lanes.
std::vector<llvm::Value *> load_group(llvm::IRBuilderBase &b, const Group &g,
                                      llvm::Value *address,
                                      const std::vector<llvm::Value *> &masks,
                                      const std::vector<llvm::Value *> &others,
                                      bool is_volatile) {
  auto load_all = [&]() {
    llvm::LoadInst *loaded = b.CreateAlignedLoad(g.access, address, g.align);
    loaded->setVolatile(is_volatile);
    return g.unpack(b, loaded);
  };
  if (masks.empty())
    return load_all();
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::LLVMContext &context = b.getContext();
  bool uniform = masks.size() == 1;
  llvm::BasicBlock *entry = b.GetInsertBlock();
  auto *vector_block = llvm::BasicBlock::Create(context, "load.vector", f);
  auto *lanes_block =
      uniform ? nullptr : llvm::BasicBlock::Create(context, "load.lanes", f);
  auto *join = llvm::BasicBlock::Create(context, "load.join", f);
  b.CreateCondBr(all_of(b, masks), vector_block, uniform ? join : lanes_block);

  b.SetInsertPoint(vector_block);
  std::vector<llvm::Value *> full = load_all();
  llvm::BasicBlock *vector_end = b.GetInsertBlock();
  b.CreateBr(join);

  std::vector<llvm::Value *> partial = others;
  llvm::BasicBlock *partial_end = entry;
  if (!uniform) {
    b.SetInsertPoint(lanes_block);
    llvm::Value *loaded =
        b.CreateMaskedLoad(g.lanes_type(), address, g.align,
                           as_vector(b, masks), g.pack_lanes(b, others));
    partial = g.unpack(b, loaded);
    partial_end = b.GetInsertBlock();
    b.CreateBr(join);
  }

  b.SetInsertPoint(join);
  std::vector<llvm::Value *> lanes;
  for (int64_t i = 0; i < g.width; ++i) {
    llvm::PHINode *phi = b.CreatePHI(full[i]->getType(), 2);
    phi->addIncoming(full[i], vector_end);
    phi->addIncoming(partial[i], partial_end);
    lanes.push_back(phi);
  }
  return lanes;
}

/// Stores one group under `masks` (as for load_group), in threads where
/// `owner` (i1) holds.
void store_group(llvm::IRBuilderBase &b, const Group &g, llvm::Value *address,
                 const std::vector<llvm::Value *> &lanes,
                 std::vector<llvm::Value *> masks, llvm::Value *owner) {
  auto *always = llvm::dyn_cast<llvm::ConstantInt>(owner);
  bool owner_always = always && always->isOne();
  if (masks.empty() && owner_always) {
    b.CreateAlignedStore(g.pack(b, lanes), address, g.align);
    return;
  }
  if (masks.empty())
    masks.push_back(owner);
  else if (!owner_always)
    for (llvm::Value *&m : masks)
      m = b.CreateAnd(m, owner);
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::LLVMContext &context = b.getContext();
  bool uniform = masks.size() == 1;
  auto *vector_block = llvm::BasicBlock::Create(context, "store.vector", f);
  auto *lanes_block =
      uniform ? nullptr : llvm::BasicBlock::Create(context, "store.lanes", f);
  auto *join = llvm::BasicBlock::Create(context, "store.join", f);
  b.CreateCondBr(all_of(b, masks), vector_block, uniform ? join : lanes_block);
  b.SetInsertPoint(vector_block);
  b.CreateAlignedStore(g.pack(b, lanes), address, g.align);
  b.CreateBr(join);
  if (!uniform) {
    b.SetInsertPoint(lanes_block);
    b.CreateMaskedStore(g.pack_lanes(b, lanes), address, g.align,
                        as_vector(b, masks));
    b.CreateBr(join);
  }
  b.SetInsertPoint(join);
}

} // namespace

/// The width of a group of `op`'s accesses in `layout`, and the value
/// dimension its lanes run along (-1: none, single elements).
static std::pair<int64_t, int>
group_shape(const ir::Operation &op, const Layout &layout,
            const BlockedLayout &parent,
            const ir::AxisInfoAnalysis &axis_info) {
  int fastest = parent.rank() - 1;
  for (size_t k = 0; k < layout.dims.size(); ++k) {
    if (layout.dims[k] != fastest || layout.shape[k] == 1)
      continue;
    int dim = static_cast<int>(k);
    int64_t width = std::min(parent.size_per_thread[fastest],
                             access_vector_width(op, axis_info, dim));
    if (op.has_attr("volatile"))
      width = 1;
    return {width, dim};
  }
  return {1, -1};
}

/// The masks of the group at register r: none, one uniform predicate, or
/// one per lane.
static std::vector<llvm::Value *>
group_masks(const ir::AxisInfoAnalysis &axis_info, const ir::Value *mask,
            const KernelLowering::Registers *mask_registers, int64_t r,
            int64_t width, int dim) {
  if (!mask_registers)
    return {};
  const ir::AxisInfo &facts = axis_info.get(mask);
  if (width == 1 || (dim >= 0 && facts.constancy[dim] >= width))
    return {(*mask_registers)[r]};
  return std::vector<llvm::Value *>(mask_registers->begin() + r,
                                    mask_registers->begin() + r + width);
}

KernelLowering::Registers KernelLowering::load_block(const ir::Operation &op,
                                                     const Layout &layout) {
  const ir::Value *pointer = op.operand(0);
  const BlockedLayout &p = parent(layout);
  const ir::Value *mask = op.num_operands() > 1 ? op.operand(1) : nullptr;
  if (mask && provably_all_true(axis_info, mask))
    mask = nullptr;
  Scalar element = pointer->type().pointee();
  const Registers &addresses = registers(pointer, layout);
  const Registers *masks = mask ? &registers(mask, layout) : nullptr;
  const Registers *others =
      op.num_operands() > 2 ? &registers(op.operand(2), layout) : nullptr;
  auto [width, dim] = group_shape(op, layout, p, axis_info);
  Group group(context, element, width);
  llvm::Value *zero =
      llvm::Constant::getNullValue(value_type(op.result()->type()));
  Registers out(p.num_registers(), nullptr);
  for (int64_t r = 0; r < p.num_registers(); ++r) {
    int64_t canonical = canonical_register(p, layout, r);
    if (canonical != r) {
      out[r] = out[canonical];
      continue;
    }
    if (out[r])
      continue; // loaded with its group
    std::vector<llvm::Value *> other_lanes;
    for (int64_t i = 0; i < width; ++i)
      other_lanes.push_back(others ? (*others)[r + i] : zero);
    std::vector<llvm::Value *> lanes =
        load_group(builder, group, addresses[r],
                   group_masks(axis_info, mask, masks, r, width, dim),
                   other_lanes, op.has_attr("volatile"));
    for (int64_t i = 0; i < width; ++i)
      out[r + i] = lanes[i];
  }
  return out;
}

llvm::Value *KernelLowering::load_scalar(const ir::Operation &op) {
  const ir::Value *mask = op.num_operands() > 1 ? op.operand(1) : nullptr;
  if (mask && provably_all_true(axis_info, mask))
    mask = nullptr;
  Group group(context, op.operand(0)->type().pointee(), 1);
  std::vector<llvm::Value *> masks;
  if (mask)
    masks.push_back(scalar(mask));
  llvm::Value *other =
      op.num_operands() > 2
          ? scalar(op.operand(2))
          : llvm::Constant::getNullValue(value_type(op.result()->type()));
  return load_group(builder, group, scalar(op.operand(0)), masks, {other},
                    op.has_attr("volatile"))[0];
}

void KernelLowering::store(const ir::Operation &op) {
  const ir::Value *pointer = op.operand(0);
  const ir::Value *value = op.operand(1);
  const ir::Value *mask = op.num_operands() > 2 ? op.operand(2) : nullptr;
  if (mask && provably_all_true(axis_info, mask))
    mask = nullptr;
  Scalar element = pointer->type().pointee();
  if (!value->type().is_block()) {
    // Every thread holds the scalar; one writes it.
    llvm::Value *thread = builder.CreateIntrinsic(
        llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
    llvm::Value *first = builder.CreateICmpEQ(thread, builder.getInt32(0));
    std::vector<llvm::Value *> masks;
    if (mask)
      masks.push_back(scalar(mask));
    store_group(builder, Group(context, element, 1), scalar(pointer),
                {scalar(value)}, masks, first);
    return;
  }
  const Layout &layout = layouts().store_layout(op);
  const BlockedLayout &p = parent(layout);
  const Registers &addresses = registers(pointer, layout);
  const Registers &values = registers(value, layout);
  const Registers *masks = mask ? &registers(mask, layout) : nullptr;
  auto [width, dim] = group_shape(op, layout, p, axis_info);
  Group group(context, element, width);
  llvm::Value *owner = owns_elements(p);
  for (int64_t r = 0; r < p.num_registers(); r += width) {
    // A full layout has no duplicate registers: every group is stored.
    std::vector<llvm::Value *> lanes(values.begin() + r,
                                     values.begin() + r + width);
    store_group(builder, group, addresses[r], lanes,
                group_masks(axis_info, mask, masks, r, width, dim), owner);
  }
}

} // namespace blocc::nvptx
