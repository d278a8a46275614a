// atomic_rmw and atomic_cas, one lane after another in lane order (as the
// interpreter applies them, each lane seeing the ones before). Integer
// add/and/or/xor/xchg and integer min/max are LLVM atomicrmw; float add is
// atomicrmw fadd; float min/max (which ignore NaN and order -0 below +0)
// and anything on f16/bf16 run a compare-and-swap loop around the
// elementwise operation. atomic_cas compares bit patterns. Masked-off
// lanes touch no memory and return 0.
#include "backends/cpu/kernel_lowering.h"

#include "backends/llvm/element_ops.h"
#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

namespace blocc::cpu {

using ir::OpCode;
using ir::Scalar;

namespace {

llvm::AtomicOrdering ordering_of(const std::string &sem) {
  if (sem == "relaxed")
    return llvm::AtomicOrdering::Monotonic;
  if (sem == "acquire")
    return llvm::AtomicOrdering::Acquire;
  if (sem == "release")
    return llvm::AtomicOrdering::Release;
  return llvm::AtomicOrdering::AcquireRelease; // "acq_rel", Triton's default
}

llvm::AtomicOrdering failure_ordering(llvm::AtomicOrdering o) {
  switch (o) {
  case llvm::AtomicOrdering::AcquireRelease:
  case llvm::AtomicOrdering::Acquire:
    return llvm::AtomicOrdering::Acquire;
  default:
    return llvm::AtomicOrdering::Monotonic;
  }
}

} // namespace

void KernelLowering::lower_atomic(const ir::Operation &op) {
  bool is_cas = op.code() == OpCode::AtomicCas;
  const ir::Type &pointer_type = op.operand(0)->type();
  Scalar element = pointer_type.pointee();
  if (element == Scalar::I1 || element == Scalar::Ptr || ir::is_fp8(element))
    unsupported(op, "atomics on " + std::string(ir::scalar_name(element)) +
                        " elements are not supported");
  std::string kind = is_cas ? "cas" : op.string_attr("kind");
  llvm::AtomicOrdering order = ordering_of(op.string_attr_or("sem", "acq_rel"));
  llvm::Type *value_type = storage_type(element);
  unsigned width =
      static_cast<unsigned>(llvm_backend::storage_bytes(element) * 8);
  llvm::Type *bits_type = builder.getIntNTy(width);
  llvm::Align align(llvm_backend::storage_bytes(element));
  bool is_float = ir::is_float(element);
  bool narrow = llvm_backend::is_narrow_float(element);

  // One lane: returns the old value (register form).
  auto apply = [&](llvm::Value *address, llvm::Value *value,
                   llvm::Value *compare) -> llvm::Value * {
    if (is_cas) {
      llvm::Value *expected = builder.CreateBitCast(compare, bits_type);
      llvm::Value *desired = builder.CreateBitCast(value, bits_type);
      llvm::Value *pair = builder.CreateAtomicCmpXchg(
          address, expected, desired, align, order, failure_ordering(order));
      return builder.CreateBitCast(builder.CreateExtractValue(pair, 0),
                                   value_type);
    }
    using B = llvm::AtomicRMWInst::BinOp;
    std::optional<B> native;
    bool is_signed = ir::is_signed(element);
    if (kind == "xchg")
      native = B::Xchg;
    else if (!is_float && kind == "add")
      native = B::Add;
    else if (!narrow && is_float && kind == "add")
      native = B::FAdd;
    else if (!is_float && kind == "and")
      native = B::And;
    else if (!is_float && kind == "or")
      native = B::Or;
    else if (!is_float && kind == "xor")
      native = B::Xor;
    else if (!is_float && kind == "max")
      native = is_signed ? B::Max : B::UMax;
    else if (!is_float && kind == "min")
      native = is_signed ? B::Min : B::UMin;
    if (native)
      return builder.CreateAtomicRMW(*native, address, value, align, order);
    // A compare-and-swap loop around the elementwise operation.
    OpCode combine = kind == "add"   ? OpCode::Add
                     : kind == "max" ? OpCode::Maximum
                     : kind == "min" ? OpCode::Minimum
                                     : OpCode::Add;
    if (kind != "add" && kind != "max" && kind != "min")
      unsupported(op, "atomic " + kind + " on " +
                          std::string(ir::scalar_name(element)));
    llvm::LoadInst *initial =
        builder.CreateAlignedLoad(bits_type, address, align);
    initial->setAtomic(llvm::AtomicOrdering::Monotonic);
    llvm::BasicBlock *before = builder.GetInsertBlock();
    auto *retry = llvm::BasicBlock::Create(context, "atomic.retry", function);
    auto *done = llvm::BasicBlock::Create(context, "atomic.done", function);
    builder.CreateBr(retry);
    builder.SetInsertPoint(retry);
    llvm::PHINode *old_bits = builder.CreatePHI(bits_type, 2);
    old_bits->addIncoming(initial, before);
    llvm::Value *old_value = builder.CreateBitCast(old_bits, value_type);
    llvm::Value *updated =
        llvm_backend::emit_binary(builder, combine, element, old_value, value);
    llvm::Value *pair = builder.CreateAtomicCmpXchg(
        address, old_bits, builder.CreateBitCast(updated, bits_type), align,
        order, failure_ordering(order));
    llvm::Value *seen = builder.CreateExtractValue(pair, 0);
    old_bits->addIncoming(seen, builder.GetInsertBlock());
    builder.CreateCondBr(builder.CreateExtractValue(pair, 1), done, retry);
    builder.SetInsertPoint(done);
    return old_value;
  };

  if (!pointer_type.is_block()) {
    llvm::Value *address = scalar(op.operand(0));
    llvm::Value *value = scalar(op.operand(is_cas ? 2 : 1));
    llvm::Value *compare = is_cas ? scalar(op.operand(1)) : nullptr;
    if (info.check_bounds)
      check_lane(access_site(op), address,
                 is_cas || op.num_operands() < 3 ? nullptr
                                                 : scalar(op.operand(2)),
                 i64(0));
    if (is_cas || op.num_operands() < 3)
      return set_scalar(op.result(), apply(address, value, compare));
    llvm::BasicBlock *before = builder.GetInsertBlock();
    auto *active = llvm::BasicBlock::Create(context, "atomic.active", function);
    auto *after = llvm::BasicBlock::Create(context, "atomic.skip", function);
    builder.CreateCondBr(scalar(op.operand(2)), active, after);
    builder.SetInsertPoint(active);
    llvm::Value *old = apply(address, value, nullptr);
    llvm::BasicBlock *active_end = builder.GetInsertBlock();
    builder.CreateBr(after);
    builder.SetInsertPoint(after);
    llvm::PHINode *result = builder.CreatePHI(value_type, 2);
    result->addIncoming(old, active_end);
    result->addIncoming(llvm::Constant::getNullValue(value_type), before);
    return set_scalar(op.result(), result);
  }

  std::vector<llvm::Value *> sources;
  for (const ir::Value *v : op.operands())
    sources.push_back(materialized_slot(v));
  llvm::Value *result = allocate_slot_for(op.result()->type());
  auto lane_of = [&](size_t k, llvm::Value *lane) {
    llvm::Value *vector = read_slot(sources[k], op.operand(k)->type().element(),
                                    Lanes::uniform(lane), 1);
    return builder.CreateExtractElement(vector, uint64_t{0});
  };
  bool masked = !is_cas && op.num_operands() > 2;
  if (info.check_bounds) {
    // Every lane is checked before the first one is applied.
    int site = access_site(op);
    counted_loop(i64(pointer_type.num_elements()), [&](llvm::Value *i) {
      llvm::Value *lane = builder.CreateTrunc(i, builder.getInt32Ty());
      check_lane(site, lane_of(0, lane), masked ? lane_of(2, lane) : nullptr,
                 i);
    });
  }
  counted_loop(i64(pointer_type.num_elements()), [&](llvm::Value *i) {
    llvm::Value *lane = builder.CreateTrunc(i, builder.getInt32Ty());
    llvm::Value *address = lane_of(0, lane);
    llvm::Value *value = lane_of(is_cas ? 2 : 1, lane);
    llvm::Value *compare = is_cas ? lane_of(1, lane) : nullptr;
    llvm::Value *old;
    if (masked) {
      llvm::BasicBlock *before = builder.GetInsertBlock();
      auto *active =
          llvm::BasicBlock::Create(context, "atomic.active", function);
      auto *after = llvm::BasicBlock::Create(context, "atomic.skip", function);
      builder.CreateCondBr(lane_of(2, lane), active, after);
      builder.SetInsertPoint(active);
      llvm::Value *updated = apply(address, value, nullptr);
      llvm::BasicBlock *active_end = builder.GetInsertBlock();
      builder.CreateBr(after);
      builder.SetInsertPoint(after);
      llvm::PHINode *phi = builder.CreatePHI(value_type, 2);
      phi->addIncoming(updated, active_end);
      phi->addIncoming(llvm::Constant::getNullValue(value_type), before);
      old = phi;
    } else {
      old = apply(address, value, compare);
    }
    builder.CreateAlignedStore(old, builder.CreateGEP(value_type, result, i),
                               align);
  });
  set_materialized(op.result(), result);
}

} // namespace blocc::cpu
