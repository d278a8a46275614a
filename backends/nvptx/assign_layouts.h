// Chooses the layouts (layout.h) of a kernel's block values.
//
// Every store, and every load whose value nothing uses, anchors a blocked
// layout for its shape: one per distinct shape, with as many consecutive
// elements per thread along the last dimension as the widest access of
// that shape may move at once (16 bytes at most, limited by the contiguity
// and alignment the axis-info analysis proves for its addresses). The
// anchors' layouts then flow backwards to the operands: elementwise ops,
// loads and hints give their operands their own layout, broadcast keeps
// the parent (size-1 dimensions hold index 0), expand_dims slices the new
// dimension away.
//
// A value may be needed in several layouts. Values computed from
// arguments, constants, program ids and index arithmetic are then simply
// computed once per layout; a value that depends on a load would need a
// layout conversion through shared memory, which this backend does not
// lower yet, and is reported as an error naming the op.
#pragma once

#include "backends/nvptx/layout.h"
#include "ir/axis_info.h"
#include "ir/function.h"

#include <map>
#include <vector>

namespace blocc::nvptx {

class LayoutAssignment {
public:
  /// Assigns layouts to the block values of `function`'s body (which must
  /// hold no regions; the lowering rejects those first).
  LayoutAssignment(const ir::Function &function,
                   const ir::AxisInfoAnalysis &axis_info, int num_warps);

  const std::vector<BlockedLayout> &parents() const { return parents_; }
  const BlockedLayout &parent(const Layout &l) const {
    return parents_[l.parent];
  }
  /// The layouts `v` is needed in (none for scalars and unused values).
  const std::vector<Layout> &layouts_of(const ir::Value *v) const;
  /// The layout a store of a block writes from (its anchor).
  const Layout &store_layout(const ir::Operation &store) const;

private:
  int parent_for(const std::vector<int64_t> &shape);
  void require(const ir::Value *v, const Layout &layout);
  void propagate_to_operands(const ir::Operation &op, const Layout &layout);

  const ir::AxisInfoAnalysis &axis_info_;
  int num_warps_;
  std::map<std::vector<int64_t>, int64_t> vector_width_; // per anchor shape
  std::vector<BlockedLayout> parents_;
  std::map<const ir::Value *, std::vector<Layout>> layouts_;
  std::map<const ir::Operation *, Layout> store_layouts_;
};

/// Consecutive elements along the last dimension one thread may access as
/// one vector for `op` (a load or store of a block): a power of two, at
/// most 16 bytes, covered by the contiguity and alignment that axis info
/// proves for its addresses.
/// With `dim`, along that dimension of the address block instead.
int64_t access_vector_width(const ir::Operation &op,
                            const ir::AxisInfoAnalysis &axis_info,
                            int dim = -1);

} // namespace blocc::nvptx
