// The layouts the shape ops read their operands in (shape_layouts.h says
// why each choice moves no data), and the choices elsewhere that keep them
// cheap: a reduction of a reshaped block reads it in the layout its
// operand already has, and a load that only permuted users need is made in
// its own coalesced layout and converted once through shared memory.
#include "backends/nvptx/assign_layouts.h"

#include "backends/nvptx/shape_layouts.h"
#include "ir/error.h"

namespace blocc::nvptx {

using ir::OpCode;

int LayoutAssignment::intern(const BlockedLayout &layout) {
  for (size_t i = 0; i < parents_.size(); ++i)
    if (parents_[i] == layout)
      return static_cast<int>(i);
  for (size_t i = 0; i < parents_.size(); ++i)
    if (same_threads(parents_[i], layout, num_warps_))
      return static_cast<int>(i);
  parents_.push_back(layout);
  changed_ = true;
  return static_cast<int>(parents_.size() - 1);
}

void LayoutAssignment::visit_split(const ir::Operation &op) {
  if (!op.result(0)->type().is_block()) {
    // Two scalars: every thread holds the pair.
    propagate_shape_op(op, 0, Layout{});
    return;
  }
  for (size_t k = 0; k < op.num_results(); ++k) {
    std::vector<Layout> layouts = layouts_of(op.result(k));
    for (const Layout &layout : layouts)
      propagate_shape_op(op, k, layout);
  }
}

void LayoutAssignment::propagate_shape_op(const ir::Operation &op,
                                          size_t result, const Layout &layout) {
  auto key = std::make_tuple(&op, result, layout);
  auto it = shape_operands_.find(key);
  if (it == shape_operands_.end()) {
    // Chosen once: later walks must not pick another parent for it.
    std::vector<Layout> chosen =
        choose_shape_operand_layouts(op, result, layout);
    it = shape_operands_.emplace(key, chosen).first;
    changed_ = true;
  }
  for (size_t i = 0; i < op.num_operands(); ++i)
    require(op.operand(i), it->second[i]);
}

std::vector<Layout> LayoutAssignment::choose_shape_operand_layouts(
    const ir::Operation &op, size_t result, const Layout &layout) {
  const std::vector<int64_t> shape = op.operand(0)->type().shape();
  switch (op.code()) {
  case OpCode::Reshape:
    if (std::optional<BlockedLayout> same =
            reshaped_parent(parents_[layout.parent], layout, shape, num_warps_))
      return {whole_layout(intern(*same), shape)};
    return {anchor(shape)}; // through shared memory
  case OpCode::Permute: {
    const std::vector<int64_t> &order = op.ints_attr("order");
    Layout operand{layout.parent, layout.dims, shape};
    for (size_t i = 0; i < order.size(); ++i)
      operand.dims[order[i]] = layout.dims[i];
    return {operand};
  }
  case OpCode::Join: {
    Layout operand{layout.parent, layout.dims, shape};
    operand.dims.pop_back();
    return {operand, operand};
  }
  case OpCode::Split: {
    if (layout.shape.empty()) {
      BlockedLayout pair = choose_blocked_layout({2}, 2, num_warps_);
      return {whole_layout(intern(pair), {2})};
    }
    // A copy: interning may grow parents_.
    const BlockedLayout p = parents_[layout.parent];
    Layout operand{intern(with_pair_dimension(p)), layout.dims, shape};
    operand.dims.push_back(p.rank());
    return {operand};
  }
  case OpCode::Cat: {
    int64_t axis = op.int_attr("axis");
    if (axis < 0)
      axis += static_cast<int64_t>(shape.size());
    int d = layout.dims[axis];
    Layout operand{intern(halved(parents_[layout.parent], d)), layout.dims,
                   shape};
    return {operand, operand};
  }
  default:
    throw Error("internal: " + op.describe() + " is not a shape op");
  }
}

std::optional<Layout>
LayoutAssignment::reshaped_from_operand(const ir::Value *v) {
  const ir::Operation *op = v->defining_op();
  if (!op || op->code() != OpCode::Reshape || !moves_elements(*op))
    return std::nullopt;
  const ir::Value *operand = op->operand(0);
  Layout from = layouts_of(operand).empty() ? anchor(operand->type().shape())
                                            : layouts_of(operand).front();
  std::vector<int64_t> shape = v->type().shape();
  if (std::optional<BlockedLayout> same =
          reshaped_parent(parents_[from.parent], from, shape, num_warps_))
    return whole_layout(intern(*same), shape);
  return std::nullopt;
}

Layout LayoutAssignment::load_home(const ir::Value *load) {
  if (std::optional<Layout> down = coalesced_down_columns(load))
    return *down;
  for (const Layout &layout : layouts_of(load))
    if (!is_transposed(layout))
      return layout;
  return anchor(load->type().shape());
}

std::optional<Layout>
LayoutAssignment::coalesced_down_columns(const ir::Value *load) {
  const ir::Operation &op = *load->defining_op();
  const ir::Type &type = load->type();
  if (type.rank() != 2 || access_vector_width(op, *axis_info_, 1) > 1)
    return std::nullopt;
  int64_t width = access_vector_width(op, *axis_info_, 0);
  if (width < 2)
    return std::nullopt;
  return Layout{intern(choose_blocked_layout({type.dim(1), type.dim(0)}, width,
                                             num_warps_)),
                {1, 0},
                type.shape()};
}

const std::vector<Layout> &
LayoutAssignment::shape_operand_layouts(const ir::Operation &op, size_t result,
                                        const Layout &layout) const {
  auto it = shape_operands_.find(std::make_tuple(&op, result, layout));
  if (it == shape_operands_.end())
    throw Error("internal: no operand layouts for " + op.describe());
  return it->second;
}

} // namespace blocc::nvptx
