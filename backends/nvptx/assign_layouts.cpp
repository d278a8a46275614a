#include "backends/nvptx/assign_layouts.h"

#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/mma_layouts.h"

#include "backends/llvm/llvm_types.h"
#include "backends/nvptx/shape_layouts.h"
#include "ir/error.h"

#include <algorithm>
#include <functional>

namespace blocc::nvptx {

using ir::OpCode;

namespace {

/// Calls f on every op of `block` and of the regions nested in it.
void for_each_op(const ir::Block &block,
                 const std::function<void(const ir::Operation &)> &f) {
  for (const auto &op : block.ops()) {
    f(*op);
    for (size_t i = 0; i < op->num_regions(); ++i)
      for_each_op(*op->region(i), f);
  }
}

std::vector<int> all_dims(size_t rank) {
  std::vector<int> dims;
  for (size_t d = 0; d < rank; ++d)
    dims.push_back(static_cast<int>(d));
  return dims;
}

} // namespace

Layout reshaped_operand_layout(const ir::Operation &reshape,
                               const Layout &layout) {
  // Size-1 dimensions hold index 0 whichever parent dimension they name.
  Layout operand{layout.parent, {}, reshape.operand(0)->type().shape()};
  size_t k = 0;
  for (int64_t size : operand.shape) {
    if (size == 1) {
      operand.dims.push_back(layout.dims.front());
      continue;
    }
    while (layout.shape[k] == 1)
      ++k;
    operand.dims.push_back(layout.dims[k++]);
  }
  return operand;
}

int64_t access_vector_width(const ir::Operation &op,
                            const ir::AxisInfoAnalysis &axis_info, int dim) {
  const ir::Value *pointer = op.operand(0);
  const ir::Type &type = pointer->type();
  if (!type.is_block() || type.pointee() == ir::Scalar::Ptr)
    return 1;
  int64_t bytes = llvm_backend::storage_bytes(type.pointee());
  const ir::AxisInfo &facts = axis_info.get(pointer);
  int last = dim >= 0 ? dim : type.rank() - 1;
  int64_t width = std::min<int64_t>(16 / bytes, facts.contiguity[last]);
  width = std::min<int64_t>(width, type.dim(last));
  // The first address of each run is a multiple of `divisibility` bytes;
  // a vector access needs its whole size.
  while (width > 1 && facts.divisibility[last] % (width * bytes) != 0)
    width /= 2;
  return std::max<int64_t>(width, 1);
}

LayoutAssignment::LayoutAssignment(const ir::Function &function,
                                   const ir::AxisInfoAnalysis &axis_info,
                                   int num_warps, const GpuArch &arch)
    : axis_info_(&axis_info), num_warps_(num_warps), arch_(arch) {
  // The vector width of each anchor shape: the widest access of that shape.
  for_each_op(function.body(), [&](const ir::Operation &op) {
    if (op.code() != OpCode::Load && op.code() != OpCode::Store)
      return;
    const ir::Type &type = op.operand(0)->type();
    if (!type.is_block())
      return;
    int64_t &width = vector_width_[type.shape()];
    width = std::max<int64_t>({width, 1, access_vector_width(op, axis_info)});
  });
  assign(function);
  // A loop-carried value homed where the loop's result is needed after it
  // may be produced in another layout at every iteration, and converted
  // through shared memory each time (attention's running row sums, homed
  // for the store after the loop). Homing it where the body produces it
  // moves that conversion after the loop: once, not once an iteration.
  if (prefer_homes_where_produced(function))
    assign(function);
  // The stores' preference reads the homes of the values they store, as
  // the loops' preference settled them.
  if (prefer_stores_where_produced(function))
    assign(function);
}

void LayoutAssignment::assign(const ir::Function &function) {
  parents_.clear();
  layouts_.clear();
  homes_.clear();
  store_layouts_.clear();
  reduce_layouts_.clear();
  shape_operands_.clear();
  // Layouts only accumulate, and there are finitely many: this ends.
  do {
    changed_ = false;
    visit(function.body());
  } while (changed_);
}

std::optional<Layout> LayoutAssignment::produced_in(const ir::Value *v) const {
  if (!v->type().is_block() || v->is_block_argument())
    return std::nullopt;
  if (const Layout *h = home(v))
    return *h;
  const ir::Operation *op = v->defining_op();
  if (op->num_regions() != 0 || op->num_results() != 1)
    return std::nullopt;
  switch (op->code()) {
  case OpCode::Broadcast:
  case OpCode::ExpandDims:
  case OpCode::Reshape:
  case OpCode::Permute:
  case OpCode::Join:
  case OpCode::Cat:
    return std::nullopt;
  default:
    break;
  }
  // An elementwise op is computed in the layout its operands come in.
  for (const ir::Value *operand : op->operands())
    if (operand->type().is_block() &&
        operand->type().shape() == v->type().shape())
      if (std::optional<Layout> from = produced_in(operand))
        return Layout{from->parent, from->dims, v->type().shape()};
  return std::nullopt;
}

bool LayoutAssignment::prefer_homes_where_produced(
    const ir::Function &function) {
  bool preferred = false;
  for_each_op(function.body(), [&](const ir::Operation &loop) {
    if (loop.code() != OpCode::For)
      return;
    const ir::Operation *yield = loop.region(0)->terminator();
    for (size_t k = 0; k < loop.num_results(); ++k) {
      const ir::Value *result = loop.result(k);
      const Layout *chosen = home(result);
      std::optional<Layout> produced = produced_in(yield->operand(k));
      if (!chosen || !produced || *produced == *chosen)
        continue;
      preferred_homes_.emplace(
          result, PreferredHome{parents_[produced->parent], produced->dims});
      preferred = true;
    }
  });
  return preferred;
}

namespace {

/// Whether a store of `store`'s value in `layout` (over `parent`) writes
/// whole 32-byte sectors with vectors of at least 8 bytes, each element
/// once:
/// each thread's run along the last dimension is contiguous in memory and
/// one vector, and the lanes along it cover a sector. Such a store needs
/// no conversion to be efficient: memory sees the same sectors as from
/// the anchor, and the shared-memory round trip and its barrier go.
/// (An MMA accumulator of float32 stored as float32 is one: pairs of 8
/// bytes, four lanes along a row.)
bool stores_whole_sectors(const ir::Operation &store,
                          const BlockedLayout &parent, const Layout &layout,
                          const ir::AxisInfoAnalysis &axis_info) {
  const ir::Type &type = store.operand(0)->type();
  const int last = type.rank() - 1;
  const int d = layout.dims[size_t(last)];
  // A slice of its parent replicates the value over the sliced dimensions.
  if (layout.dims.size() != size_t(parent.rank()) || parent.has_replicas() ||
      type.dim(last) < parent.tile(d))
    return false;
  const int64_t run = parent.size_per_thread[size_t(d)];
  const int64_t bytes = llvm_backend::storage_bytes(type.pointee());
  return run * bytes >= 8 && run * bytes <= 16 &&
         access_vector_width(store, axis_info) >= run &&
         run * parent.threads_per_warp[size_t(d)] * bytes >= 32;
}

} // namespace

bool LayoutAssignment::prefer_stores_where_produced(
    const ir::Function &function) {
  bool preferred = false;
  for_each_op(function.body(), [&](const ir::Operation &store) {
    if (store.code() != OpCode::Store || !store.operand(1)->type().is_block())
      return;
    auto chosen = store_layouts_.find(&store);
    std::optional<Layout> produced = produced_in(store.operand(1));
    if (chosen == store_layouts_.end() || !produced ||
        *produced == chosen->second ||
        !stores_whole_sectors(store, parents_[produced->parent], *produced,
                              *axis_info_))
      return;
    preferred_store_layouts_.emplace(
        &store, PreferredHome{parents_[produced->parent], produced->dims});
    preferred = true;
  });
  return preferred;
}

void LayoutAssignment::visit(const ir::Block &block) {
  // Users come after their operands: walking backwards, every use of a
  // value in this block has been seen before the op defining it.
  for (auto it = block.ops().rbegin(); it != block.ops().rend(); ++it)
    visit_op(**it);
}

void LayoutAssignment::visit_op(const ir::Operation &op) {
  switch (op.code()) {
  case OpCode::Store:
    if (op.operand(1)->type().is_block()) {
      const std::vector<int64_t> &shape = op.operand(1)->type().shape();
      auto preferred = preferred_store_layouts_.find(&op);
      Layout full = preferred == preferred_store_layouts_.end()
                        ? anchor(shape)
                        : Layout{intern(preferred->second.parent),
                                 preferred->second.dims, shape};
      for (const ir::Value *operand : op.operands())
        require(operand, full);
      store_layouts_.emplace(&op, full);
    }
    return;
  case OpCode::Print:
  case OpCode::Assert:
    for (const ir::Value *operand : op.operands())
      if (operand->type().is_block())
        require(operand, anchor(operand->type().shape()));
    return;
  case OpCode::AtomicRmw:
  case OpCode::AtomicCas:
    // Made once, where each element has one owner: the anchor.
    if (op.result()->type().is_block()) {
      Layout full = anchor(op.result()->type().shape());
      set_home(op.result(), full);
      propagate_to_operands(op, full);
    }
    return;
  case OpCode::Reduce:
    visit_reduce(op);
    return;
  case OpCode::Scan:
    visit_scan(op);
    return;
  case OpCode::Dot:
    visit_dot(op);
    return;
  case OpCode::For:
    visit_for(op);
    return;
  case OpCode::If:
    visit_if(op);
    return;
  case OpCode::Split:
    visit_split(op);
    return;
  default:
    break;
  }
  if (op.num_results() != 1 || !op.result()->type().is_block())
    return;
  const ir::Value *result = op.result();
  if (op.code() == OpCode::Load) {
    // A load nobody uses still runs (it may fault): in its own layout.
    if (layouts_of(result).empty())
      require(result, anchor(result->type().shape()));
    set_home(result, load_home(result));
    propagate_to_operands(op, *home(result));
    return;
  }
  std::vector<Layout> layouts = layouts_of(result);
  for (const Layout &layout : layouts)
    propagate_to_operands(op, layout);
}

void LayoutAssignment::visit_reduce(const ir::Operation &op) {
  const ir::Value *first = op.operand(0);
  if (!first->type().is_block())
    return;
  size_t axis = static_cast<size_t>(op.int_attr("axis"));
  std::vector<int64_t> shape = first->type().shape();
  if (!reduce_layouts_.count(&op)) {
    std::optional<Layout> chosen;
    // A layout a user needs of a result, with the reduced dimension put
    // back: then the reduction's own result layout is that one.
    for (size_t i = 0; i < op.num_results() && !chosen; ++i)
      for (const Layout &r : layouts_of(op.result(i))) {
        const BlockedLayout &p = parents_[r.parent];
        if (p.rank() != static_cast<int>(shape.size()))
          continue;
        for (int d = 0; d < p.rank(); ++d) {
          if (std::find(r.dims.begin(), r.dims.end(), d) != r.dims.end() ||
              p.shape[d] != shape[axis])
            continue;
          Layout candidate{r.parent, r.dims, shape};
          candidate.dims.insert(candidate.dims.begin() + axis, d);
          chosen = candidate;
          break;
        }
        if (chosen)
          break;
      }
    if (!chosen)
      for (const ir::Value *operand : op.operands())
        if (!layouts_of(operand).empty()) {
          chosen = layouts_of(operand).front();
          break;
        }
    if (!chosen)
      chosen = reshaped_from_operand(first);
    if (!chosen)
      chosen = anchor(shape);
    reduce_layouts_.emplace(&op, *chosen);
    changed_ = true;
  }
  const Layout &operands = reduce_layouts_.at(&op);
  Layout sliced = operands;
  sliced.dims.erase(sliced.dims.begin() + axis);
  sliced.shape.erase(sliced.shape.begin() + axis);
  for (size_t i = 0; i < op.num_results(); ++i)
    if (op.result(i)->type().is_block())
      set_home(op.result(i), sliced);
  for (const ir::Value *operand : op.operands())
    require(operand, operands);
}

void LayoutAssignment::visit_scan(const ir::Operation &op) {
  const ir::Value *first = op.result(0);
  if (!home(first)) {
    std::optional<Layout> chosen;
    for (size_t i = 0; i < op.num_results() && !chosen; ++i)
      if (!layouts_of(op.result(i)).empty())
        chosen = layouts_of(op.result(i)).front();
    for (size_t i = 0; i < op.num_operands() && !chosen; ++i)
      if (!layouts_of(op.operand(i)).empty())
        chosen = layouts_of(op.operand(i)).front();
    // lower_scan carries along the axis from lanes to warps: not through
    // a warp's repetitions (the warpgroup MMA's accumulator rows).
    const size_t axis = static_cast<size_t>(op.int_attr("axis"));
    if (chosen &&
        parents_[chosen->parent].repeats_in_warp(chosen->dims[axis]) != 1)
      chosen.reset();
    if (!chosen)
      chosen = anchor(first->type().shape());
    for (size_t i = 0; i < op.num_results(); ++i)
      set_home(op.result(i), *chosen);
  }
  for (const ir::Value *operand : op.operands())
    require(operand, *home(first));
}

std::optional<Layout> LayoutAssignment::tensor_core_layout(const ir::Value *v) {
  const ir::Operation *dot = v->defining_op();
  if (!dot || dot->code() != OpCode::Dot)
    return std::nullopt;
  std::optional<BlockedLayout> mma = accumulator_layout(*dot);
  if (!mma)
    return std::nullopt;
  return Layout{intern(*mma), {0, 1}, mma->shape};
}

bool LayoutAssignment::on_tensor_cores(const ir::Operation &dot) const {
  std::optional<BlockedLayout> mma = accumulator_layout(dot);
  const Layout *result = home(dot.result());
  return mma && result && parent(*result) == *mma &&
         result->dims == std::vector<int>{0, 1};
}

void LayoutAssignment::visit_dot(const ir::Operation &op) {
  const ir::Value *result = op.result();
  if (!home(result)) {
    if (std::optional<Layout> mma = tensor_core_layout(result))
      set_home(result, *mma);
    else
      set_home(result, layouts_of(result).empty()
                           ? anchor(result->type().shape())
                           : layouts_of(result).front());
  }
  require(op.operand(2), *home(result));
  // A chained dot's A is computed where its fragments already are.
  if (std::optional<BlockedLayout> a = registers_a_layout(op))
    if (on_tensor_cores(op))
      require(op.operand(0), Layout{intern(*a), {0, 1}, a->shape});
  // On warpgroup MMAs, the later link's A (attention's P) is computed
  // where the earlier link's accumulator holds its elements, and written
  // to its tile from there: the scores are not computed twice.
  if (runs_on_warpgroups(op) && a_from_a_dot(op)) {
    const std::vector<int64_t> shape = op.operand(0)->type().shape();
    BlockedLayout a = wgmma_fragments_layout(shape[0], shape[1], num_warps_);
    require(op.operand(0), Layout{intern(a), {0, 1}, shape});
  }
  for (const ir::Value *input : {op.operand(0), op.operand(1)})
    if (layouts_of(input).empty())
      require(input,
              anchor(input->type().shape(), 16 / llvm_backend::storage_bytes(
                                                     input->type().element())));
}

void LayoutAssignment::visit_for(const ir::Operation &op) {
  const ir::Block &body = *op.region(0);
  const ir::Operation *yield = body.terminator();
  size_t carried = op.num_results();
  bool undecided = false;
  for (size_t k = 0; k < carried; ++k) {
    const ir::Value *result = op.result(k);
    if (!result->type().is_block() || home(result))
      continue;
    auto preferred = preferred_homes_.find(result);
    if (std::optional<Layout> mma = tensor_core_layout(yield->operand(k)))
      set_home(result, *mma);
    else if (preferred != preferred_homes_.end())
      set_home(result, Layout{intern(preferred->second.parent),
                              preferred->second.dims, result->type().shape()});
    else if (!layouts_of(result).empty())
      set_home(result, layouts_of(result).front());
    else
      undecided = true;
  }
  if (undecided) {
    // Let the body say which layouts it needs the carried values in.
    visit(body);
    for (size_t k = 0; k < carried; ++k) {
      const ir::Value *result = op.result(k);
      if (!result->type().is_block() || home(result))
        continue;
      const ir::Value *argument = body.argument(1 + k);
      set_home(result, layouts_of(argument).empty()
                           ? anchor(result->type().shape())
                           : layouts_of(argument).front());
    }
  }
  for (size_t k = 0; k < carried; ++k) {
    const ir::Value *result = op.result(k);
    if (!result->type().is_block())
      continue;
    Layout h = *home(result);
    set_home(body.argument(1 + k), h);
    require(op.operand(3 + k), h);
    require(yield->operand(k), h);
  }
  visit(body);
}

void LayoutAssignment::visit_if(const ir::Operation &op) {
  for (size_t k = 0; k < op.num_results(); ++k) {
    const ir::Value *result = op.result(k);
    if (!result->type().is_block())
      continue;
    if (!home(result))
      set_home(result, layouts_of(result).empty()
                           ? anchor(result->type().shape())
                           : layouts_of(result).front());
    for (size_t i = 0; i < op.num_regions(); ++i)
      require(op.region(i)->terminator()->operand(k), *home(result));
  }
  for (size_t i = 0; i < op.num_regions(); ++i)
    visit(*op.region(i));
}

Layout LayoutAssignment::anchor(const std::vector<int64_t> &shape,
                                int64_t min_width) {
  return Layout{parent_for(shape, min_width), all_dims(shape.size()), shape};
}

int LayoutAssignment::parent_for(const std::vector<int64_t> &shape,
                                 int64_t min_width) {
  auto found = vector_width_.find(shape);
  int64_t width =
      std::max(found == vector_width_.end() ? 1 : found->second, min_width);
  return intern(choose_blocked_layout(shape, width, num_warps_));
}

void LayoutAssignment::require(const ir::Value *v, const Layout &layout) {
  if (!v->type().is_block())
    return;
  std::vector<Layout> &layouts = layouts_[v];
  if (std::find(layouts.begin(), layouts.end(), layout) == layouts.end()) {
    layouts.push_back(layout);
    changed_ = true;
  }
}

void LayoutAssignment::set_home(const ir::Value *v, const Layout &layout) {
  if (homes_.emplace(v, layout).second)
    changed_ = true;
}

void LayoutAssignment::propagate_to_operands(const ir::Operation &op,
                                             const Layout &layout) {
  switch (op.code()) {
  case OpCode::Broadcast: {
    const ir::Value *operand = op.operand(0);
    require(operand,
            Layout{layout.parent, layout.dims, operand->type().shape()});
    return;
  }
  case OpCode::ExpandDims: {
    const ir::Value *operand = op.operand(0);
    int64_t axis = op.int_attr("axis");
    Layout sliced{layout.parent, layout.dims, operand->type().shape()};
    sliced.dims.erase(sliced.dims.begin() + axis);
    require(operand, sliced);
    return;
  }
  case OpCode::Reshape:
    if (only_adds_or_drops_ones(op))
      require(op.operand(0), reshaped_operand_layout(op, layout));
    else
      propagate_shape_op(op, 0, layout);
    return;
  case OpCode::Permute:
  case OpCode::Join:
  case OpCode::Cat:
    propagate_shape_op(op, 0, layout);
    return;
  default:
    // Elementwise ops, loads and hints: operands of the result's shape.
    for (const ir::Value *operand : op.operands())
      if (operand->type().is_block())
        require(operand,
                Layout{layout.parent, layout.dims, operand->type().shape()});
    return;
  }
}

const Layout &LayoutAssignment::store_layout(const ir::Operation &store) const {
  auto it = store_layouts_.find(&store);
  if (it == store_layouts_.end())
    throw Error("internal: no layout for " + store.describe());
  return it->second;
}

const Layout &
LayoutAssignment::reduce_layout(const ir::Operation &reduce) const {
  auto it = reduce_layouts_.find(&reduce);
  if (it == reduce_layouts_.end())
    throw Error("internal: no layout for " + reduce.describe());
  return it->second;
}

const std::vector<Layout> &
LayoutAssignment::layouts_of(const ir::Value *v) const {
  static const std::vector<Layout> none;
  auto it = layouts_.find(v);
  return it == layouts_.end() ? none : it->second;
}

const Layout *LayoutAssignment::home(const ir::Value *v) const {
  auto it = homes_.find(v);
  return it == homes_.end() ? nullptr : &it->second;
}

} // namespace blocc::nvptx
