#include "backends/cpu/kernel_lowering.h"

#include "backends/llvm/llvm_types.h"
#include "backends/llvm/narrow_float.h"
#include "ir/error.h"

#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

namespace blocc::cpu {

using ir::OpCode;
using ir::Scalar;

KernelLowering::KernelLowering(const ir::Function &kernel, llvm::Module &module,
                               const HostTarget &target, KernelInfo &info)
    : kernel(kernel), module(module), context(module.getContext()),
      builder(module.getContext()), target(target), info(info),
      axis_info(kernel), liveness(kernel) {}

// ---- Types ------------------------------------------------------------------

llvm::Type *KernelLowering::storage_type(Scalar s) {
  return llvm_backend::storage_type(context, s);
}

llvm::Type *KernelLowering::register_type(Scalar s) {
  return llvm_backend::register_type(context, s);
}

llvm::Type *KernelLowering::vector_of(llvm::Type *element, int vl) {
  return llvm::FixedVectorType::get(element, vl);
}

// ---- Values
// -------------------------------------------------------------------

llvm::Value *KernelLowering::scalar(const ir::Value *v) {
  auto it = scalars_.find(v);
  if (it == scalars_.end())
    throw Error("internal: the CPU backend has no value for a scalar of type " +
                v->type().str());
  return it->second;
}

void KernelLowering::set_scalar(const ir::Value *v, llvm::Value *x) {
  scalars_[v] = x;
}

bool KernelLowering::is_materialized(const ir::Value *v) const {
  auto it = blocks_.find(v);
  return it != blocks_.end() && it->second.slot != nullptr;
}

KernelLowering::BlockState &KernelLowering::state(const ir::Value *v) {
  auto it = blocks_.find(v);
  if (it == blocks_.end())
    throw Error("internal: the CPU backend has no state for a block of type " +
                v->type().str());
  return it->second;
}

void KernelLowering::set_materialized(const ir::Value *v, llvm::Value *slot) {
  blocks_[v] = BlockState{slot, false, false};
}

void KernelLowering::set_lazy(const ir::Value *v, bool reads_memory,
                              bool expensive) {
  blocks_[v] = BlockState{nullptr, reads_memory, expensive};
  if (reads_memory)
    pending_loads_.push_back(v);
}

void KernelLowering::unsupported(const ir::Operation &op,
                                 const std::string &why) const {
  throw Error("the CPU backend cannot compile kernel '" + kernel.name() +
              "': " + op.describe() + ": " + why);
}

// ---- Materialization policy
// -----------------------------------------------------

namespace {

/// Ops whose consumers read their operand's elements from memory.
bool needs_operand_in_memory(OpCode code) {
  switch (code) {
  case OpCode::Permute:
  case OpCode::Join:
  case OpCode::Split:
  case OpCode::Cat:
  case OpCode::AtomicRmw:
  case OpCode::AtomicCas:
  case OpCode::Print:
    return true;
  default:
    return false;
  }
}

/// Work worth computing once: memory reads, divisions, math functions.
bool is_expensive(const ir::Operation &op) {
  OpCode c = op.code();
  if (c == OpCode::Load || c == OpCode::Rem)
    return true;
  if (c == OpCode::Div)
    return true;
  return ir::is_unary_math(c) && c != OpCode::Floor && c != OpCode::Ceil;
}

} // namespace

bool KernelLowering::should_materialize(const ir::Value *v) const {
  const BlockState &s = blocks_.at(v);
  if (s.slot)
    return false;
  const auto &users = liveness.users(v);
  for (const ir::Operation *user : users)
    if (needs_operand_in_memory(user->code()))
      return true;
  if (!s.expensive)
    return false;
  if (users.size() > 1)
    return true;
  for (const ir::Operation *user : users) {
    // A broadcast reads each element many times; a loop body every
    // iteration.
    if (user->code() == OpCode::Broadcast)
      return true;
    if (user->parent_block() != v->owner_block())
      return true;
  }
  return false;
}

void KernelLowering::flush_pending_loads() {
  // Afterwards every pending value is materialized or read by nothing
  // later: none stays pending.
  for (const ir::Value *v : pending_loads_) {
    auto it = blocks_.find(v);
    if (it == blocks_.end() || it->second.slot)
      continue;
    if (liveness.last_use(v) <= current_position)
      continue; // read by nothing after this op
    if (v->owner_block() != current_block)
      throw Error("internal: a pending load of an enclosing region was not "
                  "evaluated before the region");
    materialize(v);
  }
  pending_loads_.clear();
}

void KernelLowering::materialize(const ir::Value *v) {
  llvm::Value *slot = allocate_slot_for(v->type());
  evaluate_into(v, slot);
  set_materialized(v, slot);
}

void KernelLowering::evaluate_into(const ir::Value *v, llvm::Value *slot) {
  const ir::Type &type = v->type();
  int vl = vector_width(type);
  chunk_loop(type.num_elements(), vl, [&](llvm::Value *base) {
    Chunk chunk{vl, {}};
    llvm::Value *x = evaluate(chunk, v, Lanes::contiguous(base));
    write_slot(slot, type.element(), base, x);
  });
}

llvm::Value *KernelLowering::materialized_slot(const ir::Value *v) {
  BlockState &s = state(v);
  if (s.slot)
    return s.slot;
  if (v->owner_block() == current_block) {
    materialize(v);
    return state(v).slot;
  }
  llvm::Value *slot = allocate_slot_for(v->type());
  evaluate_into(v, slot);
  return slot;
}

llvm::Value *KernelLowering::evaluate(Chunk &chunk, const ir::Value *v,
                                      const Lanes &lanes) {
  if (!v->type().is_block())
    return splat(chunk.vl, scalar(v));
  auto key =
      std::make_tuple(v, static_cast<int>(lanes.kind), lanes.base, lanes.index);
  auto found = chunk.memo.find(key);
  if (found != chunk.memo.end())
    return found->second;
  const BlockState &s = state(v);
  llvm::Value *result;
  if (s.slot) {
    result = read_slot(s.slot, v->type().element(), lanes, chunk.vl);
  } else {
    const ir::Operation *op = v->defining_op();
    if (!op)
      throw Error("internal: a lazy block argument");
    switch (op->code()) {
    case OpCode::Constant:
      result = splat(chunk.vl, constant_value(*op));
      break;
    case OpCode::Splat:
      result = splat(chunk.vl, scalar(op->operand(0)));
      break;
    case OpCode::Arange:
      result = builder.CreateAdd(lane_indices(lanes, chunk.vl),
                                 splat(chunk.vl, i32(op->int_attr("start"))));
      break;
    case OpCode::ExpandDims:
    case OpCode::Reshape:
    case OpCode::MultipleOf:
    case OpCode::MaxContiguous:
    case OpCode::MaxConstancy:
    case OpCode::ConvertLayout:
      // The same elements in the same (flat) order (a scalar operand is
      // the one element of a block of one).
      result = evaluate(chunk, op->operand(0), lanes);
      break;
    case OpCode::Broadcast:
      if (!op->operand(0)->type().is_block()) {
        result = splat(chunk.vl, scalar(op->operand(0)));
        break;
      }
      result = evaluate(chunk, op->operand(0),
                        broadcast_lanes(lanes, chunk.vl,
                                        op->result()->type().shape(),
                                        op->operand(0)->type().shape()));
      break;
    case OpCode::Permute:
    case OpCode::Join:
    case OpCode::Split:
    case OpCode::Cat:
      result = remap_vector(chunk, v, lanes);
      break;
    case OpCode::Load:
      result = load_vector(chunk, *op, lanes);
      break;
    default:
      result = elementwise_vector(chunk, *op, lanes);
      break;
    }
  }
  chunk.memo[key] = result;
  return result;
}

// ---- Faults
// ---------------------------------------------------------------------

int KernelLowering::add_fault_site(const ir::Operation &op, std::string message,
                                   std::vector<int64_t> shape,
                                   FaultSite::Form form) {
  info.faults.push_back(
      FaultSite{op.describe(), std::move(message), std::move(shape), form});
  return static_cast<int>(info.faults.size() - 1);
}

void KernelLowering::fail_if(llvm::Value *failed, int site,
                             const std::function<llvm::Value *()> &lane) {
  llvm::BasicBlock *report =
      llvm::BasicBlock::Create(context, "fault", function);
  llvm::BasicBlock *next = llvm::BasicBlock::Create(context, "ok", function);
  builder.CreateCondBr(failed, report, next,
                       llvm::MDBuilder(context).createUnlikelyBranchWeights());
  builder.SetInsertPoint(report);
  llvm::FunctionCallee hook = module.getOrInsertFunction(
      "blocc_cpu_fault",
      llvm::FunctionType::get(
          builder.getVoidTy(),
          {builder.getPtrTy(), builder.getInt32Ty(), builder.getInt64Ty()},
          false));
  builder.CreateCall(hook, {program, builder.getInt32(site), lane()});
  builder.CreateBr(fail_block);
  builder.SetInsertPoint(next);
}

llvm::Value *KernelLowering::first_set_lane(llvm::Value *mask, int vl) {
  llvm::Value *bits = builder.CreateBitCast(mask, builder.getIntNTy(vl));
  llvm::Value *lane = builder.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, bits,
                                                    builder.getTrue());
  return builder.CreateZExtOrTrunc(lane, builder.getInt64Ty());
}

// ---- The walk
// ---------------------------------------------------------------------

void KernelLowering::lower_arguments() {
  for (size_t i = 0; i < kernel.num_arguments(); ++i) {
    const ir::Value *arg = kernel.argument(i);
    const ir::Type &type = arg->type();
    if (type.is_block())
      throw Error("the CPU backend cannot compile kernel '" + kernel.name() +
                  "': argument " + std::to_string(i) +
                  " is a block; kernel arguments are scalars and pointers");
    llvm::Value *address =
        builder.CreateConstGEP1_64(builder.getInt64Ty(), args, i);
    llvm::Value *raw = builder.CreateLoad(builder.getInt64Ty(), address);
    Scalar s = type.element();
    llvm::Value *value;
    if (type.is_pointer()) {
      value = builder.CreateIntToPtr(raw, builder.getPtrTy());
    } else if (s == Scalar::I1) {
      value = builder.CreateICmpNE(raw, i64(0));
    } else if (ir::is_integer(s)) {
      value = builder.CreateTrunc(raw, register_type(s));
    } else {
      // Float arguments arrive as doubles, rounded once to their type.
      llvm::Value *d = builder.CreateBitCast(raw, builder.getDoubleTy());
      if (ir::is_fp8(s))
        throw Error("the CPU backend cannot compile kernel '" + kernel.name() +
                    "': fp8 arguments are not supported");
      value =
          s == Scalar::F64 ? d : llvm_backend::narrow_from_f64(builder, d, s);
    }
    set_scalar(arg, value);
  }
}

void KernelLowering::lower_block(const ir::Block &block) {
  const ir::Block *saved_block = current_block;
  size_t saved_pending = pending_loads_.size();
  current_block = &block;
  for (const auto &owned : block.ops()) {
    const ir::Operation &op = *owned;
    if (op.code() == OpCode::Yield)
      break; // the region's op handles what it yields
    current_position = liveness.position(&op);
    if (op.code() == OpCode::Return) {
      builder.CreateRet(builder.getInt32(0));
      break;
    }
    lower_op(op);
  }
  current_block = saved_block;
  // Lazy values of the region are dead outside it.
  if (pending_loads_.size() > saved_pending)
    pending_loads_.resize(saved_pending);
}

void KernelLowering::set_lazy_from_operands(const ir::Operation &op,
                                            bool reads_memory, bool expensive) {
  for (const ir::Value *operand : op.operands()) {
    if (!operand->type().is_block())
      continue;
    const BlockState &s = state(operand);
    if (!s.slot) {
      reads_memory |= s.reads_memory;
      expensive |= s.expensive;
    }
  }
  for (const ir::Value *r : op.results())
    set_lazy(r, reads_memory, expensive);
}

void KernelLowering::define_block_result(const ir::Operation &op) {
  for (const ir::Value *r : op.results())
    if (r->type().is_block() && !is_materialized(r) && should_materialize(r) &&
        !materialized_by_next_reduce(r))
      materialize(r);
}

// Over 100 lines for a reason: the table from each op code to its
// lowering, a line or two a case; split up, it would be read in pieces.
void KernelLowering::lower_op(const ir::Operation &op) {
  OpCode code = op.code();
  const bool block_result =
      op.num_results() > 0 && op.result()->type().is_block();
  auto lazy_from_operands = [&](bool reads_memory, bool expensive) {
    set_lazy_from_operands(op, reads_memory, expensive);
  };
  switch (code) {
  case OpCode::ProgramId:
  case OpCode::NumPrograms: {
    int64_t axis = op.int_attr("axis");
    int64_t field = (code == OpCode::ProgramId ? 0 : 3) + axis;
    llvm::Value *address =
        builder.CreateConstGEP1_64(builder.getInt64Ty(), program, field);
    set_scalar(
        op.result(),
        builder.CreateTrunc(builder.CreateLoad(builder.getInt64Ty(), address),
                            builder.getInt32Ty()));
    return;
  }
  case OpCode::Constant:
    if (!block_result)
      return set_scalar(op.result(), constant_value(op));
    lazy_from_operands(false, false);
    return;
  case OpCode::Arange:
    lazy_from_operands(false, false);
    return define_block_result(op);
  case OpCode::Splat:
  case OpCode::Broadcast:
  case OpCode::ExpandDims:
  case OpCode::Reshape:
  case OpCode::Permute:
  case OpCode::Join:
  case OpCode::Split:
  case OpCode::Cat:
    return lower_shape_op(op);
  case OpCode::MultipleOf:
  case OpCode::MaxContiguous:
  case OpCode::MaxConstancy:
  case OpCode::ConvertLayout: // one placement of a block on the CPU
    if (!block_result)
      return set_scalar(op.result(), scalar(op.operand(0)));
    lazy_from_operands(false, false);
    return define_block_result(op);
  case OpCode::Load:
    if (!block_result)
      return lower_scalar_load(op);
    if (info.check_bounds)
      loads_in_bounds[&op] = block_in_bounds(op);
    lazy_from_operands(true, true);
    return define_block_result(op);
  case OpCode::Store:
    flush_pending_loads();
    if (!op.operand(0)->type().is_block())
      return lower_scalar_store(op);
    return lower_store(op);
  case OpCode::AtomicRmw:
  case OpCode::AtomicCas:
    flush_pending_loads();
    lower_atomic(op);
    return define_block_result(op);
  case OpCode::Reduce:
    lower_reduce(op);
    return define_block_result(op);
  case OpCode::Scan:
    lower_scan(op);
    return define_block_result(op);
  case OpCode::Dot:
    lower_dot(op);
    return define_block_result(op);
  case OpCode::Print:
    return lower_print(op);
  case OpCode::Assert:
    return lower_assert(op);
  case OpCode::For:
    flush_pending_loads();
    lower_for(op);
    return define_block_result(op);
  case OpCode::If:
    flush_pending_loads();
    lower_if(op);
    return define_block_result(op);
  case OpCode::Yield:
  case OpCode::Return:
    throw Error("internal: a terminator in the middle of a block");
  default:
    break;
  }
  if (!ir::is_elementwise(code))
    unsupported(op, "this operation is not supported yet");
  if (!block_result)
    return lower_scalar_elementwise(op);
  if (is_integer_division(op)) {
    // Computed where it stands, so that a zero divisor is reported here.
    lazy_from_operands(false, false);
    materialize(op.result());
    return;
  }
  lazy_from_operands(false, is_expensive(op));
  define_block_result(op);
}

llvm::Function *KernelLowering::lower(const std::string &symbol) {
  llvm::Type *ptr = builder.getPtrTy();
  auto *type =
      llvm::FunctionType::get(builder.getInt32Ty(), {ptr, ptr, ptr}, false);
  function = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                    symbol, module);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  function->addFnAttr("target-cpu", target.cpu);
  function->addFnAttr("target-features", target.features);
  if (target.vector_bits >= 512) {
    // Without these, LLVM splits 512-bit vectors on CPUs it tunes for
    // 256-bit code; the lowering already chose the width it wants.
    function->addFnAttr("prefer-vector-width", "512");
    function->addFnAttr("min-legal-vector-width", "512");
  }
  args = function->getArg(0);
  program = function->getArg(1);
  scratch = function->getArg(2);
  for (int i = 0; i < 3; ++i)
    function->addParamAttr(i, llvm::Attribute::NoAlias);
  auto *entry = llvm::BasicBlock::Create(context, "entry", function);
  fail_block = llvm::BasicBlock::Create(context, "failed", function);
  builder.SetInsertPoint(fail_block);
  builder.CreateRet(builder.getInt32(1));
  builder.SetInsertPoint(entry);
  lower_arguments();
  for (size_t i = 0; i < kernel.num_arguments(); ++i) {
    info.argument_names.push_back(kernel.argument_info(i).name);
    info.pointer_arguments.push_back(kernel.argument(i)->type().is_pointer());
  }
  if (info.check_bounds)
    load_argument_bounds();
  lower_block(kernel.body());
  if (!builder.GetInsertBlock()->getTerminator())
    builder.CreateRet(builder.getInt32(0));
  info.scratch_bytes = static_cast<size_t>(scratch_used);
  return function;
}

} // namespace blocc::cpu
