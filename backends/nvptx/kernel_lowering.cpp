#include "backends/nvptx/kernel_lowering.h"

#include "backends/llvm/llvm_types.h"
#include "backends/llvm/narrow_float.h"
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/kernel_abi.h"
#include "backends/nvptx/shape_layouts.h"
#include "backends/nvptx/unobserved_zero_signs.h"
#include "backends/nvptx/warp_specialize.h"
#include "ir/error.h"

#include <limits>

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

namespace blocc::nvptx {

using ir::OpCode;
using ir::Scalar;

KernelLowering::KernelLowering(const ir::Function &kernel, llvm::Module &module,
                               int num_warps, const GpuArch &arch)
    : kernel(kernel), module(module), context(module.getContext()),
      builder(module.getContext()), axis_info(kernel), num_warps(num_warps),
      arch(arch) {
  check_supported(kernel, axis_info);
  verify_gpu_ir(kernel, num_warps, arch);
  layouts_ = LayoutAssignment::of(kernel, axis_info, num_warps, arch);
  nan_bits_unobserved_ = results_with_unobserved_nan_bits(kernel);
  narrows_of_hardware_nans_ = narrows_of_hardware_nans(kernel);
  zero_signs_unobserved_ = results_with_unobserved_zero_signs(kernel);
  in_streaming_loop_ = loads_in_streaming_loops(kernel);
  pipelined_loops_ = plan_pipelined_loops(kernel, *layouts_, axis_info);
  warpgroup_mma_ = uses_warpgroup_mma(kernel);
  specialized_loop_ = warp_specialized_loop(kernel);
  if (specialized_loop_) {
    std::string why = why_not_warp_specialized(
        kernel, *specialized_loop_, pipelined_loop(*specialized_loop_),
        axis_info, num_warps);
    if (!why.empty())
      throw Error(specialized_loop_->describe() +
                  ": warp_specialize cannot be followed: " + why);
  }
  kernel.walk([&](const ir::Operation &op) {
    if (!copied_by_tma(op))
      return;
    tma_index_[&op] = tma_copies_.size();
    tma_copies_.push_back(marked_tma_copy(kernel, op, num_warps, arch));
  });
  find_tile_releases();
}

const PipelinedLoop *
KernelLowering::pipelined_loop(const ir::Operation &for_op) const {
  auto it = pipelined_loops_.find(&for_op);
  return it == pipelined_loops_.end() ? nullptr : &it->second;
}

const KernelLowering::StagedOperand *
KernelLowering::staged_operand(const ir::Value *v) const {
  auto it = staged_operands_.find(v);
  return it == staged_operands_.end() ? nullptr : &it->second;
}

llvm::Type *KernelLowering::value_type(const ir::Type &type) {
  if (type.is_pointer())
    return llvm::PointerType::get(context, kGlobalAddressSpace);
  return llvm_backend::register_type(context, type.element());
}

llvm::Type *KernelLowering::storage_type(Scalar s) {
  return llvm_backend::storage_type(context, s);
}

llvm::Function *KernelLowering::lower(const std::string &symbol) {
  std::vector<llvm::Type *> parameters;
  for (size_t i = 0; i < kernel.num_arguments(); ++i) {
    switch (parameter_kind(kernel.argument(i)->type())) {
    case ParameterKind::Pointer:
      parameters.push_back(
          llvm::PointerType::get(context, kGlobalAddressSpace));
      break;
    case ParameterKind::Int32:
      parameters.push_back(builder.getInt32Ty());
      break;
    case ParameterKind::Int64:
      parameters.push_back(builder.getInt64Ty());
      break;
    case ParameterKind::Float32:
      parameters.push_back(builder.getFloatTy());
      break;
    case ParameterKind::Float64:
      parameters.push_back(builder.getDoubleTy());
      break;
    }
  }
  // The tensor maps of TMA copies follow (kernel_abi.h), each passed by
  // value: 128 bytes at a 64-byte alignment.
  for (size_t i = 0; i < tma_copies_.size(); ++i)
    parameters.push_back(llvm::PointerType::get(context, 0));
  auto *type = llvm::FunctionType::get(builder.getVoidTy(), parameters, false);
  llvm::Function *f = llvm::Function::Create(
      type, llvm::Function::ExternalLinkage, symbol, module);
  f->setCallingConv(llvm::CallingConv::PTX_Kernel);
  auto *map_type = llvm::ArrayType::get(builder.getInt8Ty(), 128);
  std::vector<llvm::Metadata *> grid_constants;
  for (size_t i = 0; i < tma_copies_.size(); ++i) {
    const unsigned index = static_cast<unsigned>(kernel.num_arguments() + i);
    llvm::Argument *map = f->getArg(index);
    map->setName("tensor_map" + std::to_string(i));
    map->addAttr(llvm::Attribute::getWithByValType(context, map_type));
    map->addAttr(llvm::Attribute::getWithAlignment(context, llvm::Align(64)));
    map->addAttr(llvm::Attribute::ReadOnly);
    tensor_map_parameters_.push_back(map);
    // Read in place (cvta.param), not copied to local memory: the copies
    // take the parameter's own address.
    grid_constants.push_back(
        llvm::ConstantAsMetadata::get(builder.getInt32(index + 1)));
  }
  // LLVM 19 reads the launch bounds (and, besides the calling convention,
  // the kernel mark) from !nvvm.annotations; .maxntid lets ptxas budget
  // registers for exactly this many threads.
  llvm::NamedMDNode *annotations =
      module.getOrInsertNamedMetadata("nvvm.annotations");
  auto annotate = [&](const char *key, int value) {
    llvm::Metadata *fields[] = {
        llvm::ValueAsMetadata::get(f), llvm::MDString::get(context, key),
        llvm::ConstantAsMetadata::get(builder.getInt32(value))};
    annotations->addOperand(llvm::MDNode::get(context, fields));
  };
  annotate("kernel", 1);
  annotate("maxntidx", kWarpSize * cta_warps(kernel, num_warps));
  // setmaxnreg moves registers between warpgroups from a count ptxas
  // must know at the entry.
  if (specialized_loop_)
    annotate("maxnreg", kRegistersAtEntry);
  if (!grid_constants.empty()) {
    llvm::Metadata *fields[] = {llvm::ValueAsMetadata::get(f),
                                llvm::MDString::get(context, "grid_constant"),
                                llvm::MDNode::get(context, grid_constants)};
    annotations->addOperand(llvm::MDNode::get(context, fields));
  }

  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", f));
  bind_arguments(f);
  compute_thread_positions();
  if (specialized_loop_)
    split_producer_warps();
  for (const auto &op : kernel.body().ops()) {
    lower_op(*op);
    release_tiles_after(*op);
  }
  if (!builder.GetInsertBlock()->getTerminator()) {
    if (!mma_groups_in_flight_.empty())
      wait_for_warpgroup_mmas(0);
    builder.CreateRetVoid();
  }
  if (producer_entry_ && !producer_entry_->getTerminator())
    throw Error("internal: the producer warpgroup of " +
                specialized_loop_->describe() + " has no code");
  if (shared_)
    define_shared_buffer();
  return f;
}

void KernelLowering::bind_arguments(llvm::Function *f) {
  for (size_t i = 0; i < kernel.num_arguments(); ++i) {
    const ir::Value *argument = kernel.argument(i);
    const ir::Type &type = argument->type();
    llvm::Value *value = f->getArg(static_cast<unsigned>(i));
    value->setName(kernel.argument_info(i).name);
    if (!type.is_pointer()) {
      Scalar s = type.element();
      if (type.is_integer())
        value = builder.CreateTrunc(value, value_type(type));
      else if (s != Scalar::F32 && s != Scalar::F64)
        value = llvm_backend::narrow_from_f64(builder, value, s);
    }
    scalars_[argument] = value;
  }
}

void KernelLowering::compute_thread_positions() {
  llvm::Value *thread = builder.CreateIntrinsic(
      llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {}, nullptr, "thread");
  lane = builder.CreateAnd(thread, kWarpSize - 1, "lane");
  warp = builder.CreateLShr(thread, 5, "warp");
  // On warpgroup MMAs in several warpgroups, the warp id read back from
  // lane 0 of the warp: the same value, which ptxas then knows to be alike
  // in every lane, so that what is computed from it alone (a warpgroup's
  // offsets in its operand tiles, hence their MMA descriptors) lives in
  // uniform registers rather than in the threads' own, which the loops of
  // such kernels need for their accumulators. (With one warpgroup those
  // offsets are 0; kernels without warpgroup MMAs compute thread
  // addresses from it, which uniform registers would only hand back: both
  // then spill more, not less.)
  if (uses_warpgroup_mma(kernel) && num_warps > 4)
    warp = builder.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
                                   {builder.getInt32(0xffffffffu), warp,
                                    builder.getInt32(0),
                                    builder.getInt32(kWarpSize - 1)},
                                   nullptr, "uniform_warp");
  for (const BlockedLayout &p : layouts_->parents()) {
    std::vector<llvm::Value *> offsets(p.rank());
    llvm::Value *owner = builder.getTrue();
    llvm::Value *lane_rest = lane, *warp_rest = warp;
    for (int d = p.rank() - 1; d >= 0; --d) {
      llvm::Value *lane_d = builder.CreateURem(
          lane_rest, builder.getInt32(p.threads_per_warp[d]));
      lane_rest = builder.CreateUDiv(lane_rest,
                                     builder.getInt32(p.threads_per_warp[d]));
      llvm::Value *warp_d =
          builder.CreateURem(warp_rest, builder.getInt32(p.warps_per_cta[d]));
      warp_rest =
          builder.CreateUDiv(warp_rest, builder.getInt32(p.warps_per_cta[d]));
      // In units of a thread's run: the warp's first, then the lane's.
      llvm::Value *position = builder.CreateAdd(
          builder.CreateMul(warp_d, builder.getInt32(p.threads_per_warp[d] *
                                                     p.repeats_in_warp(d))),
          lane_d);
      llvm::Value *first =
          builder.CreateMul(position, builder.getInt32(p.size_per_thread[d]));
      if (p.tile(d) > p.shape[d]) {
        owner = builder.CreateAnd(
            owner, builder.CreateICmpULT(first, builder.getInt32(p.shape[d])));
        first = builder.CreateURem(first, builder.getInt32(p.shape[d]));
      }
      offsets[d] = first;
    }
    thread_offsets_.push_back(offsets);
    owners_.push_back(owner);
  }
}

KernelLowering::Bindings KernelLowering::bindings_of(
    const std::vector<const ir::Value *> &values) const {
  Bindings out;
  out.values = values;
  for (const ir::Value *v : values) {
    if (auto it = scalars_.find(v); it != scalars_.end())
      out.scalars.insert(*it);
    for (auto held = blocks_.lower_bound({v, 0});
         held != blocks_.end() && held->first.first == v; ++held)
      out.blocks.insert(*held);
  }
  return out;
}

void KernelLowering::restore(const Bindings &bindings) {
  for (const ir::Value *v : bindings.values) {
    scalars_.erase(v);
    blocks_.erase(blocks_.lower_bound({v, 0}),
                  blocks_.lower_bound({v, std::numeric_limits<int>::max()}));
  }
  for (const auto &[v, value] : bindings.scalars)
    scalars_[v] = value;
  for (const auto &[key, values] : bindings.blocks)
    blocks_[key] = values;
}

int KernelLowering::layout_id(const Layout &layout) {
  for (size_t i = 0; i < layout_ids_.size(); ++i)
    if (layout_ids_[i] == layout)
      return static_cast<int>(i);
  layout_ids_.push_back(layout);
  return static_cast<int>(layout_ids_.size() - 1);
}

llvm::Value *KernelLowering::scalar(const ir::Value *v) {
  auto it = scalars_.find(v);
  if (it == scalars_.end())
    throw Error("internal: the GPU backend has no value for an operand of " +
                (v->defining_op() ? v->defining_op()->describe()
                                  : std::string("an argument")));
  return it->second;
}

const KernelLowering::Registers &
KernelLowering::registers(const ir::Value *v, const Layout &layout) {
  auto it = blocks_.find({v, layout_id(layout)});
  if (it != blocks_.end())
    return it->second;
  // The GPU IR may read a value in a layout equal to the one it carries as
  // a linear layout (gpu-remove-conversions drops such a conversion): the
  // same registers hold the same elements in both.
  const BlockedLayout &p = parent(layout);
  for (auto held = blocks_.lower_bound({v, 0});
       held != blocks_.end() && held->first.first == v; ++held) {
    const Layout &other = layout_ids_[size_t(held->first.second)];
    if (same_linear_layout(parent(other), other, p, layout))
      return held->second;
  }
  throw Error("internal: the GPU backend did not compute " +
              (v->defining_op() ? v->defining_op()->describe()
                                : std::string("an argument")) +
              " in layout " + describe(parent(layout), layout));
}

KernelLowering::Registers KernelLowering::per_register(
    const Layout &layout,
    const std::function<llvm::Value *(int64_t)> &element) {
  const BlockedLayout &p = parent(layout);
  Registers out(p.num_registers(), nullptr);
  for (int64_t r = 0; r < p.num_registers(); ++r) {
    int64_t canonical = canonical_register(p, layout, r);
    out[r] = canonical == r ? element(r) : out[canonical];
  }
  return out;
}

llvm::Value *KernelLowering::element_index(const Layout &layout, int64_t r,
                                           int k) {
  if (layout.shape[k] == 1)
    return builder.getInt32(0);
  const BlockedLayout &p = parent(layout);
  int d = layout.dims[k];
  return builder.CreateAdd(thread_offsets_[layout.parent][d],
                           builder.getInt32(p.register_offset(r)[d]));
}

llvm::Value *KernelLowering::owns_elements(const BlockedLayout &p) {
  for (size_t i = 0; i < layouts_->parents().size(); ++i)
    if (layouts_->parents()[i] == p)
      return owners_[i];
  throw Error("internal: unknown parent layout " + p.str());
}

// Over 100 lines for a reason: the table from each op code to its
// lowering, a line or two a case; split up, it would be read in pieces.
void KernelLowering::lower_op(const ir::Operation &op) {
  try {
    wait_for_mmas_before(op);
    if ((op.code() == OpCode::Load || op.code() == OpCode::DescriptorLoad ||
         is_tile_view(op)) &&
        staged_operand(op.result()))
      return; // copied into shared memory by its pipelined loop, or a view
    if (is_tile_view(op) && landed_tile_source(op.result()))
      if (const StagedOperand *tile = staged_operand(op.operand(0))) {
        // A view of a tile a TMA copy landed outside a pipelined loop.
        set_staged_operand(op.result(), *tile);
        return;
      }
    if (op.code() == OpCode::Load)
      if (auto it = prefetched_.find(op.result()); it != prefetched_.end())
        return lower_prefetched(op, it->second);
    switch (op.code()) {
    case OpCode::DescriptorLoad:
      lower_tma_load(op);
      return;
    case OpCode::DescriptorStore:
      if (stored_since_barrier_)
        barrier();
      lower_tma_store(op);
      return;
    case OpCode::Return:
      builder.CreateRetVoid();
      return;
    case OpCode::Store:
      if (stored_since_barrier_)
        barrier();
      store(op);
      stored_since_barrier_ = true;
      return;
    case OpCode::Load:
      if (stored_since_barrier_)
        barrier();
      break;
    case OpCode::Reduce:
      lower_reduce(op);
      return;
    case OpCode::Scan:
      lower_scan(op);
      return;
    case OpCode::AtomicRmw:
    case OpCode::AtomicCas:
      lower_atomic(op);
      return;
    case OpCode::Print:
      lower_print(op);
      return;
    case OpCode::Assert:
      lower_assert(op);
      return;
    case OpCode::Div:
    case OpCode::Rem:
      check_division(op);
      break;
    case OpCode::Dot:
      lower_dot(op);
      return;
    case OpCode::For:
      lower_for(op);
      return;
    case OpCode::If:
      lower_if(op);
      return;
    case OpCode::ConvertLayout:
      lower_convert_layout(op);
      return;
    default:
      break;
    }
    if (moves_elements(op)) {
      lower_shape(op);
      return;
    }
    const ir::Value *result = op.result();
    if (!result->type().is_block()) {
      scalars_[result] = lower_scalar(op);
      return;
    }
    if (const Layout *home = layouts_->home(result)) {
      define_block(result, *home, lower_block(op, *home));
      return;
    }
    for (const Layout &layout : layouts_->layouts_of(result)) {
      Registers values = lower_block(op, layout);
      blocks_[{result, layout_id(layout)}] = std::move(values);
    }
  } catch (const Error &e) {
    std::string message = e.what();
    // Errors from shared code (element ops) do not know the op yet.
    if (message.rfind(op.describe(), 0) == 0 ||
        message.rfind("internal:", 0) == 0)
      throw;
    message = op.describe() + ": " + message;
    if (dynamic_cast<const SharedMemoryExhausted *>(&e))
      throw SharedMemoryExhausted(message);
    throw Error(message);
  }
}

} // namespace blocc::nvptx

namespace blocc::nvptx {

namespace {

bool is_hint(OpCode code) {
  return code == OpCode::MultipleOf || code == OpCode::MaxContiguous ||
         code == OpCode::MaxConstancy;
}

} // namespace

llvm::Value *KernelLowering::lower_scalar(const ir::Operation &op) {
  switch (op.code()) {
  case OpCode::Constant:
  case OpCode::ProgramId:
  case OpCode::NumPrograms:
    return creation_scalar(op);
  case OpCode::Load:
    return load_scalar(op);
  default:
    if (is_hint(op.code()))
      return scalar(op.operand(0));
    std::vector<llvm::Value *> operands;
    for (const ir::Value *operand : op.operands())
      operands.push_back(scalar(operand));
    return elementwise(op, operands);
  }
}

KernelLowering::Registers KernelLowering::lower_block(const ir::Operation &op,
                                                      const Layout &layout) {
  switch (op.code()) {
  case OpCode::Constant:
  case OpCode::Arange:
  case OpCode::Splat:
  case OpCode::Broadcast:
  case OpCode::ExpandDims:
  case OpCode::Reshape:
    return creation_block(op, layout);
  case OpCode::Load:
    return load_block(op, layout);
  default:
    if (is_hint(op.code()))
      return registers(op.operand(0), layout);
    if (op.code() == OpCode::Div)
      if (std::optional<Registers> quotients =
              divide_by_one_divisor(op, layout))
        return *quotients;
    // Elementwise: every operand has the result's shape and layout. Where
    // axis info proves runs of equal results (a mask `offsets < n` over a
    // thread's 8 halves), each run is computed once, as Triton does: f16
    // layer norm compared every element against n and ptxas parked the 32
    // predicates in the bits of a register.
    std::vector<const Registers *> operands;
    for (const ir::Value *operand : op.operands())
      operands.push_back(&registers(operand, layout));
    const BlockedLayout &p = parent(layout);
    const std::vector<int64_t> &constancy =
        axis_info.get(op.result()).constancy;
    Registers out(p.num_registers(), nullptr);
    for (int64_t r = 0; r < p.num_registers(); ++r) {
      int64_t start = equal_run_start(p, layout, constancy, r);
      if (!out[start]) {
        std::vector<llvm::Value *> values;
        for (const Registers *operand : operands)
          values.push_back((*operand)[start]);
        out[start] = elementwise(op, values);
      }
      out[r] = out[start];
    }
    return out;
  }
}

} // namespace blocc::nvptx
