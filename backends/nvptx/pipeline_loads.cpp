#include "backends/nvptx/pipeline_loads.h"

#include "backends/nvptx/gpu_ir.h"
#include "ir/error.h"
#include "ir/passes/side_effects.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <tuple>
#include <variant>

namespace blocc::nvptx {

namespace {

using ir::OpCode;

/// Ops the address computation may hold: arithmetic without side effects
/// or faults, which the lowering can compute again for a later iteration.
bool is_address_op(const ir::Operation &op) {
  switch (op.code()) {
  case OpCode::Constant:
  case OpCode::ProgramId:
  case OpCode::NumPrograms:
  case OpCode::Arange:
  case OpCode::Splat:
  case OpCode::Broadcast:
  case OpCode::ExpandDims:
  case OpCode::Cast:
  case OpCode::Bitcast:
  case OpCode::PtrToInt:
  case OpCode::IntToPtr:
  case OpCode::Add:
  case OpCode::Sub:
  case OpCode::Mul:
  case OpCode::And:
  case OpCode::Or:
  case OpCode::Xor:
  case OpCode::Shl:
  case OpCode::Shr:
  case OpCode::Minimum:
  case OpCode::Maximum:
  case OpCode::Cmp:
  case OpCode::AddPtr:
  case OpCode::Neg:
  case OpCode::Not:
  case OpCode::Abs:
  case OpCode::Select:
  case OpCode::MultipleOf:
  case OpCode::MaxContiguous:
  case OpCode::MaxConstancy:
  case OpCode::ConvertLayout:
    return true;
  default:
    return false;
  }
}

/// The ops of `body` that compute `roots`, closed over carried values: a
/// carried value they read brings in the ops that compute its next value.
/// nullopt when one of them is not an address op.
struct AddressSlice {
  std::set<const ir::Operation *> ops;
  std::set<size_t> carried;
};
std::optional<AddressSlice>
address_slice(const ir::Block &body, std::vector<const ir::Value *> roots) {
  AddressSlice slice;
  const ir::Operation *yield = body.terminator();
  while (!roots.empty()) {
    const ir::Value *v = roots.back();
    roots.pop_back();
    if (v->owner_block() != &body)
      continue; // defined before the loop
    if (v->is_block_argument()) {
      size_t index = static_cast<size_t>(v->index());
      if (index > 0 && slice.carried.insert(index - 1).second)
        roots.push_back(yield->operand(index - 1));
      continue;
    }
    const ir::Operation *op = v->defining_op();
    if (!slice.ops.insert(op).second)
      continue;
    if (!is_address_op(*op))
      return std::nullopt;
    for (const ir::Value *operand : op->operands())
      roots.push_back(operand);
  }
  return slice;
}

/// Calls `f` on every op of `body`, those nested in its ops' regions
/// included, in program order.
void walk(const ir::Block &body,
          const std::function<void(const ir::Operation &)> &f) {
  for (const auto &op : body.ops())
    static_cast<const ir::Operation &>(*op).walk(f);
}

/// How many uses of `v` the ops of `body` (nested ones included) make,
/// and the op of the last.
std::pair<int, const ir::Operation *> users(const ir::Block &body,
                                            const ir::Value *v) {
  int count = 0;
  const ir::Operation *user = nullptr;
  walk(body, [&](const ir::Operation &op) {
    for (const ir::Value *operand : op.operands())
      if (operand == v) {
        ++count;
        user = &op;
      }
  });
  return {count, user};
}

/// A dot of a loop's body that reads a tile as operand `operand`, through
/// `views` of it (is_tile_view), in order from the tile.
struct TileRead {
  const ir::Operation *dot;
  int operand;
  std::vector<const ir::Operation *> views;
};

/// The ops of `body` (nested ones included) that read `v`, once each.
std::vector<const ir::Operation *> user_ops(const ir::Block &body,
                                            const ir::Value *v) {
  std::vector<const ir::Operation *> found;
  walk(body, [&](const ir::Operation &op) {
    if (std::find(op.operands().begin(), op.operands().end(), v) !=
        op.operands().end())
      found.push_back(&op);
  });
  return found;
}

/// Every read of `v` by a dot of `body` on tensor cores (per
/// `on_tensor_cores`), through convert_layout ops (the explicit form
/// converts a load to the layout its dot reads it in; a copy ahead makes
/// them moot, since the dot reads the stage in place) and views; nullopt
/// where anything else reads it, a dot nested deeper does, or a dot reads
/// it as both operands.
template <typename OnTensorCores>
std::optional<std::vector<TileRead>>
tile_reads(const ir::Block &body, const ir::Value *v,
           const OnTensorCores &on_tensor_cores,
           const std::vector<const ir::Operation *> &views = {}) {
  std::vector<TileRead> reads;
  for (const ir::Operation *user : user_ops(body, v)) {
    if (user->code() == OpCode::ConvertLayout || is_tile_view(*user)) {
      std::vector<const ir::Operation *> further = views;
      if (user->code() != OpCode::ConvertLayout)
        further.push_back(user);
      auto more = tile_reads(body, user->result(), on_tensor_cores, further);
      if (!more)
        return std::nullopt;
      reads.insert(reads.end(), more->begin(), more->end());
      continue;
    }
    if (user->code() != OpCode::Dot || !on_tensor_cores(*user) ||
        user->operand(0) == user->operand(1) ||
        user->result()->owner_block() != &body ||
        (user->operand(0) != v && user->operand(1) != v))
      return std::nullopt;
    reads.push_back({user, user->operand(0) == v ? 0 : 1, views});
  }
  return reads;
}

/// The layout of the tile whose view through `views` is in `shared`.
SharedLayout before_views(const std::vector<const ir::Operation *> &views,
                          SharedLayout shared) {
  for (auto it = views.rbegin(); it != views.rend(); ++it)
    if ((*it)->code() == OpCode::Permute)
      shared = shared.permuted(inverse_order((*it)->ints_attr("order")));
  return shared;
}

/// The register layout of `layout`'s value seen through `views`.
Layout through_views(const std::vector<const ir::Operation *> &views,
                     Layout layout) {
  for (const ir::Operation *view : views)
    if (view->code() == OpCode::Permute)
      layout = permuted(layout, view->ints_attr("order"));
  return layout;
}

/// The views of `reads`, each once, in program order.
std::vector<const ir::Operation *>
views_of(const ir::Block &body, const std::vector<TileRead> &reads) {
  std::set<const ir::Operation *> all;
  for (const TileRead &read : reads)
    all.insert(read.views.begin(), read.views.end());
  std::vector<const ir::Operation *> ordered;
  walk(body, [&](const ir::Operation &op) {
    if (all.count(&op))
      ordered.push_back(&op);
  });
  return ordered;
}

} // namespace

bool written_before_loop(const ir::Operation &dot, int operand,
                         const ir::Block &body) {
  const ir::Value *v = dot.operand(static_cast<size_t>(operand));
  return v->owner_block() != &body && users(body, v).first == 1;
}

std::vector<const ir::Operation *> views_from_source(const ir::Value *tile) {
  std::vector<const ir::Operation *> views;
  for (const ir::Operation *op = tile->defining_op(); op && is_tile_view(*op);
       op = op->operand(0)->defining_op())
    views.insert(views.begin(), op);
  return views;
}

bool tma_lands_k_fastest(int operand,
                         const std::vector<const ir::Operation *> &views) {
  bool transposed = false;
  for (const ir::Operation *view : views)
    transposed = transposed != (view->code() == OpCode::Permute);
  return (operand == 0) != transposed;
}

SharedLayout
landed_tma_layout(const ir::Operation &dot, int operand,
                  const std::vector<const ir::Operation *> &views) {
  return before_views(
      views, shared_layout_of(operand_tile(dot, operand,
                                           tma_lands_k_fastest(operand, views)),
                              operand));
}

SharedLayout landed_tile_layout(const ir::Operation &dot, int operand,
                                const std::vector<const ir::Operation *> &views,
                                const BlockedLayout &parent,
                                const Layout &layout) {
  const bool along_k =
      operand_runs_along_k(parent, through_views(views, layout), operand);
  return before_views(
      views, shared_layout_of(operand_tile(dot, operand, along_k), operand));
}

namespace {

class LoopPlanner {
public:
  LoopPlanner(const ir::Function &function, const LayoutAssignment &layouts,
              const ir::AxisInfoAnalysis &axis_info)
      : layouts_(layouts), axis_info_(axis_info),
        warpgroup_mma_(uses_warpgroup_mma(function)) {}

  /// The load as a pipelined tile, or nullopt where it cannot be one.
  std::optional<PipelinedLoad> candidate(const ir::Block &body,
                                         const ir::Operation &load) const {
    if (load.code() == OpCode::DescriptorLoad)
      return tma_candidate(body, load);
    if (load.code() != OpCode::Load)
      return std::nullopt;
    const ir::Type &type = load.result()->type();
    if (!type.is_block() || type.rank() != 2 || load.has_attr("volatile"))
      return std::nullopt;
    if (load.num_operands() > 2 && !is_positive_zero(load.operand(2)))
      return std::nullopt;
    std::optional<std::vector<TileRead>> reads =
        tile_reads(body, load.result(), [&](const ir::Operation &dot) {
          return layouts_.on_tensor_cores(dot);
        });
    if (!reads || reads->empty())
      return std::nullopt;
    // A load in its tile already (gpu-stage-dot-operands) copies in the
    // layout of its pointers.
    const SharedLayout *landed = layouts_.shared_layout(load.result());
    const Layout *layout =
        layouts_.home(landed ? load.operand(0) : load.result());
    if (!layout)
      return std::nullopt;
    const BlockedLayout &parent = layouts_.parent(*layout);
    if (parent.has_replicas())
      return std::nullopt;
    int fastest = parent.rank() - 1, dim = -1;
    for (size_t k = 0; k < layout->dims.size(); ++k)
      if (layout->dims[k] == fastest && layout->shape[k] > 1)
        dim = static_cast<int>(k);
    if (dim < 0)
      return std::nullopt;
    const int64_t bytes = ir::scalar_bits(type.element()) / 8;
    PipelinedLoad p;
    p.load = &load;
    p.views = views_of(body, *reads);
    p.width =
        std::min({parent.size_per_thread[fastest],
                  access_vector_width(load, axis_info_, dim), 16 / bytes});
    if (p.width * bytes < 4)
      return std::nullopt; // cp.async moves 4, 8 or 16 bytes
    if (!mask_alike_per_copy(load, dim, p.width))
      return std::nullopt;
    // The copies land as the load's registers run: each dot must read the
    // tile so.
    for (size_t i = 0; i < reads->size(); ++i) {
      const TileRead &read = (*reads)[i];
      const bool along_k = operand_runs_along_k(
          parent, through_views(read.views, *layout), read.operand);
      // ldmatrix transposes 16-bit elements only, so a tile of 32- or
      // 8-bit elements (tf32, int8, fp8) is kept with K fastest; a load
      // whose global rows run along M or N (B [K, N] row-major) would
      // have to transpose on its way, which 16-byte copies cannot (an
      // int8 or fp8 copy moves 4 elements of N at least), and one copy of
      // 4 bytes an f32 would take four times the copies, on conflicting
      // banks. Such a load stays a load that the dot stages; its loop
      // still copies the other input ahead.
      if (bytes != 2 && !along_k)
        return std::nullopt;
      const SharedLayout shared = landed_tile_layout(
          *read.dot, read.operand, read.views, parent, *layout);
      if (i == 0)
        p.layout = shared;
      else if (!(shared == p.layout))
        return std::nullopt;
      p.warpgroups = p.warpgroups || runs_on_warpgroups(*read.dot);
    }
    p.tile = p.layout.tile(bytes);
    if (p.warpgroups)
      p.alignment = wgmma_tile_alignment(p.tile);
    if (landed && !(p.layout == *landed))
      return std::nullopt;
    return p;
  }

  /// Whether `load`'s mask (if any) is true in every lane or alike over
  /// each copy of `width` elements along dimension `dim`.
  bool mask_alike_per_copy(const ir::Operation &load, int dim,
                           int64_t width) const {
    return load.num_operands() < 2 ||
           ir::provably_all_true(axis_info_, load.operand(1)) ||
           axis_info_.get(load.operand(1))
                   .constancy[static_cast<size_t>(dim)] >= width;
  }

  /// A load of a vector that cp.async can copy ahead (see the file's
  /// header), or nullopt.
  std::optional<PrefetchedLoad>
  prefetch_candidate(const ir::Operation &load) const {
    if (load.code() != OpCode::Load)
      return std::nullopt;
    const ir::Type &type = load.result()->type();
    if (!type.is_block() || type.rank() != 1 || load.has_attr("volatile") ||
        (load.num_operands() > 2 && !is_positive_zero(load.operand(2))))
      return std::nullopt;
    const Layout *layout = layouts_.home(load.operand(0));
    if (!layout || !layouts_.home(load.result()))
      return std::nullopt;
    const BlockedLayout &parent = layouts_.parent(*layout);
    // Elements of 32 or 64 bits, which registers hold as they are stored.
    const int64_t bytes = ir::scalar_bits(type.element()) / 8;
    if ((bytes != 4 && bytes != 8) || type.element() == ir::Scalar::Ptr)
      return std::nullopt;
    PrefetchedLoad p;
    p.load = &load;
    // Copies of several elements where they run along the parent's
    // fastest dimension, contiguous in memory and in the thread's
    // registers.
    const int fastest = parent.rank() - 1;
    if (layout->dims[0] == fastest)
      p.width =
          std::min({parent.size_per_thread[fastest],
                    access_vector_width(load, axis_info_, 0), 16 / bytes});
    if (p.width * bytes < 4)
      return std::nullopt; // cp.async moves 4, 8 or 16 bytes
    if (!mask_alike_per_copy(load, 0, p.width))
      return std::nullopt;
    return p;
  }

  /// A descriptor_load marked tma, as a pipelined tile: TMA copies it
  /// where its one reader, a dot of the body on warpgroup MMAs, reads it,
  /// directly or through a transposing view (tma.h).
  std::optional<PipelinedLoad> tma_candidate(const ir::Block &body,
                                             const ir::Operation &load) const {
    if (!copied_by_tma(load))
      return std::nullopt;
    std::optional<std::vector<TileRead>> reads =
        tile_reads(body, load.result(), runs_on_warpgroups);
    if (!reads || reads->size() != 1)
      return std::nullopt;
    const TileRead &read = reads->front();
    PipelinedLoad p;
    p.load = &load;
    p.views = read.views;
    p.layout = landed_tma_layout(*read.dot, read.operand, read.views);
    p.tile = operand_tile(*read.dot, read.operand,
                          tma_lands_k_fastest(read.operand, read.views));
    p.warpgroups = true;
    p.tma = true;
    p.alignment = wgmma_tile_alignment(p.tile);
    const SharedLayout *landed = layouts_.shared_layout(load.result());
    if (landed && !(p.layout == *landed))
      return std::nullopt;
    return p;
  }

  /// The loop's plan in up to `num_stages` stages, as many as fit in the
  /// share of what `arch` gives a CTA that its stages may take, with every
  /// load that can be copied ahead; nullopt where none can, or two stages
  /// do not fit.
  std::optional<PipelinedLoop> choose(const ir::Operation &loop, int num_stages,
                                      const GpuArch &arch) const {
    const ir::Block &body = *loop.region(0);
    if (ir::writes_memory(body))
      return std::nullopt;
    std::optional<PipelinedLoop> plan =
        collect(body, [](const auto &) { return true; });
    if (!plan)
      return std::nullopt;
    // mma.sync loops give half of what a CTA may have to the stages and
    // keep the rest for the loop's other users (conversions, reductions,
    // other inputs), which leaves room for a second CTA on the SM.
    // Warpgroup MMAs consume a stage at twice mma.sync's rate and run one
    // CTA of large tiles per SM: their stages may take all of it. Where the
    // loop's other users then find too little, the backend compiles again
    // with one stage fewer (gpu_backend.cpp).
    const int64_t budget = plan->warpgroups ? arch.max_shared_bytes()
                                            : arch.max_shared_bytes() / 2;
    plan->stages = num_stages;
    while (plan->stages > 1 && plan->kept_bytes() > budget)
      --plan->stages;
    if (plan->stages < 2)
      return std::nullopt;
    return plan;
  }

  /// The plan the GPU IR gives a loop: its num_stages, its loads marked
  /// async_copy. Throws naming the op where the IR asks for what cannot
  /// be done.
  PipelinedLoop follow(const ir::Operation &loop) const {
    const ir::Block &body = *loop.region(0);
    if (ir::writes_memory(body))
      throw Error("GPU IR: " + loop.describe() +
                  ": num_stages on a loop that writes memory (copies issued "
                  "ahead would read it before the iterations that write it)");
    std::set<const ir::Operation *> copied;
    for (const auto &op : body.ops())
      if ((op->code() == OpCode::Load || copied_by_tma(*op)) &&
          (copied_ahead(*op) || prefetched(*op)))
        copied.insert(op.get());
    std::optional<PipelinedLoop> plan = collect(
        body, [&](const ir::Operation &op) { return copied.erase(&op) != 0; });
    if (!copied.empty()) {
      const ir::Operation &refused = **copied.begin();
      if (prefetched(refused))
        throw Error("GPU IR: " + refused.describe() +
                    ": prefetch on a load that cp.async cannot copy ahead "
                    "(it must load a vector with no other value but 0, in "
                    "copies of 4 to 16 bytes with a mask alike over each, "
                    "from addresses the loop can compute ahead, in a loop "
                    "that copies tiles ahead)");
      throw Error("GPU IR: " + refused.describe() +
                  ": async_copy on a load that cp.async cannot copy ahead "
                  "(it must feed one dot on tensor cores, along K unless it "
                  "gives 16-bit elements, with no other value but 0, a mask "
                  "alike over each copy, and addresses the loop can compute "
                  "ahead)");
    }
    if (!plan)
      throw Error("GPU IR: " + loop.describe() +
                  ": num_stages = " + std::to_string(loop_stages(loop)) +
                  " but none of its loads is marked async_copy");
    plan->stages = loop_stages(loop);
    return *plan;
  }

private:
  /// The loads of `body` that `wanted` accepts and can be copied ahead,
  /// with their address ops and the loop's invariant dot inputs; nullopt
  /// where there are none.
  std::optional<PipelinedLoop>
  collect(const ir::Block &body,
          const std::function<bool(const ir::Operation &)> &wanted) const {
    PipelinedLoop plan;
    AddressSlice all;
    for (const auto &op : body.ops()) {
      std::optional<PipelinedLoad> load = candidate(body, *op);
      if (!load || prefetched(*op))
        continue;
      std::optional<AddressSlice> slice =
          address_slice(body, {op->operands().begin(), op->operands().end()});
      // A stage is counted in elements of one size (loop_pipeline.h).
      if (!slice || !wanted(*op) ||
          (!plan.loads.empty() &&
           plan.loads.front().tile.element_bytes != load->tile.element_bytes))
        continue;
      all.ops.insert(slice->ops.begin(), slice->ops.end());
      all.carried.insert(slice->carried.begin(), slice->carried.end());
      plan.stage_bytes = align_up(plan.stage_bytes, load->alignment);
      plan.alignment = std::max(plan.alignment, load->alignment);
      plan.warpgroups = plan.warpgroups || load->warpgroups;
      load->offset = plan.stage_bytes / load->tile.element_bytes;
      plan.stage_bytes += align_up(load->tile.bytes(), 16);
      plan.loads.push_back(*load);
    }
    if (plan.loads.empty())
      return std::nullopt;
    for (const auto &op : body.ops()) {
      std::optional<PrefetchedLoad> load = prefetch_candidate(*op);
      if (!load || copied_ahead(*op) || !wanted(*op))
        continue;
      std::optional<AddressSlice> slice =
          address_slice(body, {op->operands().begin(), op->operands().end()});
      if (!slice)
        continue;
      all.ops.insert(slice->ops.begin(), slice->ops.end());
      all.carried.insert(slice->carried.begin(), slice->carried.end());
      const ir::Type &type = op->result()->type();
      plan.stage_bytes = align_up(plan.stage_bytes, 16);
      load->byte_offset = plan.stage_bytes;
      plan.stage_bytes += type.dim(0) * (ir::scalar_bits(type.element()) / 8);
      plan.prefetched.push_back(*load);
    }
    plan.stage_bytes = align_up(plan.stage_bytes, plan.alignment);
    find_invariant_operands(body, plan);
    for (const auto &op : body.ops())
      if (all.ops.count(op.get()))
        plan.address_ops.push_back(op.get());
    plan.carried.assign(all.carried.begin(), all.carried.end());
    plan.mma_in_flight = accumulator_dot(body);
    return plan;
  }

  /// The body's last dot, on warpgroup MMAs, where its MMAs can stay in
  /// flight into the next iteration: it accumulates the loop's carried
  /// value (the yield alone reads its result), and nothing reads the
  /// registers it writes before a wait that covers them. Every dot of the
  /// body is one of its own ops and on warpgroup MMAs, so that a dot
  /// before it waits for all of the warpgroup's groups (in order: its
  /// own and the previous iteration's); the carried value is read by the
  /// accumulating dot alone (a matmul's loop) or only after the body's
  /// first dot (attention's rescaled accumulator).
  static const ir::Operation *accumulator_dot(const ir::Block &body) {
    std::vector<const ir::Operation *> dots;
    for (const auto &op : body.ops()) {
      if (op->code() == OpCode::Dot)
        dots.push_back(op.get());
      if (op->num_regions() && contains_dot(*op))
        return nullptr;
    }
    for (const ir::Operation *dot : dots)
      if (!runs_on_warpgroups(*dot))
        return nullptr;
    if (dots.empty())
      return nullptr;
    const ir::Operation *found = dots.back();
    const ir::Operation *yield = body.terminator();
    auto [result_users, user] = users(body, found->result());
    if (result_users != 1 || user != yield)
      return nullptr;
    const ir::Value *carried = nullptr;
    for (size_t k = 0; k < yield->num_operands(); ++k)
      if (yield->operand(k) == found->result())
        carried = body.argument(1 + k);
    // Reads of the carried value before the first dot's wait would find
    // the last iteration's MMAs still writing it; the accumulating dot
    // may go on accumulating into it (MMAs of one warpgroup into the same
    // registers run in order).
    if (found->operand(0) == carried || found->operand(1) == carried)
      return nullptr;
    bool waited = false;
    for (const auto &op : body.ops()) {
      if (op.get() != found && reads(*op, carried) &&
          (!waited || op.get() == dots.front()))
        return nullptr;
      waited = waited || op.get() == dots.front();
    }
    return found;
  }

  /// Whether `op`'s regions hold a dot.
  static bool contains_dot(const ir::Operation &op) {
    for (size_t i = 0; i < op.num_regions(); ++i)
      for (const auto &inner : op.region(i)->ops())
        if (inner->code() == OpCode::Dot || contains_dot(*inner))
          return true;
    return false;
  }

  /// Whether `op` or an op in its regions reads `v`.
  static bool reads(const ir::Operation &op, const ir::Value *v) {
    for (const ir::Value *operand : op.operands())
      if (operand == v)
        return true;
    for (size_t i = 0; i < op.num_regions(); ++i)
      for (const auto &inner : op.region(i)->ops())
        if (reads(*inner, v))
          return true;
    return false;
  }

  /// The bytes of the inputs of the body's dots on tensor cores that are
  /// written before the loop (written_before_loop), up to where the stages
  /// start: laid out as the lowering lays them out, one after another in
  /// the order gpu-stage-dot-operands writes them (the body's dots, A
  /// before B), each at its tile's alignment. In a kernel on warpgroup
  /// MMAs that alignment reaches 1024 bytes, and the padding before a
  /// tile is shared memory the stages cannot have.
  void find_invariant_operands(const ir::Block &body,
                               PipelinedLoop &plan) const {
    int64_t end = 0;
    for (const auto &op : body.ops()) {
      if (op->code() != OpCode::Dot || !layouts_.on_tensor_cores(*op))
        continue;
      for (int operand = 0; operand < 2; ++operand) {
        const ir::Value *v = op->operand(static_cast<size_t>(operand));
        if (!written_before_loop(*op, operand, body) ||
            layouts_.shared_layout(v) || layouts_.layouts_of(v).empty())
          continue; // read in place, or written by the IR already
        const Layout &layout = layouts_.layouts_of(v).front();
        const BlockedLayout &parent = layouts_.parent(layout);
        if (operand == 0 && takes_a_from_registers(*op, parent, layout))
          continue;
        FragmentTile tile =
            operand_tile(*op, operand,
                         fragment_tile_k_fastest(*op, parent, layout, operand));
        end = align_up(end, shared_tile_alignment(tile, warpgroup_mma_)) +
              tile.bytes();
      }
    }
    plan.invariant_bytes = align_up(end, stages_alignment(plan.alignment));
  }

  const LayoutAssignment &layouts_;
  const ir::AxisInfoAnalysis &axis_info_;
  // Whether the lowering places tiles at the warpgroup swizzle's alignment:
  // it does so for the whole kernel (shared_tile_alignment).
  bool warpgroup_mma_;
};

void find_loops(const ir::Block &block,
                const std::function<void(const ir::Operation &)> &f) {
  for (const auto &op : block.ops()) {
    if (op->code() == OpCode::For)
      f(*op);
    for (size_t i = 0; i < op->num_regions(); ++i)
      find_loops(*op->region(i), f);
  }
}

} // namespace

std::map<const ir::Operation *, PipelinedLoop>
choose_pipelined_loops(const ir::Function &function,
                       const LayoutAssignment &layouts,
                       const ir::AxisInfoAnalysis &axis_info, int num_stages,
                       const GpuArch &arch) {
  std::map<const ir::Operation *, PipelinedLoop> loops;
  if (num_stages < 2)
    return loops;
  LoopPlanner planner(function, layouts, axis_info);
  find_loops(function.body(), [&](const ir::Operation &loop) {
    if (std::optional<PipelinedLoop> plan =
            planner.choose(loop, num_stages, arch))
      loops.emplace(&loop, std::move(*plan));
  });
  return loops;
}

std::map<const ir::Operation *, PipelinedLoop>
plan_pipelined_loops(const ir::Function &function,
                     const LayoutAssignment &layouts,
                     const ir::AxisInfoAnalysis &axis_info) {
  std::map<const ir::Operation *, PipelinedLoop> loops;
  LoopPlanner planner(function, layouts, axis_info);
  find_loops(function.body(), [&](const ir::Operation &loop) {
    if (loop_stages(loop) >= 2)
      loops.emplace(&loop, planner.follow(loop));
  });
  return loops;
}

} // namespace blocc::nvptx
