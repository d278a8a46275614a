// Chooses the layouts (layout.h) of a kernel's block values.
//
// Every store, and every load whose value nothing uses, anchors a blocked
// layout for its shape: one per distinct shape, with as many consecutive
// elements per thread along the last dimension as the widest access of
// that shape may move at once (16 bytes at most, limited by the contiguity
// and alignment the axis-info analysis proves for its addresses). The
// anchors' layouts then flow backwards to the operands: elementwise ops
// and hints give their operands their own layout, broadcast keeps the
// parent (size-1 dimensions hold index 0), expand_dims slices the new
// dimension away, and the shape ops choose layouts in which each thread
// already holds its elements (shape_layouts.h, assign_shape_layouts.cpp).
// Parents that put every element in the same threads are one parent.
//
// A value may be needed in several layouts. Values computed from
// arguments, constants, program ids and index arithmetic (and elementwise
// ops on anything) are simply computed once per layout. Values that cannot
// be recomputed — loads, reduction and scan results, loop-carried values and
// the results of for and if — are produced in one *home* layout and converted
// through shared memory to the other layouts they are needed in, right
// where they are defined (lower_convert.cpp):
//   - a load: the first layout its users need that is not transposed
//     (else the anchor of its shape: loads stay coalesced);
//   - a reduction: its operands' home is the layout whose slice along the
//     reduced dimension is the layout a user needs of the result (so that
//     `x - max(x, 1)[:, None]` converts nothing), else a layout the
//     operand already has, else (a reshaped operand) the layout its
//     reshape's operand has, else the anchor of the operand's shape; the
//     results' home is that layout's slice along the reduced dimension;
//   - a scan: its operands and results all in the first layout a user
//     needs of a result, else one the operand already has, else the
//     anchor of its shape;
//   - a loop-carried value: the layout in which the body produces the
//     value it yields (the home of that value or, through elementwise ops,
//     of an operand), so that no iteration converts it — the walk runs a
//     second time where a first one found that layout to differ; else the
//     first layout the loop's result is needed in, else the first layout
//     the body needs the carried value in; the init and the yielded value
//     are needed in it;
//   - an if's result: the first layout it is needed in; both branches
//     yield it in that layout;
//   - a dot's result: on tensor cores, the MMA accumulator layout
//     (mma_layouts.h), and a loop-carried value that such a dot yields
//     is homed in it too, so that an accumulator converts nothing inside
//     its K loop; otherwise the first layout it is needed in (else the
//     anchor of its shape); the accumulator is needed in it, and each input in
//     the first layout it is needed in, from which it is written to shared
//     memory (lower_dot.cpp); else in its anchor with at least 16 bytes
//     per thread along the last dimension even where loads cannot be
//     vectors, so that a thread holds few rows (one global address each,
//     live across a K loop) rather than many.
// Because loop bodies need their yielded values in the carried layout and
// the carried values in layouts found inside the body, the walk is
// repeated until nothing changes.
#pragma once

#include "backends/nvptx/gpu_arch.h"
#include "backends/nvptx/layout.h"
#include "backends/nvptx/shared_layouts.h"
#include "ir/axis_info.h"
#include "ir/function.h"

#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

namespace blocc::nvptx {

class LayoutAssignment {
public:
  /// Assigns layouts to the block values of `function` (regions included)
  /// for `num_warps` warps of `arch` (whose tensor cores decide which dots
  /// run on them).
  LayoutAssignment(const ir::Function &function,
                   const ir::AxisInfoAnalysis &axis_info, int num_warps,
                   const GpuArch &arch);
  /// The layouts the GPU IR carries (layout_attrs.h: written by the
  /// gpu-assign-layouts pass), as they are written: nothing is chosen.
  /// Throws blocc::Error naming the op where one cannot be read.
  static std::unique_ptr<LayoutAssignment>
  read(const ir::Function &function, int num_warps, const GpuArch &arch);
  /// The layouts `function` carries where it carries them (read), else
  /// those assigned as above.
  static std::unique_ptr<LayoutAssignment>
  of(const ir::Function &function, const ir::AxisInfoAnalysis &axis_info,
     int num_warps, const GpuArch &arch);

  const std::vector<BlockedLayout> &parents() const { return parents_; }
  /// The shared layouts the GPU IR names (layout_attrs.h: `sharedN`).
  const std::vector<SharedLayout> &shared_layouts() const {
    return shared_layouts_;
  }
  const BlockedLayout &parent(const Layout &l) const {
    return parents_[l.parent];
  }
  /// The shared layout `v` is held in (the explicit form's `#sharedN`: a
  /// value written to shared memory by a convert_layout), nullptr for
  /// values held in registers.
  const SharedLayout *shared_layout(const ir::Value *v) const {
    auto it = shared_values_.find(v);
    return it == shared_values_.end() ? nullptr : &shared_layouts_[it->second];
  }
  /// The number of `v`'s shared layout (`#sharedN`); -1 where it has none.
  int shared_number(const ir::Value *v) const {
    auto it = shared_values_.find(v);
    return it == shared_values_.end() ? -1 : static_cast<int>(it->second);
  }
  /// The layouts `v` is needed in (none for scalars and unused values).
  const std::vector<Layout> &layouts_of(const ir::Value *v) const;
  /// The one layout `v` is produced in, for values that are produced once
  /// and converted (see above); nullptr for values computed per layout.
  const Layout *home(const ir::Value *v) const;
  /// Whether `dot`'s result is homed in the tensor cores' accumulator
  /// layout (mma_layouts.h), so that it runs on them.
  bool on_tensor_cores(const ir::Operation &dot) const;
  int num_warps() const { return num_warps_; }
  const GpuArch &arch() const { return arch_; }
  /// The layout a store of a block writes from (its anchor).
  const Layout &store_layout(const ir::Operation &store) const;
  /// The layout a reduction reads its operands in.
  const Layout &reduce_layout(const ir::Operation &reduce) const;
  /// The layouts (one per operand; scalars: an empty one) a shape op
  /// (shape_layouts.h) reads to produce its result `result` in `layout`;
  /// `layout` is empty for the scalar results of splitting a pair.
  const std::vector<Layout> &shape_operand_layouts(const ir::Operation &op,
                                                   size_t result,
                                                   const Layout &layout) const;

private:
  /// Fills an empty assignment from the GPU IR (layout_attrs.cpp).
  class Reader;
  LayoutAssignment(int num_warps, const GpuArch &arch)
      : num_warps_(num_warps), arch_(arch) {}
  /// Runs the walk to its fixpoint from nothing.
  void assign(const ir::Function &function);
  /// The layout the body computes `v` in without converting it: its home,
  /// or for an elementwise op, where an operand is produced; nullopt for
  /// block arguments and the results of ops that move elements.
  std::optional<Layout> produced_in(const ir::Value *v) const;
  /// Notes, for the next assign(), the loop-carried values whose yielded
  /// value is produced in another layout than their home; true if any.
  bool prefer_homes_where_produced(const ir::Function &function);
  /// Notes, for the next assign(), the stores whose value is produced in a
  /// layout that writes whole sectors by itself (stores_whole_sectors):
  /// they store from there rather than convert to their anchor through
  /// shared memory; true if any.
  bool prefer_stores_where_produced(const ir::Function &function);
  void visit(const ir::Block &block);
  void visit_op(const ir::Operation &op);
  void visit_reduce(const ir::Operation &op);
  void visit_scan(const ir::Operation &op);
  void visit_dot(const ir::Operation &op);
  void visit_for(const ir::Operation &op);
  void visit_if(const ir::Operation &op);
  // Shape ops (assign_shape_layouts.cpp).
  void visit_split(const ir::Operation &op);
  void propagate_shape_op(const ir::Operation &op, size_t result,
                          const Layout &layout);
  std::vector<Layout> choose_shape_operand_layouts(const ir::Operation &op,
                                                   size_t result,
                                                   const Layout &layout);
  std::optional<Layout> reshaped_from_operand(const ir::Value *v);
  /// The accumulator layout of tensor cores (mma_layouts.h) for `v` when
  /// it is the result of a dot that runs on them.
  std::optional<Layout> tensor_core_layout(const ir::Value *v);
  Layout load_home(const ir::Value *load);
  /// For a two-dimensional load whose addresses run down its first
  /// dimension and not along its second (a tile read across the rows of
  /// a row-major matrix, as K^T from K), a layout whose threads run down
  /// the first, so that its accesses coalesce into vectors; else nullopt.
  std::optional<Layout> coalesced_down_columns(const ir::Value *load);
  /// The parent equal to `layout`, or one placing every element in the
  /// same threads, else `layout` added.
  int intern(const BlockedLayout &layout);
  /// `min_width`: at least this many elements per thread along the last
  /// dimension, even where accesses cannot be vectors.
  Layout anchor(const std::vector<int64_t> &shape, int64_t min_width = 1);
  int parent_for(const std::vector<int64_t> &shape, int64_t min_width = 1);
  void require(const ir::Value *v, const Layout &layout);
  void set_home(const ir::Value *v, const Layout &layout);
  void propagate_to_operands(const ir::Operation &op, const Layout &layout);

  const ir::AxisInfoAnalysis *axis_info_ = nullptr; // none when read
  int num_warps_;
  GpuArch arch_;
  bool changed_ = false;
  std::map<std::vector<int64_t>, int64_t> vector_width_; // per anchor shape
  std::vector<BlockedLayout> parents_;
  std::vector<SharedLayout> shared_layouts_;
  std::map<const ir::Value *, size_t> shared_values_;
  std::map<const ir::Value *, std::vector<Layout>> layouts_;
  std::map<const ir::Value *, Layout> homes_;
  std::map<const ir::Operation *, Layout> store_layouts_;
  std::map<const ir::Operation *, Layout> reduce_layouts_;
  std::map<std::tuple<const ir::Operation *, size_t, Layout>,
           std::vector<Layout>>
      shape_operands_;
  /// Homes of loop results, kept across assign()s by parent rather than by
  /// its index.
  struct PreferredHome {
    BlockedLayout parent;
    std::vector<int> dims;
  };
  std::map<const ir::Value *, PreferredHome> preferred_homes_;
  std::map<const ir::Operation *, PreferredHome> preferred_store_layouts_;
};

/// The layout of the operand of a reshape that only adds size-1
/// dimensions (the only reshape lowered), given the result's layout: the
/// same registers, like expand_dims.
Layout reshaped_operand_layout(const ir::Operation &reshape,
                               const Layout &layout);

/// Consecutive elements along the last dimension one thread may access as
/// one vector for `op` (a load or store of a block): a power of two, at
/// most 16 bytes, covered by the contiguity and alignment that axis info
/// proves for its addresses.
/// With `dim`, along that dimension of the address block instead.
int64_t access_vector_width(const ir::Operation &op,
                            const ir::AxisInfoAnalysis &axis_info,
                            int dim = -1);

} // namespace blocc::nvptx
