#include "backends/nvptx/assign_layouts.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <algorithm>

namespace blocc::nvptx {

using ir::OpCode;

namespace {

bool is_anchor(const ir::Operation &op) {
  return op.code() == OpCode::Store && op.operand(1)->type().is_block();
}

/// Whether v's value comes from memory (a load, or anything computed from
/// one): such a value exists in the layout it was loaded in only.
bool depends_on_load(const ir::Value *v,
                     std::map<const ir::Value *, bool> &memo) {
  auto it = memo.find(v);
  if (it != memo.end())
    return it->second;
  const ir::Operation *op = v->defining_op();
  bool result = false;
  if (op) {
    if (op->code() == OpCode::Load)
      result = true;
    else
      for (const ir::Value *operand : op->operands())
        if (depends_on_load(operand, memo)) {
          result = true;
          break;
        }
  }
  memo[v] = result;
  return result;
}

} // namespace

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
                                   int num_warps)
    : axis_info_(axis_info), num_warps_(num_warps) {
  const ir::Block &body = function.body();
  // The vector width of each anchor shape: the widest access of that shape.
  for (const auto &op : body.ops()) {
    if (op->code() != OpCode::Load && op->code() != OpCode::Store)
      continue;
    const ir::Type &type = op->operand(0)->type();
    if (!type.is_block())
      continue;
    int64_t &width = vector_width_[type.shape()];
    width = std::max<int64_t>({width, 1, access_vector_width(*op, axis_info)});
  }
  // Users come after their operands: walking backwards, every use of a
  // value has been seen before the op defining it.
  for (auto it = body.ops().rbegin(); it != body.ops().rend(); ++it) {
    const ir::Operation &op = **it;
    if (is_anchor(op)) {
      std::vector<int64_t> shape = op.operand(1)->type().shape();
      Layout full{parent_for(shape), {}, shape};
      for (int d = 0; d < static_cast<int>(shape.size()); ++d)
        full.dims.push_back(d);
      for (const ir::Value *operand : op.operands())
        require(operand, full);
      store_layouts_.emplace(&op, full);
      continue;
    }
    if (op.num_results() != 1 || !op.result()->type().is_block())
      continue;
    const ir::Value *result = op.result();
    if (op.code() == OpCode::Load && !layouts_.count(result)) {
      // A load nobody uses still runs (it may fault): in its own layout.
      std::vector<int64_t> shape = result->type().shape();
      Layout full{parent_for(shape), {}, shape};
      for (int d = 0; d < static_cast<int>(shape.size()); ++d)
        full.dims.push_back(d);
      require(result, full);
    }
    auto found = layouts_.find(result);
    if (found == layouts_.end())
      continue; // unused
    std::vector<Layout> layouts = found->second;
    for (const Layout &layout : layouts)
      propagate_to_operands(op, layout);
  }
  std::map<const ir::Value *, bool> memo;
  for (const auto &op : body.ops()) {
    if (op->num_results() != 1)
      continue;
    const std::vector<Layout> &layouts = layouts_of(op->result());
    if (layouts.size() > 1 && depends_on_load(op->result(), memo))
      throw Error(op->describe() + ": this value is needed in " +
                  std::to_string(layouts.size()) +
                  " different thread layouts (" +
                  describe(parent(layouts[0]), layouts[0]) + " and " +
                  describe(parent(layouts[1]), layouts[1]) +
                  "), which needs a layout conversion through shared "
                  "memory; the GPU backend does not lower layout "
                  "conversions yet");
  }
}

int LayoutAssignment::parent_for(const std::vector<int64_t> &shape) {
  auto width = vector_width_.find(shape);
  BlockedLayout layout = choose_blocked_layout(
      shape, width == vector_width_.end() ? 1 : width->second, num_warps_);
  for (size_t i = 0; i < parents_.size(); ++i)
    if (parents_[i] == layout)
      return static_cast<int>(i);
  parents_.push_back(layout);
  return static_cast<int>(parents_.size() - 1);
}

void LayoutAssignment::require(const ir::Value *v, const Layout &layout) {
  if (!v->type().is_block())
    return;
  std::vector<Layout> &layouts = layouts_[v];
  if (std::find(layouts.begin(), layouts.end(), layout) == layouts.end())
    layouts.push_back(layout);
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

const std::vector<Layout> &
LayoutAssignment::layouts_of(const ir::Value *v) const {
  static const std::vector<Layout> none;
  auto it = layouts_.find(v);
  return it == layouts_.end() ? none : it->second;
}

} // namespace blocc::nvptx
