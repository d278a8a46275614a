// The gpu-warp-specialize pass and what it decides (warp_specialize.h).
#include "backends/nvptx/warp_specialize.h"

#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/gpu_passes.h"
#include "ir/tensor_descriptor.h"

namespace blocc::nvptx {

namespace {

bool defined_inside(const ir::Value *v, const ir::Block &body) {
  const ir::Block *owner = v->owner_block();
  return owner && owner->is_nested_in(&body);
}

/// Why the producer cannot compute `op`'s operand `v` (empty: it can): a
/// value of the body, or an integer scalar from before the loop that the
/// consumers hand it.
std::string why_not_computable(const ir::Value *v, const ir::Block &body) {
  if (v->type().is_block())
    return "a copy's coordinates depend on a block value";
  if (!defined_inside(v, body) && !v->type().is_integer())
    return "a copy's coordinates depend on a value of type " + v->type().str() +
           " from before the loop";
  return {};
}

std::string why_not_address_op(const ir::Operation &op, const ir::Block &body) {
  if (op.code() == ir::OpCode::Div || op.code() == ir::OpCode::Rem)
    return "a copy's coordinates divide (" + op.describe() + ")";
  for (const ir::Value *result : op.results())
    if (result->type().is_block())
      return "a copy's coordinates are block values (" + op.describe() + ")";
  for (const ir::Value *v : op.operands())
    if (std::string why = why_not_computable(v, body); !why.empty())
      return why;
  return {};
}

/// Why the plan's copies cannot all be the producer's.
std::string why_not_copies(const ir::Operation &loop,
                           const PipelinedLoop &plan) {
  if (!plan.prefetched.empty())
    return "it prefetches vectors";
  for (const PipelinedLoad &load : plan.loads)
    if (!load.tma)
      return "the tile " + load.load->describe() +
             " is copied by cp.async, not by the Tensor Memory Accelerator";
  if (!plan.warpgroups)
    return "its tiles are not read by warpgroup MMAs";
  const ir::Block &body = *loop.region(0);
  for (const ir::Operation *op : plan.address_ops)
    if (std::string why = why_not_address_op(*op, body); !why.empty())
      return why;
  for (const PipelinedLoad &load : plan.loads) {
    ir::DescriptorOperands d(*load.load);
    for (int dim = 0; dim < d.rank(); ++dim)
      if (std::string why = why_not_computable(d.offset(dim), body);
          !why.empty())
        return why;
  }
  for (size_t index : plan.carried)
    if (loop.result(index)->type().is_block())
      return "a copy's coordinates depend on a carried block value";
  return {};
}

/// f32 (or i32) registers a thread of `num_warps` warps holds for the
/// accumulators of the loop's dots.
int64_t accumulator_registers(const ir::Operation &loop, int num_warps) {
  int64_t elements = 0;
  for (const auto &op : loop.region(0)->ops())
    if (op->code() == ir::OpCode::Dot)
      elements += op->result()->type().num_elements();
  return elements / (32 * num_warps);
}

} // namespace

std::string why_not_warp_specialized(const ir::Function &function,
                                     const ir::Operation &loop,
                                     const PipelinedLoop *plan,
                                     const ir::AxisInfoAnalysis &axis_info,
                                     int num_warps) {
  if (loop.parent_block() != &function.body())
    return "it is nested in another loop or branch";
  if (num_warps != 4 && num_warps != 8)
    return "num_warps is " + std::to_string(num_warps) +
           "; a producer warpgroup serves 4 or 8 warps";
  if (!plan)
    return "it is not pipelined";
  std::optional<int64_t> step = axis_info.get(loop.operand(2)).constant_value;
  if (!step || *step <= 0)
    return "its step is not a positive constant";
  // A producer warpgroup takes the registers of a second CTA where the
  // consumers' accumulators are small enough for two to share an SM
  // without one (attention at head dimension 64: 0.8x with one).
  if (accumulator_registers(loop, num_warps) < kFewAccumulatorRegisters)
    return "its accumulators leave room for two CTAs an SM without a "
           "producer warpgroup";
  return why_not_copies(loop, *plan);
}

const ir::Operation *warp_specialized_loop(const ir::Function &function) {
  const ir::Operation *found = nullptr;
  function.walk([&](const ir::Operation &op) {
    if (!found && op.code() == ir::OpCode::For &&
        op.has_attr(ir::kWarpSpecialize))
      found = &op;
  });
  return found;
}

int cta_warps(const ir::Function &function, int num_warps) {
  return num_warps + (warp_specialized_loop(function) ? kProducerWarps : 0);
}

void warp_specialize(ir::Function &function, const GpuPassOptions &options) {
  std::vector<ir::Operation *> asked;
  function.walk([&](ir::Operation &op) {
    if (op.code() == ir::OpCode::For && op.has_attr(ir::kWarpSpecialize))
      asked.push_back(&op);
  });
  if (asked.empty())
    return;
  ir::AxisInfoAnalysis axis_info(function);
  std::unique_ptr<LayoutAssignment> layouts = LayoutAssignment::of(
      function, axis_info, options.num_warps, options.arch);
  std::map<const ir::Operation *, PipelinedLoop> plans =
      plan_pipelined_loops(function, *layouts, axis_info);
  // One loop a kernel: the producer's shared memory and barriers are the
  // loop's own.
  bool given = false;
  for (ir::Operation *loop : asked) {
    auto plan = plans.find(loop);
    const bool can =
        !given &&
        why_not_warp_specialized(function, *loop,
                                 plan == plans.end() ? nullptr : &plan->second,
                                 axis_info, options.num_warps)
            .empty();
    if (can)
      given = true;
    else
      loop->attributes().erase(ir::kWarpSpecialize);
  }
}

} // namespace blocc::nvptx
