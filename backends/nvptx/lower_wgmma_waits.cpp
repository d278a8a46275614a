// When a dot on warpgroup MMAs is waited for. Its MMAs run in the tensor
// cores while the warpgroup goes on (lower_wgmma.cpp), and groups of them
// complete in the order they were committed: wgmma.wait_group N returns
// once at most the N groups committed last are still in flight. A dot's
// group is therefore waited for right before the first op that reads its
// result, not right after it is committed: what comes between, another
// dot's MMAs or arithmetic that does not need the result, overlaps with
// it. Attention's backward pass, for one, issues dV += P^T dO and goes on
// to dP^T = V dO^T while the first product runs, and waits for dP^T only
// where dS reads it, with dV's group still in flight.
//
// Only ops whose lowering writes registers alone, in straight-line code,
// may come between an MMA and its wait (a reduction within warps counts:
// its shuffles exchange registers, and attention's softmax of one block
// runs while the MMAs of another are in flight): shared memory written
// meanwhile (a conversion's scratch over a tile whose last reader was the dot)
// would change the MMA's operands under it, and a branch or a call
// between them makes ptxas serialize every warpgroup MMA of the kernel.
// Before any other op, and at the end of a block, every group is waited
// for: none stays in flight across control flow but a pipelined loop's
// accumulator, which its loop keeps in flight itself (loop_pipeline.h).
//
// A wait takes the registers of the groups it completes in and out (tied
// operands of its inline PTX), so that LLVM cannot read them before it.
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/kernel_lowering.h"

#include "ir/error.h"
#include "ir/opcode.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>

namespace blocc::nvptx {

namespace {

using ir::OpCode;

/// Whether lowering an op of this code writes registers alone, in
/// straight-line code, given that its results take one layout each (more
/// would convert between them, maybe through shared memory). A load
/// counts where its loop copied it into a stage ahead (`copied_ahead`):
/// it then reads the stage, or nothing at all.
bool writes_registers_only(OpCode code, bool copied_ahead) {
  switch (code) {
  case OpCode::Constant:
  case OpCode::ProgramId:
  case OpCode::NumPrograms:
  case OpCode::Arange:
  case OpCode::Splat:
  case OpCode::Broadcast:
  case OpCode::ExpandDims:
  case OpCode::MultipleOf:
  case OpCode::MaxContiguous:
  case OpCode::MaxConstancy:
    return true;
  case OpCode::Div:
  case OpCode::Rem:
  case OpCode::Sqrt:
  case OpCode::Sin:
  case OpCode::Cos:
    return false; // slow paths behind branches or calls
  case OpCode::Load:
  case OpCode::DescriptorLoad:
    return copied_ahead;
  default:
    // Elementwise ops compute in registers; the rest touch memory, threads
    // or control flow.
    return ir::is_elementwise(code);
  }
}

/// Whether a reduction's combine region computes in registers alone.
bool combines_in_registers(const ir::Block &region) {
  for (const auto &op : region.ops())
    if (op->code() != OpCode::Yield &&
        !writes_registers_only(op->code(), /*copied_ahead=*/false))
      return false;
  return true;
}

/// The inline-asm constraint of a register of `type`.
const char *register_constraint(llvm::Type *type) {
  if (type->isFloatTy())
    return "f";
  if (type->isIntegerTy(32))
    return "r";
  if (type->isDoubleTy())
    return "d";
  if (type->isIntegerTy(64))
    return "l";
  throw Error("internal: a warpgroup MMA's result has registers of no "
              "type a wait can take");
}

} // namespace

void KernelLowering::leave_mma_group_in_flight(
    const ir::Value *result, const Layout &home, Registers values,
    std::vector<llvm::Value *> operands) {
  const int id = layout_id(home);
  blocks_[{result, id}] = std::move(values);
  mma_groups_in_flight_.push_back({result, id, std::move(operands)});
}

void KernelLowering::wait_for_mmas_before(const ir::Operation &op) {
  if (mma_groups_in_flight_.empty())
    return;
  const bool copied_ahead =
      (op.code() == OpCode::Load || op.code() == OpCode::DescriptorLoad) &&
      (staged_operand(op.result()) || prefetched_.count(op.result()));
  // A view of a tile in a stage (attention backward's Q^T) lowers to
  // nothing at all.
  const bool staged_view =
      is_tile_view(op) && staged_operand(op.operand(0)) != nullptr;
  // A combine region's yield hands registers back to its reduction.
  const ir::Operation *owner = op.parent_block()->parent_op();
  const bool combined =
      op.code() == OpCode::Yield && owner && owner->code() == OpCode::Reduce;
  bool quiet = writes_registers_only(op.code(), copied_ahead) || staged_view ||
               combined ||
               (op.code() == OpCode::Dot && runs_on_warpgroups(op)) ||
               (op.code() == OpCode::Reduce && reduces_within_warps(op) &&
                combines_in_registers(*op.region(0)));
  for (const ir::Value *result : op.results())
    quiet = quiet && layouts_->layouts_of(result).size() <= 1;
  if (!quiet)
    return wait_for_warpgroup_mmas(0);
  // The groups up to the newest whose result `op` reads.
  size_t needed = 0;
  for (size_t i = 0; i < mma_groups_in_flight_.size(); ++i)
    for (const ir::Value *operand : op.operands())
      if (operand == mma_groups_in_flight_[i].result)
        needed = i + 1;
  if (needed)
    wait_for_warpgroup_mmas(
        static_cast<int>(mma_groups_in_flight_.size() - needed));
}

void KernelLowering::keep_alive_until_here(
    const std::vector<llvm::Value *> &operands) {
  // ptxas takes an MMA's A registers to be free once the MMA is issued:
  // reusing them for what runs meanwhile (attention's softmax), it waits
  // for the MMAs before the first reuse, right after they were issued.
  // Reading them here keeps them; seeded with the latest value computed,
  // the reads cannot move up past what comes before. The store they feed
  // never runs (a grid always has a z dimension), but ptxas cannot tell.
  llvm::Value *seed = builder.getInt32(0);
  for (auto it = builder.GetInsertBlock()->rbegin();
       it != builder.GetInsertBlock()->rend(); ++it) {
    // Not what an MMA or a wait gives (registers of MMAs in flight).
    if (llvm::isa<llvm::CallInst>(*it) ||
        llvm::isa<llvm::ExtractValueInst>(*it))
      continue;
    llvm::Type *type = it->getType();
    if (type->isFloatTy() || type->isIntegerTy(32)) {
      seed = type->isFloatTy()
                 ? builder.CreateBitCast(&*it, builder.getInt32Ty())
                 : static_cast<llvm::Value *>(&*it);
      break;
    }
  }
  std::string text = "{\n.reg .b32 x;\n.reg .u32 z;\n.reg .pred q;\n"
                     "mov.b32 x, $0;\n";
  std::string constraints = "r";
  std::vector<llvm::Value *> inputs = {seed};
  for (llvm::Value *operand : operands) {
    text += "xor.b32 x, x, $" + std::to_string(inputs.size()) + ";\n";
    constraints += "," + std::string(register_constraint(operand->getType()));
    inputs.push_back(operand);
  }
  text += "mov.u32 z, %nctaid.z;\nsetp.eq.u32 q, z, 0;\n@q st.shared.b32 [$" +
          std::to_string(inputs.size()) + "], x;\n}";
  constraints += ",r";
  inputs.push_back(builder.getInt32(0));
  inline_ptx(builder, text, constraints, inputs);
}

void KernelLowering::wait_for_warpgroup_mmas(int pending, int untracked) {
  const std::string text =
      "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";";
  const size_t kept = static_cast<size_t>(std::max(0, pending - untracked));
  const size_t completed = mma_groups_in_flight_.size() > kept
                               ? mma_groups_in_flight_.size() - kept
                               : 0;
  std::vector<Registers *> blocks;
  std::vector<llvm::Value *> tied, read;
  for (size_t i = 0; i < completed; ++i) {
    const MmaGroupInFlight &group = mma_groups_in_flight_[i];
    blocks.push_back(&blocks_.at({group.result, group.home}));
    tied.insert(tied.end(), blocks.back()->begin(), blocks.back()->end());
    read.insert(read.end(), group.operands.begin(), group.operands.end());
  }
  mma_groups_in_flight_.erase(mma_groups_in_flight_.begin(),
                              mma_groups_in_flight_.begin() +
                                  static_cast<std::ptrdiff_t>(completed));
  if (!read.empty())
    keep_alive_until_here(read);
  if (tied.empty())
    return ordering_ptx(text);
  std::string constraints;
  std::vector<llvm::Type *> types;
  for (size_t i = 0; i < tied.size(); ++i) {
    constraints +=
        std::string(i ? ",=" : "=") + register_constraint(tied[i]->getType());
    types.push_back(tied[i]->getType());
  }
  for (size_t i = 0; i < tied.size(); ++i)
    constraints += "," + std::to_string(i);
  constraints += ",~{memory}";
  llvm::Type *result_type =
      tied.size() == 1 ? types[0] : llvm::StructType::get(context, types);
  auto *signature = llvm::FunctionType::get(result_type, types, false);
  llvm::Value *out =
      builder.CreateCall(llvm::InlineAsm::get(signature, text, constraints,
                                              /*hasSideEffects=*/true),
                         tied);
  unsigned next = 0;
  for (Registers *block : blocks)
    for (llvm::Value *&r : *block)
      r = tied.size() == 1 ? out : builder.CreateExtractValue(out, next++);
}

} // namespace blocc::nvptx
