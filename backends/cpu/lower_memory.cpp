// load and store. A chunk of a block access whose addresses the axis-info
// analysis proves consecutive (contiguity along the last dimension at
// least the vector width, the chunk inside one row) becomes one vector
// access at the first lane's address: llvm.masked.load/store with a mask,
// a plain load/store without; any other chunk is a gather or scatter.
// Masked-off lanes touch no memory; a load gives `other` (or 0) there.
// Booleans occupy a byte; any nonzero byte loads as true.
#include "backends/cpu/kernel_lowering.h"
#include "backends/cpu/masked_access.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <algorithm>
#include <optional>
#include <set>

namespace blocc::cpu {

using ir::Scalar;

namespace {

struct AccessPattern {
  bool contiguous = false;
  llvm::Align align{1};
};

} // namespace

/// The loads in the lazy tree of `v` (which its evaluation runs).
static void lazy_loads(KernelLowering &l, const ir::Value *v,
                       std::set<const ir::Operation *> &loads,
                       std::set<const ir::Value *> &seen) {
  if (!v->type().is_block() || l.is_materialized(v) || !seen.insert(v).second)
    return;
  const ir::Operation *def = v->defining_op();
  if (!def)
    return;
  if (def->code() == ir::OpCode::Load)
    loads.insert(def);
  for (const ir::Value *operand : def->operands())
    lazy_loads(l, operand, loads, seen);
}

bool KernelLowering::lazily_reads_memory(const ir::Value *v) {
  if (!v->type().is_block())
    return false;
  const BlockState &s = state(v);
  return !s.slot && s.reads_memory;
}

static AccessPattern access_pattern(const ir::AxisInfoAnalysis &axis_info,
                                    const ir::Value *pointer,
                                    const Lanes &lanes, int vl, int bytes) {
  AccessPattern p;
  p.align = llvm::Align(bytes);
  if (lanes.kind != Lanes::Kind::Contiguous || !pointer->type().is_block())
    return p;
  const ir::AxisInfo &facts = axis_info.get(pointer);
  int last = facts.rank() - 1;
  int64_t innermost = pointer->type().dim(pointer->type().rank() - 1);
  if (vl > innermost || facts.contiguity[last] < vl)
    return p;
  p.contiguous = true;
  // The chunk starts vl * k elements into a run whose first address the
  // divisibility fact covers.
  int64_t align =
      std::min<int64_t>(facts.divisibility[last], int64_t{vl} * bytes);
  p.align = llvm::Align(static_cast<uint64_t>(std::max<int64_t>(align, 1)));
  return p;
}

llvm::Value *KernelLowering::load_vector(Chunk &chunk, const ir::Operation &op,
                                         const Lanes &lanes) {
  const ir::Value *pointer = op.operand(0);
  Scalar element = pointer->type().pointee();
  if (element == Scalar::Ptr)
    unsupported(op, "loading pointers is not supported");
  int vl = chunk.vl;
  llvm::Type *storage = storage_type(element);
  llvm::Type *vector = vector_of(storage, vl);
  int bytes = llvm_backend::storage_bytes(element);
  llvm::Value *addresses = evaluate(chunk, pointer, lanes);
  llvm::Value *mask =
      op.num_operands() > 1 && !provably_all_true(axis_info, op.operand(1))
          ? evaluate(chunk, op.operand(1), lanes)
          : nullptr;
  llvm::Value *other =
      op.num_operands() > 2
          ? evaluate(chunk, op.operand(2), lanes)
          : llvm::Constant::getNullValue(vector_of(register_type(element), vl));
  if (element == Scalar::I1)
    other = builder.CreateZExt(other, vector);
  AccessPattern pattern = access_pattern(axis_info, pointer, lanes, vl, bytes);
  if (info.check_bounds &&
      !(loads_prechecked && !lazily_reads_memory(pointer) &&
        !(op.num_operands() > 1 && lazily_reads_memory(op.operand(1))))) {
    auto in_bounds = loads_in_bounds.find(&op);
    unless(in_bounds != loads_in_bounds.end() ? in_bounds->second : nullptr,
           [&] {
             check_chunk(access_site(op), chunk, pointer, mask, lanes,
                         pattern.contiguous);
           });
  }
  llvm::Value *loaded;
  if (pattern.contiguous) {
    llvm::Value *first = first_lane_address(chunk, pointer, lanes);
    if (mask)
      loaded = masked_load_fast_when_full(builder, vector, first, pattern.align,
                                          mask, other);
    else
      loaded = builder.CreateAlignedLoad(vector, first, pattern.align);
  } else {
    loaded = builder.CreateMaskedGather(vector, addresses, pattern.align, mask,
                                        mask ? other : nullptr);
  }
  if (element == Scalar::I1)
    return builder.CreateICmpNE(loaded, llvm::Constant::getNullValue(vector));
  return loaded;
}

void KernelLowering::lower_store(const ir::Operation &op) {
  const ir::Value *pointer = op.operand(0);
  const ir::Value *value = op.operand(1);
  const ir::Value *mask_value = op.num_operands() > 2 ? op.operand(2) : nullptr;
  if (mask_value && provably_all_true(axis_info, mask_value))
    mask_value = nullptr;
  Scalar element = pointer->type().pointee();
  if (element == Scalar::Ptr)
    unsupported(op, "storing pointers is not supported");
  int vl = vector_width(value->type());
  int bytes = llvm_backend::storage_bytes(element);
  int64_t elements = value->type().num_elements();
  if (info.check_bounds) {
    // Every chunk is checked before the first element is written, and so
    // are the loads the stored values come from (their loaded values are
    // unused here: LLVM keeps only their checks). No chunk needs a check
    // when the store and those loads lie wholly in their buffers.
    int site = access_site(op);
    llvm::Value *store_in_bounds = block_in_bounds(op);
    llvm::Value *skip = store_in_bounds;
    std::set<const ir::Operation *> loads;
    std::set<const ir::Value *> seen;
    for (const ir::Value *v : op.operands())
      lazy_loads(*this, v, loads, seen);
    for (const ir::Operation *load : loads) {
      auto found = loads_in_bounds.find(load);
      llvm::Value *in_bounds =
          found != loads_in_bounds.end() ? found->second : nullptr;
      skip = skip && in_bounds ? builder.CreateAnd(skip, in_bounds) : nullptr;
    }
    unless(skip, [&] {
      chunk_loop(elements, vl, [&](llvm::Value *base) {
        Chunk chunk{vl, {}};
        Lanes lanes = Lanes::contiguous(base);
        evaluate(chunk, value, lanes);
        llvm::Value *mask =
            mask_value ? evaluate(chunk, mask_value, lanes) : nullptr;
        unless(store_in_bounds, [&] {
          check_chunk(
              site, chunk, pointer, mask, lanes,
              access_pattern(axis_info, pointer, lanes, vl, bytes).contiguous);
        });
      });
    });
  }
  loads_prechecked = info.check_bounds;
  chunk_loop(elements, vl, [&](llvm::Value *base) {
    Chunk chunk{vl, {}};
    Lanes lanes = Lanes::contiguous(base);
    llvm::Value *addresses = evaluate(chunk, pointer, lanes);
    llvm::Value *data = evaluate(chunk, value, lanes);
    llvm::Value *mask =
        mask_value ? evaluate(chunk, mask_value, lanes) : nullptr;
    if (element == Scalar::I1)
      data = builder.CreateZExt(data, vector_of(storage_type(element), vl));
    if (info.detect_races)
      record_stores(access_site(op), addresses, data, mask, lanes, vl);
    AccessPattern pattern =
        access_pattern(axis_info, pointer, lanes, vl, bytes);
    if (pattern.contiguous) {
      llvm::Value *first = first_lane_address(chunk, pointer, lanes);
      if (mask)
        masked_store_fast_when_full(builder, data, first, pattern.align, mask);
      else
        builder.CreateAlignedStore(data, first, pattern.align);
    } else {
      // Lanes that share an address are written in lane order (LLVM's
      // scatter guarantees it), so the last one wins, as in the
      // interpreter.
      builder.CreateMaskedScatter(data, addresses, pattern.align, mask);
    }
  });
  loads_prechecked = false;
}

void KernelLowering::lower_scalar_load(const ir::Operation &op) {
  Scalar element = op.operand(0)->type().pointee();
  if (element == Scalar::Ptr)
    unsupported(op, "loading pointers is not supported");
  llvm::Type *storage = storage_type(element);
  llvm::Align align(llvm_backend::storage_bytes(element));
  llvm::Value *address = scalar(op.operand(0));
  auto load = [&]() -> llvm::Value * {
    if (info.check_bounds)
      check_lane(access_site(op), address, nullptr, i64(0));
    llvm::Value *raw = builder.CreateAlignedLoad(storage, address, align);
    if (element == Scalar::I1)
      return builder.CreateICmpNE(raw, llvm::Constant::getNullValue(storage));
    return raw;
  };
  if (op.num_operands() == 1)
    return set_scalar(op.result(), load());
  llvm::Value *other =
      op.num_operands() > 2
          ? scalar(op.operand(2))
          : llvm::Constant::getNullValue(register_type(element));
  llvm::BasicBlock *before = builder.GetInsertBlock();
  auto *active = llvm::BasicBlock::Create(context, "load.active", function);
  auto *after = llvm::BasicBlock::Create(context, "load.done", function);
  builder.CreateCondBr(scalar(op.operand(1)), active, after);
  builder.SetInsertPoint(active);
  llvm::Value *loaded = load();
  llvm::BasicBlock *loaded_in = builder.GetInsertBlock();
  builder.CreateBr(after);
  builder.SetInsertPoint(after);
  llvm::PHINode *result = builder.CreatePHI(loaded->getType(), 2);
  result->addIncoming(loaded, loaded_in);
  result->addIncoming(other, before);
  set_scalar(op.result(), result);
}

void KernelLowering::lower_scalar_store(const ir::Operation &op) {
  Scalar element = op.operand(0)->type().pointee();
  if (element == Scalar::Ptr)
    unsupported(op, "storing pointers is not supported");
  llvm::Align align(llvm_backend::storage_bytes(element));
  llvm::Value *value = scalar(op.operand(1));
  if (element == Scalar::I1)
    value = builder.CreateZExt(value, storage_type(element));
  llvm::Value *address = scalar(op.operand(0));
  auto store = [&] {
    if (info.check_bounds)
      check_lane(access_site(op), address, nullptr, i64(0));
    if (info.detect_races)
      record_stores(access_site(op), splat(1, address), splat(1, value),
                    nullptr, Lanes::uniform(i32(0)), 1);
    builder.CreateAlignedStore(value, address, align);
  };
  if (op.num_operands() == 2)
    return store();
  auto *active = llvm::BasicBlock::Create(context, "store.active", function);
  auto *after = llvm::BasicBlock::Create(context, "store.done", function);
  builder.CreateCondBr(scalar(op.operand(2)), active, after);
  builder.SetInsertPoint(active);
  store();
  builder.CreateBr(after);
  builder.SetInsertPoint(after);
}

} // namespace blocc::cpu
