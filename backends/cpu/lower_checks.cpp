// Checked mode (BLOCC_CHECK): bounds checks before every load, store and
// atomic touches memory, and the store records of write-race detection.
//
// Each access is checked against the buffers of the kernel arguments its
// pointer derives from (pointer_provenance.h), whose bounds the program
// loads once from its ProgramState (runtime/cpu/program_abi.h). A lane
// fails when it is active and its element does not lie wholly in one of
// those buffers, or its address is not a multiple of the element size; a
// failing chunk calls the access hook with its first failing lane, which
// writes the interpreter's message, and the program stops.
//
// Cost: a rank-1 access whose lanes axis info proves consecutive over the
// whole block (x + pid * BLOCK + arange) is checked once per program: when
// the whole block lies in its buffer, masked lanes or not, its chunks are
// not checked (a store with such loads skips its check loop). Otherwise a
// chunk the axis info proves contiguous is one compare when it lies wholly
// in its buffer; only a chunk at the edge of its buffer tests its first and
// last active lanes (the lanes between them lie between them). Gathers,
// scatters and atomics compare every lane in vectors. Reports are on cold
// paths.
//
// Order: stores check all their chunks in a loop of their own before the
// first element is written, together with the loads their values, addresses
// and masks come from (LLVM drops those loads there, keeping the checks),
// so that a faulting store writes nothing, as in the interpreter; the store
// loop then does not check those loads again. Other loads are checked where
// they are evaluated, chunk by chunk inside whatever consumes them.
#include "backends/cpu/kernel_lowering.h"

#include "backends/cpu/pointer_provenance.h"
#include "backends/llvm/llvm_types.h"

#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

namespace blocc::cpu {

using ir::OpCode;

namespace {

/// ProgramState::bounds, counted in 8-byte fields from the start.
constexpr uint64_t kBoundsField = 7;

/// The pointer arguments an access's lanes are checked against.
std::vector<int> candidates_of(const ir::Function &kernel,
                               const AccessSite &site) {
  if (!site.by_address)
    return site.arguments;
  std::vector<int> all;
  for (size_t i = 0; i < kernel.num_arguments(); ++i)
    if (kernel.argument(i)->type().is_pointer())
      all.push_back(static_cast<int>(i));
  return all;
}

/// i1 (or <vl x i1>, lane by lane) for accesses of `span` bytes (one
/// element's by default) at `address` (i64 or <vl x i64>) that fail the
/// checks of `site`, ignoring masks.
llvm::Value *failing(KernelLowering &l, const AccessSite &site,
                     llvm::Value *address, int64_t span = 0) {
  llvm::IRBuilder<> &b = l.builder;
  auto *vector = llvm::dyn_cast<llvm::FixedVectorType>(address->getType());
  auto widen = [&](llvm::Value *x) {
    return vector ? b.CreateVectorSplat(vector->getNumElements(), x) : x;
  };
  llvm::Value *bytes =
      b.getInt64(static_cast<uint64_t>(span > 0 ? span : site.bytes));
  llvm::Value *inside = nullptr;
  for (int c : candidates_of(l.kernel, site)) {
    const KernelLowering::ArgumentBounds &bounds =
        l.argument_bounds.at(static_cast<size_t>(c));
    // The last offset an element may start at; none when the buffer is
    // smaller than one element.
    llvm::Value *fits = b.CreateICmpUGE(bounds.size, bytes);
    llvm::Value *last = b.CreateSub(bounds.size, bytes);
    llvm::Value *offset = b.CreateSub(address, widen(bounds.begin));
    llvm::Value *in =
        b.CreateAnd(b.CreateICmpULE(offset, widen(last)), widen(fits));
    inside = inside ? b.CreateOr(inside, in) : in;
  }
  llvm::Value *fails =
      inside ? b.CreateNot(inside)
             : llvm::ConstantInt::getTrue(
                   vector ? static_cast<llvm::Type *>(llvm::VectorType::get(
                                b.getInt1Ty(), vector->getElementCount()))
                          : b.getInt1Ty());
  if (site.bytes > 1) {
    llvm::Value *low_bits = b.CreateAnd(
        address, widen(b.getInt64(static_cast<uint64_t>(site.bytes - 1))));
    fails =
        b.CreateOr(fails, b.CreateICmpNE(low_bits, llvm::Constant::getNullValue(
                                                       address->getType())));
  }
  return fails;
}

/// Branches to a cold block where `report` emits the hook call when
/// `failed` (i1) holds; the program then returns 1.
void report_if(KernelLowering &l, llvm::Value *failed,
               const std::function<void()> &report) {
  llvm::IRBuilder<> &b = l.builder;
  auto *cold = llvm::BasicBlock::Create(l.context, "access.fault", l.function);
  auto *next = llvm::BasicBlock::Create(l.context, "access.ok", l.function);
  b.CreateCondBr(failed, cold, next,
                 llvm::MDBuilder(l.context).createUnlikelyBranchWeights());
  b.SetInsertPoint(cold);
  report();
  b.CreateBr(l.fail_block);
  b.SetInsertPoint(next);
}

void call_access_hook(KernelLowering &l, int site, llvm::Value *lane,
                      llvm::Value *address) {
  llvm::IRBuilder<> &b = l.builder;
  llvm::FunctionCallee hook = l.module.getOrInsertFunction(
      "blocc_cpu_access_fault",
      llvm::FunctionType::get(
          b.getVoidTy(),
          {b.getPtrTy(), b.getInt32Ty(), b.getInt64Ty(), b.getInt64Ty()},
          false));
  b.CreateCall(hook, {l.program, b.getInt32(site), lane, address});
}

/// The hook call for the first lane of `fails` (<vl x i1>, masked), whose
/// addresses are `addresses` (<vl x i64>).
void report_first_failing(KernelLowering &l, int site, llvm::Value *fails,
                          llvm::Value *addresses, const Lanes &lanes, int vl) {
  llvm::IRBuilder<> &b = l.builder;
  llvm::Value *k = l.first_set_lane(fails, vl);
  llvm::Value *lane = b.CreateZExt(
      b.CreateExtractElement(l.lane_indices(lanes, vl), k), b.getInt64Ty());
  call_access_hook(l, site, lane, b.CreateExtractElement(addresses, k));
}

} // namespace

void KernelLowering::load_argument_bounds() {
  llvm::Value *field =
      builder.CreateConstGEP1_64(builder.getInt64Ty(), program, kBoundsField);
  llvm::Value *table = builder.CreateLoad(builder.getPtrTy(), field);
  argument_bounds.assign(kernel.num_arguments(), {});
  for (size_t i = 0; i < kernel.num_arguments(); ++i) {
    if (!kernel.argument(i)->type().is_pointer())
      continue;
    auto load = [&](uint64_t slot) {
      return builder.CreateLoad(builder.getInt64Ty(),
                                builder.CreateConstGEP1_64(
                                    builder.getInt64Ty(), table, 2 * i + slot));
    };
    argument_bounds[i] = {load(0), load(1)};
  }
}

int KernelLowering::access_site(const ir::Operation &op) {
  auto found = access_sites.find(&op);
  if (found != access_sites.end())
    return found->second;
  const ir::Value *pointer = op.operand(0);
  AccessSite site;
  site.kind = op.code() == OpCode::Load    ? AccessSite::Kind::Load
              : op.code() == OpCode::Store ? AccessSite::Kind::Store
                                           : AccessSite::Kind::Atomic;
  site.op = op.describe();
  site.element = pointer->type().pointee();
  site.bytes = llvm_backend::storage_bytes(site.element);
  if (pointer->type().is_block())
    site.shape = pointer->type().shape();
  PointerOrigins origins = pointer_origins(kernel, pointer);
  site.arguments = std::move(origins.arguments);
  site.by_address = origins.by_address;
  info.accesses.push_back(std::move(site));
  int number = static_cast<int>(info.accesses.size() - 1);
  access_sites.emplace(&op, number);
  return number;
}

void KernelLowering::check_chunk(int site, Chunk &chunk,
                                 const ir::Value *pointer, llvm::Value *mask,
                                 const Lanes &lanes, bool contiguous) {
  const AccessSite &access = info.accesses.at(static_cast<size_t>(site));
  int vl = chunk.vl;
  llvm::Type *i64 = builder.getInt64Ty();
  llvm::Value *bytes = builder.getInt64(static_cast<uint64_t>(access.bytes));
  if (contiguous && !access.by_address && access.arguments.size() == 1) {
    // One buffer and consecutive lanes. Most chunks lie wholly in the
    // buffer: one compare says so, whatever the mask.
    llvm::Value *first =
        builder.CreatePtrToInt(first_lane_address(chunk, pointer, lanes), i64);
    llvm::Value *whole =
        failing(*this, access, first, int64_t{vl} * access.bytes);
    auto all_lanes = [&] {
      llvm::Value *offsets = builder.CreateMul(
          builder.CreateZExt(iota(vl), vector_of(i64, vl)), splat(vl, bytes));
      return builder.CreateAdd(splat(vl, first), offsets);
    };
    if (!mask) {
      report_if(*this, whole, [&] {
        llvm::Value *all = all_lanes();
        report_first_failing(*this, site, failing(*this, access, all), all,
                             lanes, vl);
      });
      return;
    }
    // Else (a chunk at a buffer's edge) the active lanes lie between the
    // first and the last active one.
    auto *edge = llvm::BasicBlock::Create(context, "access.edge", function);
    auto *checked =
        llvm::BasicBlock::Create(context, "access.inside", function);
    builder.CreateCondBr(
        whole, edge, checked,
        llvm::MDBuilder(context).createUnlikelyBranchWeights());
    builder.SetInsertPoint(edge);
    llvm::Value *bits = builder.CreateBitCast(mask, builder.getIntNTy(vl));
    llvm::Value *any = builder.CreateICmpNE(
        bits, llvm::Constant::getNullValue(bits->getType()));
    llvm::Value *low =
        builder.CreateZExt(builder.CreateBinaryIntrinsic(
                               llvm::Intrinsic::cttz, bits, builder.getFalse()),
                           i64);
    llvm::Value *high = builder.CreateSub(
        builder.getInt64(static_cast<uint64_t>(vl - 1)),
        builder.CreateZExt(builder.CreateBinaryIntrinsic(
                               llvm::Intrinsic::ctlz, bits, builder.getFalse()),
                           i64));
    llvm::Value *bad = builder.CreateAnd(
        any,
        builder.CreateOr(
            failing(*this, access,
                    builder.CreateAdd(first, builder.CreateMul(low, bytes))),
            failing(*this, access,
                    builder.CreateAdd(first, builder.CreateMul(high, bytes)))));
    report_if(*this, bad, [&] {
      llvm::Value *all = all_lanes();
      llvm::Value *fails = builder.CreateAnd(failing(*this, access, all), mask);
      report_first_failing(*this, site, fails, all, lanes, vl);
    });
    builder.CreateBr(checked);
    builder.SetInsertPoint(checked);
    return;
  }
  llvm::Value *all = builder.CreatePtrToInt(evaluate(chunk, pointer, lanes),
                                            vector_of(i64, vl));
  llvm::Value *fails = failing(*this, access, all);
  if (mask)
    fails = builder.CreateAnd(fails, mask);
  report_if(*this, builder.CreateOrReduce(fails),
            [&] { report_first_failing(*this, site, fails, all, lanes, vl); });
}

llvm::Value *KernelLowering::block_in_bounds(const ir::Operation &op) {
  const ir::Value *pointer = op.operand(0);
  const ir::Type &type = pointer->type();
  if (!type.is_block() || type.rank() != 1 || lazily_reads_memory(pointer) ||
      axis_info.get(pointer).contiguity[0] < type.dim(0))
    return nullptr;
  const AccessSite &access =
      info.accesses.at(static_cast<size_t>(access_site(op)));
  if (access.by_address || access.arguments.size() != 1)
    return nullptr;
  // Lanes 0 .. n-1 are consecutive: the block is [first, first + n elements).
  Chunk one{1, {}};
  llvm::Value *first = builder.CreatePtrToInt(
      builder.CreateExtractElement(
          evaluate(one, pointer, Lanes::contiguous(i32(0))), uint64_t{0}),
      builder.getInt64Ty());
  return builder.CreateNot(
      failing(*this, access, first, type.num_elements() * access.bytes));
}

void KernelLowering::unless(llvm::Value *skip,
                            const std::function<void()> &emit) {
  if (!skip)
    return emit();
  auto *work = llvm::BasicBlock::Create(context, "check", function);
  auto *done = llvm::BasicBlock::Create(context, "checked", function);
  builder.CreateCondBr(skip, done, work);
  builder.SetInsertPoint(work);
  emit();
  builder.CreateBr(done);
  builder.SetInsertPoint(done);
}

void KernelLowering::check_lane(int site, llvm::Value *address,
                                llvm::Value *active, llvm::Value *lane) {
  const AccessSite &access = info.accesses.at(static_cast<size_t>(site));
  llvm::Value *at = builder.CreatePtrToInt(address, builder.getInt64Ty());
  llvm::Value *bad = failing(*this, access, at);
  if (active)
    bad = builder.CreateAnd(active, bad);
  report_if(*this, bad, [&] { call_access_hook(*this, site, lane, at); });
}

void KernelLowering::record_stores(int site, llvm::Value *addresses,
                                   llvm::Value *data, llvm::Value *mask,
                                   const Lanes &lanes, int vl) {
  const AccessSite &access = info.accesses.at(static_cast<size_t>(site));
  llvm::Type *i64 = builder.getInt64Ty();
  llvm::Type *words = vector_of(i64, vl);
  llvm::Value *bits = builder.CreateBitCast(
      data,
      vector_of(builder.getIntNTy(8 * static_cast<unsigned>(access.bytes)),
                vl));
  if (access.bytes < 8)
    bits = builder.CreateZExt(bits, words);
  llvm::Type *bytes = vector_of(builder.getInt8Ty(), vl);
  llvm::Value *active =
      mask ? builder.CreateZExt(mask, bytes) : llvm::ConstantInt::get(bytes, 1);
  llvm::Value *indices = lane_indices(lanes, vl);
  std::vector<llvm::Value *> arrays;
  for (llvm::Value *v :
       {builder.CreatePtrToInt(addresses, words), bits, active, indices}) {
    llvm::AllocaInst *array = entry_variable(v->getType());
    builder.CreateStore(v, array);
    arrays.push_back(array);
  }
  llvm::FunctionCallee hook = module.getOrInsertFunction(
      "blocc_cpu_record_stores",
      llvm::FunctionType::get(builder.getInt32Ty(),
                              {builder.getPtrTy(), builder.getInt32Ty(),
                               builder.getInt32Ty(), builder.getPtrTy(),
                               builder.getPtrTy(), builder.getPtrTy(),
                               builder.getPtrTy()},
                              false));
  llvm::Value *raced = builder.CreateCall(
      hook, {program, builder.getInt32(site), builder.getInt32(vl), arrays[0],
             arrays[1], arrays[2], arrays[3]});
  auto *next = llvm::BasicBlock::Create(context, "stores.recorded", function);
  builder.CreateCondBr(builder.CreateICmpNE(raced, builder.getInt32(0)),
                       fail_block, next,
                       llvm::MDBuilder(context).createUnlikelyBranchWeights());
  builder.SetInsertPoint(next);
}

} // namespace blocc::cpu
