// Reshape, permute, join, split and cat. The layouts chosen for their
// operands (assign_shape_layouts.cpp) usually put every result element in
// the thread that holds it already: each result register is then one of
// the operand's registers (register_sources, which checks this for every
// thread), or, for a join or cat whose halves differ by a lane or warp
// bit, a select between the two operands' registers by the element's
// index. A reshape whose result layout has no such operand layout writes
// its operand to shared memory at its row-major positions, which a reshape
// keeps, and reads the result back (a layout conversion, lower_convert.cpp).
#include "backends/nvptx/kernel_lowering.h"

#include "backends/nvptx/shape_layouts.h"
#include "ir/error.h"

namespace blocc::nvptx {

using ir::OpCode;

void KernelLowering::lower_shape(const ir::Operation &op) {
  auto operand_value = [&](size_t i, const Layout &layout, int64_t r) {
    const ir::Value *v = op.operand(i);
    return v->type().is_block() ? registers(v, layout)[r] : scalar(v);
  };
  for (size_t k = 0; k < op.num_results(); ++k) {
    const ir::Value *result = op.result(k);
    if (!result->type().is_block()) {
      // A pair split into two scalars: every thread holds both elements.
      const Layout &pair =
          layouts_->shape_operand_layouts(op, 0, Layout{}).front();
      const BlockedLayout &p = parent(pair);
      for (int64_t r = 0; r < p.num_registers(); ++r)
        if (element_coordinates(p, pair, 0, r) ==
            std::vector<int64_t>{static_cast<int64_t>(k)}) {
          set_scalar(result, operand_value(0, pair, r));
          break;
        }
      continue;
    }
    for (const Layout &layout : layouts_->layouts_of(result)) {
      const std::vector<Layout> &from =
          layouts_->shape_operand_layouts(op, k, layout);
      std::optional<std::vector<RegisterSource>> sources = register_sources(
          layouts_->parents(), layout, from, source_map(op, k), num_warps);
      Registers values;
      if (sources) {
        values = per_register(layout, [&](int64_t r) {
          const RegisterSource &s = (*sources)[r];
          if (s.operand >= 0)
            return operand_value(s.operand, from[s.operand], s.reg);
          // Threads differ in which operand holds their element: the
          // second where the element's index is in the second half along
          // the joined or concatenated dimension.
          int64_t axis = op.code() == OpCode::Join
                             ? static_cast<int64_t>(layout.shape.size()) - 1
                             : op.int_attr("axis");
          if (axis < 0)
            axis += static_cast<int64_t>(layout.shape.size());
          int64_t half = layout.shape[axis] / 2;
          llvm::Value *second = builder.CreateICmpUGE(
              element_index(layout, r, static_cast<int>(axis)),
              builder.getInt32(static_cast<uint32_t>(half)));
          return builder.CreateSelect(second, operand_value(1, from[1], s.reg),
                                      operand_value(0, from[0], s.reg));
        });
      } else if (op.code() == OpCode::Reshape) {
        const ir::Value *operand = op.operand(0);
        values = convert_layout(operand, from[0], registers(operand, from[0]),
                                layout);
      } else {
        throw Error("internal: " + op.describe() +
                    " does not find its elements in the threads of " +
                    describe(parent(layout), layout));
      }
      blocks_[{result, layout_id(layout)}] = std::move(values);
    }
  }
}

} // namespace blocc::nvptx
