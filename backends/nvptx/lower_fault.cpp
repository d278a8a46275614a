// Stopping a program with an error (runtime/cuda/fault_record.h has the
// why): a failing check reports its site and lane in the module's fault
// record and every thread of the program returns, so the program makes no
// memory access after the fault.
//
// A scalar condition is alike in every thread: the failing branch is taken
// by the whole CTA, thread 0 reports. A block condition differs between
// threads, which hold different elements: a CTA-wide vote (bar.red.or,
// itself a barrier) tells every thread whether any failed; if so, the
// failing threads take the minimum of their first failing lanes in a
// shared word (atom.shared.min), and after a barrier thread 0 reports
// that lane, so the report names the first failing lane as the
// interpreter does. Reports from several programs meet at a spin lock on
// the record; the smallest linear program index stays.
#include "backends/nvptx/kernel_lowering.h"
#include "backends/nvptx/ptx_atom.h"

#include "runtime/cuda/fault_record.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

namespace blocc::nvptx {

namespace {

constexpr uint32_t kNoLane = 0xffffffffu;
constexpr unsigned kGlobal = 1;

/// The module's global holding the address of its fault record (mapped
/// host memory, runtime/cuda/fault_record.h), which the host sets when it
/// loads the module.
llvm::GlobalVariable *fault_record_address(llvm::Module &module) {
  if (llvm::GlobalVariable *g =
          module.getGlobalVariable(cuda::kFaultRecordSymbol))
    return g;
  auto *type = llvm::PointerType::get(module.getContext(), kGlobal);
  // Visible, so that the host finds it (cuModuleGetGlobal).
  auto *address = new llvm::GlobalVariable(
      module, type, false, llvm::GlobalValue::ExternalLinkage,
      llvm::Constant::getNullValue(type), cuda::kFaultRecordSymbol, nullptr,
      llvm::GlobalValue::NotThreadLocal, kGlobal);
  address->setAlignment(llvm::Align(8));
  return address;
}

/// The CTA's shared word the failing threads take the minimum lane in.
/// Every thread sets it to kNoLane at the kernel's entry; the vote's
/// barrier orders that before any use.
llvm::GlobalVariable *shared_lane(llvm::IRBuilderBase &b, llvm::Function *f) {
  llvm::Module &module = *f->getParent();
  const char *name = "blocc_fault_lane";
  if (llvm::GlobalVariable *g = module.getGlobalVariable(name, true))
    return g;
  auto *lane = new llvm::GlobalVariable(
      module, b.getInt32Ty(), false, llvm::GlobalValue::InternalLinkage,
      llvm::UndefValue::get(b.getInt32Ty()), name, nullptr,
      llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
  lane->setAlignment(llvm::Align(4));
  llvm::BasicBlock &entry = f->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.getFirstInsertionPt());
  at_entry.CreateStore(at_entry.getInt32(kNoLane), lane);
  return lane;
}

llvm::Value *special_register(llvm::IRBuilderBase &b, llvm::Intrinsic::ID id) {
  return b.CreateIntrinsic(id, {}, {});
}

llvm::Value *thread_is_first(llvm::IRBuilderBase &b) {
  return b.CreateICmpEQ(
      special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x),
      b.getInt32(0));
}

/// Writes `site` and `lane` (i32) into the record unless a program with a
/// smaller linear index has; run by one thread of the program.
void report(llvm::IRBuilderBase &b, int site, llvm::Value *lane) {
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::LLVMContext &context = b.getContext();
  llvm::GlobalVariable *address = fault_record_address(*f->getParent());
  llvm::Value *record = b.CreateLoad(address->getValueType(), address);
  auto field = [&](size_t offset) {
    return b.CreateConstGEP1_64(b.getInt8Ty(), record, offset);
  };
  using llvm::Intrinsic::ID;
  const ID ids[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                     llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                     llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  llvm::Value *pid[3];
  for (int axis = 0; axis < 3; ++axis)
    pid[axis] = special_register(b, ids[axis]);
  auto wide = [&](llvm::Value *v) { return b.CreateZExt(v, b.getInt64Ty()); };
  llvm::Value *nx =
      wide(special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x));
  llvm::Value *ny =
      wide(special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y));
  llvm::Value *program =
      b.CreateAdd(wide(pid[0]),
                  b.CreateMul(nx, b.CreateAdd(wide(pid[1]),
                                              b.CreateMul(ny, wide(pid[2])))));

  llvm::Value *lock = field(offsetof(cuda::FaultRecord, lock));
  auto *spin = llvm::BasicBlock::Create(context, "fault.lock", f);
  auto *locked = llvm::BasicBlock::Create(context, "fault.locked", f);
  auto *write = llvm::BasicBlock::Create(context, "fault.write", f);
  auto *unlock = llvm::BasicBlock::Create(context, "fault.unlock", f);
  b.CreateBr(spin);
  b.SetInsertPoint(spin);
  llvm::Value *held = emit_atom(b, "acquire", "gpu", "cas.b32", lock,
                                {b.getInt32(0), b.getInt32(1)});
  b.CreateCondBr(b.CreateICmpEQ(held, b.getInt32(0)), locked, spin);

  b.SetInsertPoint(locked);
  auto volatile_load = [&](llvm::Type *t, size_t offset) {
    llvm::LoadInst *l = b.CreateLoad(t, field(offset));
    l->setVolatile(true);
    return l;
  };
  auto volatile_store = [&](llvm::Value *v, size_t offset) {
    b.CreateStore(v, field(offset))->setVolatile(true);
  };
  llvm::Value *current_site =
      volatile_load(b.getInt32Ty(), offsetof(cuda::FaultRecord, site));
  llvm::Value *current_program =
      volatile_load(b.getInt64Ty(), offsetof(cuda::FaultRecord, program));
  b.CreateCondBr(b.CreateOr(b.CreateICmpEQ(current_site, b.getInt32(0)),
                            b.CreateICmpULT(program, current_program)),
                 write, unlock);

  b.SetInsertPoint(write);
  volatile_store(b.getInt32(static_cast<uint32_t>(site + 1)),
                 offsetof(cuda::FaultRecord, site));
  volatile_store(program, offsetof(cuda::FaultRecord, program));
  for (int axis = 0; axis < 3; ++axis)
    volatile_store(pid[axis], offsetof(cuda::FaultRecord, pid) + 4 * axis);
  volatile_store(lane, offsetof(cuda::FaultRecord, lane));
  b.CreateBr(unlock);

  b.SetInsertPoint(unlock);
  emit_atom(b, "release", "gpu", "exch.b32", lock, {b.getInt32(0)});
}

} // namespace

int KernelLowering::add_fault_site(const ir::Operation &op, std::string message,
                                   FaultSite::Form form) {
  FaultSite site;
  site.op = op.describe();
  site.message = std::move(message);
  if (op.num_operands() > 0)
    site.shape = op.operand(0)->type().shape();
  site.form = form;
  fault_sites_.push_back(std::move(site));
  return static_cast<int>(fault_sites_.size() - 1);
}

llvm::Value *KernelLowering::vote_any(llvm::Value *failed) {
  llvm::Value *vote = builder.CreateZExt(failed, builder.getInt32Ty());
  if (!specialized_loop_)
    return builder.CreateICmpNE(
        builder.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0_or, {}, {vote}),
        builder.getInt32(0));
  // The consumers' barrier: the producer warpgroup has no part in it.
  auto *type = llvm::FunctionType::get(builder.getInt32Ty(),
                                       {builder.getInt32Ty()}, false);
  const std::string text =
      "{\n.reg .pred p, q;\nsetp.ne.u32 p, $1, 0;\nbar.red.or.pred q, " +
      std::to_string(kConsumersBarrier) + ", " +
      std::to_string(kWarpSize * num_warps) + ", p;\nselp.u32 $0, 1, 0, q;\n}";
  llvm::Value *any = builder.CreateCall(
      llvm::InlineAsm::get(type, text, "=r,r,~{memory}", true), {vote});
  return builder.CreateICmpNE(any, builder.getInt32(0));
}

void KernelLowering::fail_if(llvm::Value *failed, llvm::Value *lane, int site,
                             bool uniform) {
  llvm::Function *f = builder.GetInsertBlock()->getParent();
  auto unlikely = llvm::MDBuilder(context).createUnlikelyBranchWeights();
  auto *stop = llvm::BasicBlock::Create(context, "fault", f);
  auto *go_on = llvm::BasicBlock::Create(context, "no_fault", f);
  auto *reporter = llvm::BasicBlock::Create(context, "fault.report", f);
  auto *leave = llvm::BasicBlock::Create(context, "fault.return", f);
  if (uniform) {
    builder.CreateCondBr(failed, stop, go_on, unlikely);
    builder.SetInsertPoint(stop);
    builder.CreateCondBr(thread_is_first(builder), reporter, leave);
    builder.SetInsertPoint(reporter);
    report(builder, site, lane);
    builder.CreateBr(leave);
  } else {
    llvm::GlobalVariable *minimum = shared_lane(builder, f);
    // bar.red is a barrier like bar.sync: it orders the CTA's accesses.
    llvm::Value *any = vote_any(failed);
    set_barrier_state({false, false});
    builder.CreateCondBr(any, stop, go_on, unlikely);
    builder.SetInsertPoint(stop);
    auto *claim = llvm::BasicBlock::Create(context, "fault.claim", f);
    auto *claimed = llvm::BasicBlock::Create(context, "fault.claimed", f);
    builder.CreateCondBr(failed, claim, claimed);
    builder.SetInsertPoint(claim);
    builder.CreateAtomicRMW(llvm::AtomicRMWInst::UMin, minimum, lane,
                            llvm::Align(4), llvm::AtomicOrdering::Monotonic);
    builder.CreateBr(claimed);
    builder.SetInsertPoint(claimed);
    emit_barrier();
    builder.CreateCondBr(thread_is_first(builder), reporter, leave);
    builder.SetInsertPoint(reporter);
    report(builder, site, builder.CreateLoad(builder.getInt32Ty(), minimum));
    builder.CreateBr(leave);
  }
  builder.SetInsertPoint(leave);
  builder.CreateRetVoid();
  builder.SetInsertPoint(go_on);
}

} // namespace blocc::nvptx
