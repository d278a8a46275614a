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

#include <optional>

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

/// One atomic op: on a scalar pointer, or lane after lane of a block.
class AtomicLowering {
public:
  AtomicLowering(KernelLowering &k, const ir::Operation &op)
      : k_(k), b_(k.builder), op_(op), is_cas_(op.code() == OpCode::AtomicCas),
        element_(op.operand(0)->type().pointee()) {
    if (element_ == Scalar::I1 || element_ == Scalar::Ptr ||
        ir::is_fp8(element_))
      k.unsupported(op, "atomics on " + std::string(ir::scalar_name(element_)) +
                            " elements are not supported");
    kind_ = is_cas_ ? "cas" : op.string_attr("kind");
    order_ = ordering_of(op.string_attr_or("sem", "acq_rel"));
    value_type_ = k.storage_type(element_);
    bits_type_ = b_.getIntNTy(
        static_cast<unsigned>(llvm_backend::storage_bytes(element_) * 8));
    align_ = llvm::Align(llvm_backend::storage_bytes(element_));
  }

  void lower() {
    if (op_.operand(0)->type().is_block())
      lower_block();
    else
      lower_scalar();
  }

private:
  /// A mask is the third operand of atomic_rmw (atomic_cas takes none).
  bool masked() const { return !is_cas_ && op_.num_operands() > 2; }

  void lower_scalar() {
    llvm::Value *address = k_.scalar(op_.operand(0));
    llvm::Value *value = k_.scalar(op_.operand(is_cas_ ? 2 : 1));
    llvm::Value *compare = is_cas_ ? k_.scalar(op_.operand(1)) : nullptr;
    llvm::Value *active = masked() ? k_.scalar(op_.operand(2)) : nullptr;
    if (k_.info.check_bounds)
      k_.check_lane(k_.access_site(op_), address, active, k_.i64(0));
    k_.set_scalar(op_.result(), apply_where(active, address, value, compare));
  }

  void lower_block() {
    std::vector<llvm::Value *> sources;
    for (const ir::Value *v : op_.operands())
      sources.push_back(k_.materialized_slot(v));
    llvm::Value *result = k_.allocate_slot_for(op_.result()->type());
    auto lane_of = [&](size_t i, llvm::Value *lane) {
      llvm::Value *vector =
          k_.read_slot(sources[i], op_.operand(i)->type().element(),
                       Lanes::uniform(lane), 1);
      return b_.CreateExtractElement(vector, uint64_t{0});
    };
    const int64_t lanes = op_.operand(0)->type().num_elements();
    if (k_.info.check_bounds) {
      // Every lane is checked before the first one is applied.
      int site = k_.access_site(op_);
      k_.counted_loop(k_.i64(lanes), [&](llvm::Value *i) {
        llvm::Value *lane = b_.CreateTrunc(i, b_.getInt32Ty());
        k_.check_lane(site, lane_of(0, lane),
                      masked() ? lane_of(2, lane) : nullptr, i);
      });
    }
    k_.counted_loop(k_.i64(lanes), [&](llvm::Value *i) {
      llvm::Value *lane = b_.CreateTrunc(i, b_.getInt32Ty());
      llvm::Value *old = apply_where(
          masked() ? lane_of(2, lane) : nullptr, lane_of(0, lane),
          lane_of(is_cas_ ? 2 : 1, lane), is_cas_ ? lane_of(1, lane) : nullptr);
      b_.CreateAlignedStore(old, b_.CreateGEP(value_type_, result, i), align_);
    });
    k_.set_materialized(op_.result(), result);
  }

  /// apply() where `active` (i1; nullptr: always) holds; 0 where not,
  /// touching no memory.
  llvm::Value *apply_where(llvm::Value *active, llvm::Value *address,
                           llvm::Value *value, llvm::Value *compare) {
    if (!active)
      return apply(address, value, compare);
    llvm::BasicBlock *before = b_.GetInsertBlock();
    auto *on =
        llvm::BasicBlock::Create(k_.context, "atomic.active", k_.function);
    auto *after =
        llvm::BasicBlock::Create(k_.context, "atomic.skip", k_.function);
    b_.CreateCondBr(active, on, after);
    b_.SetInsertPoint(on);
    llvm::Value *old = apply(address, value, compare);
    llvm::BasicBlock *on_end = b_.GetInsertBlock();
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
    llvm::PHINode *result = b_.CreatePHI(value_type_, 2);
    result->addIncoming(old, on_end);
    result->addIncoming(llvm::Constant::getNullValue(value_type_), before);
    return result;
  }

  /// One lane: returns the old value (register form).
  llvm::Value *apply(llvm::Value *address, llvm::Value *value,
                     llvm::Value *compare) {
    if (is_cas_) {
      llvm::Value *pair =
          b_.CreateAtomicCmpXchg(address, b_.CreateBitCast(compare, bits_type_),
                                 b_.CreateBitCast(value, bits_type_), align_,
                                 order_, failure_ordering(order_));
      return b_.CreateBitCast(b_.CreateExtractValue(pair, 0), value_type_);
    }
    if (std::optional<llvm::AtomicRMWInst::BinOp> native = native_operation())
      return b_.CreateAtomicRMW(*native, address, value, align_, order_);
    return compare_and_swap_loop(address, value);
  }

  /// The atomicrmw operation that applies the op, if LLVM has one.
  std::optional<llvm::AtomicRMWInst::BinOp> native_operation() const {
    using B = llvm::AtomicRMWInst::BinOp;
    const bool is_float = ir::is_float(element_);
    const bool is_signed = ir::is_signed(element_);
    if (kind_ == "xchg")
      return B::Xchg;
    if (is_float)
      return kind_ == "add" && !llvm_backend::is_narrow_float(element_)
                 ? std::optional<B>(B::FAdd)
                 : std::nullopt;
    if (kind_ == "add")
      return B::Add;
    if (kind_ == "and")
      return B::And;
    if (kind_ == "or")
      return B::Or;
    if (kind_ == "xor")
      return B::Xor;
    if (kind_ == "max")
      return is_signed ? B::Max : B::UMax;
    if (kind_ == "min")
      return is_signed ? B::Min : B::UMin;
    return std::nullopt;
  }

  /// A compare-and-swap loop around the elementwise operation.
  llvm::Value *compare_and_swap_loop(llvm::Value *address, llvm::Value *value) {
    if (kind_ != "add" && kind_ != "max" && kind_ != "min")
      k_.unsupported(op_, "atomic " + kind_ + " on " +
                              std::string(ir::scalar_name(element_)));
    const OpCode combine = *ir::atomic_combine(kind_);
    llvm::LoadInst *initial = b_.CreateAlignedLoad(bits_type_, address, align_);
    initial->setAtomic(llvm::AtomicOrdering::Monotonic);
    llvm::BasicBlock *before = b_.GetInsertBlock();
    auto *retry =
        llvm::BasicBlock::Create(k_.context, "atomic.retry", k_.function);
    auto *done =
        llvm::BasicBlock::Create(k_.context, "atomic.done", k_.function);
    b_.CreateBr(retry);
    b_.SetInsertPoint(retry);
    llvm::PHINode *old_bits = b_.CreatePHI(bits_type_, 2);
    old_bits->addIncoming(initial, before);
    llvm::Value *old_value = b_.CreateBitCast(old_bits, value_type_);
    llvm::Value *updated =
        llvm_backend::emit_binary(b_, combine, element_, old_value, value);
    llvm::Value *pair = b_.CreateAtomicCmpXchg(
        address, old_bits, b_.CreateBitCast(updated, bits_type_), align_,
        order_, failure_ordering(order_));
    old_bits->addIncoming(b_.CreateExtractValue(pair, 0), b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateExtractValue(pair, 1), done, retry);
    b_.SetInsertPoint(done);
    return old_value;
  }

  KernelLowering &k_;
  llvm::IRBuilder<> &b_;
  const ir::Operation &op_;
  const bool is_cas_;
  const Scalar element_;
  std::string kind_;
  llvm::AtomicOrdering order_;
  llvm::Type *value_type_ = nullptr;
  llvm::Type *bits_type_ = nullptr;
  llvm::Align align_;
};

} // namespace

void KernelLowering::lower_atomic(const ir::Operation &op) {
  AtomicLowering(*this, op).lower();
}

} // namespace blocc::cpu
