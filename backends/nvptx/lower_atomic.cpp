// atomic_rmw and atomic_cas on global memory, returning the old values.
//
// Each element is applied once, by the thread that owns it (replicas and
// duplicate registers take the owner's old value), as one PTX atom with
// the op's memory semantics and scope (atom.<sem>.<scope>.global, through
// ptx_atom.h):
//   add      atom.add.u32/u64 for integers, add.f32/f64, add.noftz.f16
//            and (sm_90) add.noftz.bf16;
//   and/or/xor, xchg (exch) on the bits; max/min atom.max.s32/u32/s64/u64;
//   cas      atom.cas.b16/b32/b64, comparing bit patterns.
// bf16 add is atom.add.noftz.bf16 on sm_90. What PTX has no atom for —
// float max/min (the interpreter's: a NaN operand yields the other, -0
// orders below +0), bf16 add before sm_90, and the 16-bit integer kinds —
// runs a compare-and-swap loop around backends/llvm's elementwise op, bit
// for bit the CPU backend's result.
//
// Masked-off lanes touch no memory and return 0, as on the CPU backend and
// the interpreter. A scalar atomic is made once, by thread 0, and its old
// value handed to every thread through shared memory (only when it is
// used). Lanes of one program run concurrently: where several lanes hit
// one address they are applied in some order (the interpreter: lane
// order), so the old values they see may differ; the final memory of
// commutative kinds does not. f32 add (atom.add.f32) flushes subnormal
// inputs and results to zero on global memory, as the hardware does.
#include "backends/nvptx/kernel_lowering.h"
#include "backends/nvptx/ptx_atom.h"

#include "backends/llvm/element_ops.h"
#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <optional>

namespace blocc::nvptx {

using ir::OpCode;
using ir::Scalar;

llvm::Value *emit_atom(llvm::IRBuilderBase &b, const std::string &sem,
                       const std::string &scope, const std::string &operation,
                       llvm::Value *address,
                       const std::vector<llvm::Value *> &operands) {
  auto letter = [](llvm::Type *t) -> std::string {
    if (t->isFloatTy())
      return "f";
    if (t->isDoubleTy())
      return "d";
    switch (t->getIntegerBitWidth()) {
    case 16:
      return "h";
    case 32:
      return "r";
    default:
      return "l";
    }
  };
  llvm::Type *type = operands[0]->getType();
  std::string text =
      "atom." + sem + "." + scope + ".global." + operation + " $0, [$1]";
  std::string constraints = "=" + letter(type) + ",l";
  std::vector<llvm::Value *> arguments{
      b.CreatePtrToInt(address, b.getInt64Ty())};
  for (size_t i = 0; i < operands.size(); ++i) {
    text += ", $" + std::to_string(i + 2);
    constraints += "," + letter(operands[i]->getType());
    arguments.push_back(operands[i]);
  }
  text += ";";
  constraints += ",~{memory}";
  std::vector<llvm::Type *> types;
  for (llvm::Value *a : arguments)
    types.push_back(a->getType());
  auto *asm_type = llvm::FunctionType::get(type, types, false);
  return b.CreateCall(
      llvm::InlineAsm::get(asm_type, text, constraints, /*sideeffect=*/true),
      arguments);
}

namespace {

bool used_in(const ir::Block &block, const ir::Value *v) {
  for (const auto &op : block.ops()) {
    for (const ir::Value *operand : op->operands())
      if (operand == v)
        return true;
    for (size_t i = 0; i < op->num_regions(); ++i)
      if (used_in(*op->region(i), v))
        return true;
  }
  return false;
}

/// How one element of an atomic op is applied.
struct AtomicKind {
  std::string kind, sem, scope;
  Scalar element;
  bool bf16_add = false;  // atom.add.noftz.bf16 (sm_90)
  llvm::Type *value_type; // register form (narrow floats: their bits)
  llvm::Type *bits_type;  // an integer of the element's width

  /// The PTX operation for a native atom, or nothing (a CAS loop).
  std::optional<std::string> native() const {
    int bits = static_cast<int>(bits_type->getIntegerBitWidth());
    std::string b = "b" + std::to_string(bits);
    std::string u = "u" + std::to_string(bits);
    std::string s = "s" + std::to_string(bits);
    if (kind == "cas")
      return "cas." + b;
    if (bits < 32) { // only f16/bf16 add (and cas) have 16-bit atoms
      if (kind == "add" && element == Scalar::F16)
        return "add.noftz.f16";
      if (kind == "add" && element == Scalar::BF16 && bf16_add)
        return "add.noftz.bf16";
      return std::nullopt;
    }
    if (kind == "xchg")
      return "exch." + b;
    if (ir::is_float(element))
      return kind == "add"
                 ? std::optional<std::string>(
                       "add." +
                       std::string(element == Scalar::F32 ? "f32" : "f64"))
                 : std::nullopt;
    if (kind == "add")
      return "add." + u;
    if (kind == "and" || kind == "or" || kind == "xor")
      return kind + "." + b;
    if (kind == "max" || kind == "min")
      return kind + "." + (ir::is_signed(element) ? s : u);
    return std::nullopt;
  }
};

OpCode combine_of(const std::string &kind, const std::string &what) {
  if (std::optional<OpCode> combine = ir::atomic_combine(kind))
    return *combine;
  throw Error(what + ": unknown atomic kind '" + kind +
              "' (expected add, max, min, and, or, xor, xchg or cas)");
}

/// Applies one element: returns the old value (register form).
llvm::Value *apply(llvm::IRBuilderBase &b, const AtomicKind &k,
                   const std::string &what, llvm::Value *address,
                   llvm::Value *value, llvm::Value *compare) {
  bool is_float_register = k.value_type->isFloatingPointTy();
  auto to_bits = [&](llvm::Value *v) {
    return b.CreateBitCast(v, k.bits_type);
  };
  auto from_bits = [&](llvm::Value *v) {
    return b.CreateBitCast(v, k.value_type);
  };
  if (std::optional<std::string> operation = k.native()) {
    if (k.kind == "cas")
      return from_bits(emit_atom(b, k.sem, k.scope, *operation, address,
                                 {to_bits(compare), to_bits(value)}));
    // Float adds take float registers; everything else the bits.
    bool float_operand = is_float_register && k.kind == "add";
    llvm::Value *operand = float_operand ? value : to_bits(value);
    llvm::Value *old =
        emit_atom(b, k.sem, k.scope, *operation, address, {operand});
    return float_operand ? old : from_bits(old);
  }
  // A compare-and-swap loop around the elementwise op.
  bool exchange = k.kind == "xchg";
  OpCode combine = exchange ? OpCode::Add : combine_of(k.kind, what);
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::LoadInst *initial = b.CreateLoad(k.bits_type, address);
  initial->setVolatile(true);
  llvm::BasicBlock *before = b.GetInsertBlock();
  auto *retry = llvm::BasicBlock::Create(b.getContext(), "atomic.retry", f);
  auto *done = llvm::BasicBlock::Create(b.getContext(), "atomic.done", f);
  b.CreateBr(retry);
  b.SetInsertPoint(retry);
  llvm::PHINode *old_bits = b.CreatePHI(k.bits_type, 2);
  old_bits->addIncoming(initial, before);
  llvm::Value *old = from_bits(old_bits);
  llvm::Value *updated =
      exchange ? value
               : llvm_backend::emit_binary(b, combine, k.element, old, value);
  int bits = static_cast<int>(k.bits_type->getIntegerBitWidth());
  llvm::Value *seen =
      emit_atom(b, k.sem, k.scope, "cas.b" + std::to_string(bits), address,
                {old_bits, to_bits(updated)});
  old_bits->addIncoming(seen, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpEQ(seen, old_bits), done, retry);
  b.SetInsertPoint(done);
  return old;
}

/// `apply` where `active` (i1) holds; 0 elsewhere.
llvm::Value *apply_where(llvm::IRBuilderBase &b, llvm::Value *active,
                         const std::function<llvm::Value *()> &apply_one) {
  if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(active); c && c->isOne())
    return apply_one();
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *before = b.GetInsertBlock();
  auto *lane = llvm::BasicBlock::Create(b.getContext(), "atomic.lane", f);
  auto *join = llvm::BasicBlock::Create(b.getContext(), "atomic.join", f);
  b.CreateCondBr(active, lane, join);
  b.SetInsertPoint(lane);
  llvm::Value *old = apply_one();
  llvm::BasicBlock *lane_end = b.GetInsertBlock();
  b.CreateBr(join);
  b.SetInsertPoint(join);
  llvm::PHINode *result = b.CreatePHI(old->getType(), 2);
  result->addIncoming(old, lane_end);
  result->addIncoming(llvm::Constant::getNullValue(old->getType()), before);
  return result;
}

void check_order(const std::string &sem, const std::string &scope,
                 const std::string &what) {
  if (sem != "relaxed" && sem != "acquire" && sem != "release" &&
      sem != "acq_rel")
    throw Error(what + ": unknown memory semantic '" + sem +
                "' (expected relaxed, acquire, release or acq_rel)");
  if (scope != "cta" && scope != "gpu" && scope != "sys")
    throw Error(what + ": unknown memory scope '" + scope +
                "' (expected cta, gpu or sys)");
}

/// The lowering of one atomic op: its kind, then the scalar form (thread
/// 0 applies it) or the block form (each owner its elements).
class AtomicLowering {
public:
  AtomicLowering(KernelLowering &k, const ir::Operation &op)
      : k_(k), b_(k.builder), op_(op), result_(op.result()),
        is_cas_(op.code() == OpCode::AtomicCas), what_(op.describe()) {
    const ir::Type &pointer_type = op.operand(0)->type();
    kind_.kind = is_cas_ ? "cas" : op.string_attr("kind");
    kind_.sem = op.string_attr_or("sem", "acq_rel");
    kind_.scope = op.string_attr_or("scope", "gpu");
    check_order(kind_.sem, kind_.scope, what_);
    kind_.element = pointer_type.pointee();
    kind_.bf16_add = k.arch.sm >= 90;
    kind_.value_type = k.value_type(result_->type());
    kind_.bits_type = b_.getIntNTy(
        static_cast<unsigned>(llvm_backend::storage_bytes(kind_.element) * 8));
    mask_ = !is_cas_ && op.num_operands() > 2 ? op.operand(2) : nullptr;
    if (mask_ && provably_all_true(k.axis_info, mask_))
      mask_ = nullptr;
    value_index_ = is_cas_ ? 2 : 1;
  }

  void lower() {
    // An atomic reads and writes: ordered after the program's stores, and
    // its writes before the program's later accesses.
    if (k_.barrier_state().first)
      k_.barrier();
    if (op_.operand(0)->type().is_block())
      lower_block();
    else
      lower_scalar();
    k_.set_barrier_state({true, k_.barrier_state().second});
  }

private:
  /// Thread 0 applies it, and hands its old value to the others where it
  /// is used.
  void lower_scalar() {
    llvm::Value *first = b_.CreateICmpEQ(
        b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {}),
        b_.getInt32(0));
    llvm::Value *active = mask_ ? b_.CreateAnd(first, k_.scalar(mask_)) : first;
    llvm::Value *old = apply_where(b_, active, [&] {
      return apply(b_, kind_, what_, k_.scalar(op_.operand(0)),
                   k_.scalar(op_.operand(value_index_)),
                   is_cas_ ? k_.scalar(op_.operand(1)) : nullptr);
    });
    if (used_in(k_.kernel.body(), result_))
      old = handed_to_all(first, old);
    k_.set_scalar(result_, old);
  }

  /// Each owner applies its elements (where its mask holds); replicas and
  /// duplicate registers take the owners' old values.
  void lower_block() {
    const Layout &home = *k_.layouts().home(result_);
    const BlockedLayout &p = k_.parent(home);
    const KernelLowering::Registers &addresses =
        k_.registers(op_.operand(0), home);
    const KernelLowering::Registers &values =
        k_.registers(op_.operand(value_index_), home);
    const KernelLowering::Registers *compares =
        is_cas_ ? &k_.registers(op_.operand(1), home) : nullptr;
    const KernelLowering::Registers *masks =
        mask_ ? &k_.registers(mask_, home) : nullptr;
    llvm::Value *owner = k_.owns_elements(p);
    KernelLowering::Registers old(p.num_registers(), nullptr);
    for (int64_t r = 0; r < p.num_registers(); ++r) {
      int64_t canonical = canonical_register(p, home, r);
      if (canonical != r) {
        old[r] = old[canonical];
        continue;
      }
      llvm::Value *active = owner;
      if (masks)
        active = b_.CreateAnd(active, (*masks)[r]);
      old[r] = apply_where(b_, active, [&] {
        return apply(b_, kind_, what_, addresses[r], values[r],
                     compares ? (*compares)[r] : nullptr);
      });
    }
    auto *always = llvm::dyn_cast<llvm::ConstantInt>(owner);
    if (!(always && always->isOne()) &&
        !k_.layouts().layouts_of(result_).empty())
      old = owners_old_values(home, p, owner, old);
    k_.define_block(result_, home, std::move(old));
  }

  /// Thread 0's old value, handed to the others through shared memory.
  llvm::Value *handed_to_all(llvm::Value *first, llvm::Value *old) {
    k_.before_shared_write();
    llvm::Value *slot =
        k_.shared_element(0, 1, kind_.bits_type, b_.getInt32(0));
    write_where(first, [&] {
      b_.CreateStore(b_.CreateBitCast(old, kind_.bits_type), slot);
    });
    k_.after_shared_write();
    return b_.CreateBitCast(b_.CreateLoad(kind_.bits_type, slot),
                            kind_.value_type);
  }

  /// Replicas take the owners' old values through shared memory.
  KernelLowering::Registers
  owners_old_values(const Layout &home, const BlockedLayout &p,
                    llvm::Value *owner, const KernelLowering::Registers &old) {
    const int64_t count = result_->type().num_elements();
    llvm::Type *bits = kind_.bits_type;
    k_.before_shared_write();
    write_where(owner, [&] {
      for (int64_t r = 0; r < p.num_registers(); ++r)
        if (canonical_register(p, home, r) == r)
          b_.CreateStore(
              b_.CreateBitCast(old[r], bits),
              k_.shared_element(0, count, bits, k_.linear_index(home, r)));
    });
    k_.after_shared_write();
    return k_.per_register(home, [&](int64_t r) {
      return b_.CreateBitCast(
          b_.CreateLoad(bits, k_.shared_element(0, count, bits,
                                                k_.linear_index(home, r))),
          kind_.value_type);
    });
  }

  /// `write()` in a block that runs where `writer` (i1) holds.
  void write_where(llvm::Value *writer, const std::function<void()> &write) {
    llvm::Function *f = b_.GetInsertBlock()->getParent();
    auto *block = llvm::BasicBlock::Create(k_.context, "atomic.share", f);
    auto *join = llvm::BasicBlock::Create(k_.context, "atomic.shared", f);
    b_.CreateCondBr(writer, block, join);
    b_.SetInsertPoint(block);
    write();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
  }

  KernelLowering &k_;
  llvm::IRBuilderBase &b_;
  const ir::Operation &op_;
  const ir::Value *result_;
  const bool is_cas_;
  const std::string what_;
  AtomicKind kind_;
  const ir::Value *mask_ = nullptr;
  size_t value_index_ = 1;
};

} // namespace

void KernelLowering::lower_atomic(const ir::Operation &op) {
  AtomicLowering(*this, op).lower();
}

} // namespace blocc::nvptx
