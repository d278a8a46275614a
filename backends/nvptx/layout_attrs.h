// The layouts of the GPU IR as data: what LayoutAssignment (assign_layouts.h)
// decides, written into the IR by the gpu-assign-layouts pass and read back
// by the passes after it and by the lowering, which then choose no layout
// themselves.
//
//   func @k(%p: ptr<f16> {divisibility = 16}, ...) attributes {
//       blocked0 = "blocked<shape=[64,64] per_thread=[1,8] threads=[8,4]
//                   warps=[4,1]>",
//       blocked1 = "blocked<shape=[64,64] per_thread=[8,1] threads=[4,8]
//                   warps=[1,4]>"} {
//     %x = load %ptrs {home = "#blocked0",
//                      layouts = "#blocked0; #blocked1 dims=[1,0]"} : ...
//     %m = reduce %x {axis = 1, home = "#blocked0 dims=[0]",
//                     layouts = "#blocked0 dims=[0]",
//                     reduce_layout = "#blocked0"} : ...
//     store %q, %y {store_layout = "#blocked1"}
//
// The parents (layout.h's BlockedLayout: shape, elements per thread,
// threads of a warp, warps of the CTA along each dimension) are the
// function's attributes `blocked0`, `blocked1`, ..., shared by the values
// that use them as Triton's #blocked aliases are; their numbers keep the
// order the assignment made them in (the lowering computes thread
// positions parent by parent). A layout is `#blockedN`, a value with the
// parent's dimensions in order, or `#blockedN dims=[...]`, the parent
// dimension of each of the value's dimensions (parent dimensions not
// named are sliced away; a value dimension of size 1 holds index 0). Its
// shape is its value's. They are strings because the IR's attributes are
// integers, floats, strings and integer lists: the text parses with the
// IR's own parser.
//
//   home, layouts    the value's home, where it has one (it is produced
//                    there and converted), and the layouts it is needed
//                    in, in the assignment's order, separated by "; ";
//                    `home_K`, `layouts_K` for result K of an op of several
//                    results; `argJ_home`, `argJ_layouts` for argument J
//                    of a loop's body, and among the function's
//                    attributes for its argument J (a block argument:
//                    tests of passes, never a kernel)
//   store_layout     the layout a store of a block writes from
//   reduce_layout    the layout a reduction reads its operands in
//   operand_layouts  the layouts a shape op (shape_layouts.h) reads its
//                    operands in, one group per layout of its results, in
//                    order, separated by " | ", each holding one layout
//                    per operand
//
// The explicit form (written by the gpu-explicit-conversions pass, and what
// the passes after it and the lowering read) gives every block value
// exactly one layout, Triton's model: an op needed in several layouts is
// one op per layout, and a value moves between layouts only through a
// `convert_layout` op, whose result's layout is its target:
//
//     %x = load %ptrs {layout = "#blocked0"} : ...
//     %y = convert_layout %x {layout = "#blocked1 dims=[1,0]"} : ...
//     %m = reduce %x {axis = 1, layout = "#blocked0 dims=[0]"} : ...
//     store %q, %y
//
//   layout           the value's one layout; `layout_K` for result K of an
//                    op of several results, `argJ_layout` for argument J
//                    of a loop's body (and of the function, among its
//                    attributes)
//
// An op reads its operands in the layouts they carry: a store writes from
// its value's, a reduction reads its operands', a shape op reads each
// operand's; home, layouts, store_layout, reduce_layout and
// operand_layouts are the implicit form's alone. An op that reads its
// operands in its result's layout (elementwise ops, loads, loops, ...)
// may find one in a layout equal to that as a linear layout: the same
// registers of the same threads (layout.h: same_linear_layout), read with
// no conversion.
//
// A value in shared memory (written by the gpu-stage-conversions and
// gpu-stage-dot-operands passes) has a shared layout: the function's
// attributes `shared0`, `shared1`, ... (shared_layouts.h:
// SharedLayout::str(), e.g. "padded<shape=[64,64] order=[1,0] pad_every=32
// pad=1>"), named `#sharedN` by its one layout. A convert_layout from a
// layout in registers writes one; a padded one is read by convert_layout
// ops of its block into registers, a swizzled tile by dots on tensor
// cores (which a load copied ahead by a pipelined loop also writes):
//
//     %s = convert_layout %x {layout = "#shared0"} : ...
//     %y = convert_layout %s {layout = "#blocked1 dims=[1,0]"} : ...
//     %t = convert_layout %a {layout = "#shared1"} : ...  // swizzled<...>
//     %c = dot %t, %b, %acc {engine = "mma.sync", ...}
//
// verify_gpu_ir (gpu_ir.h) checks them: the reading (each layout fits its
// value, each parent is defined), and that they are complete.
#pragma once

#include "backends/nvptx/assign_layouts.h"
#include "ir/function.h"

#include <string>

namespace blocc::nvptx {

namespace gpu_attr {
inline constexpr const char *kHome = "home";
inline constexpr const char *kLayouts = "layouts";
inline constexpr const char *kStoreLayout = "store_layout";
inline constexpr const char *kReduceLayout = "reduce_layout";
inline constexpr const char *kOperandLayouts = "operand_layouts";
/// The explicit form's one layout of a value.
inline constexpr const char *kLayout = "layout";
/// The function's parents: "blocked0", "blocked1", ...
inline constexpr const char *kParentPrefix = "blocked";
/// The function's shared layouts: "shared0", "shared1", ...
inline constexpr const char *kSharedPrefix = "shared";
} // namespace gpu_attr

/// Whether `function` carries layouts (the gpu-assign-layouts pass has
/// run, or they were written by hand).
bool carries_layouts(const ir::Function &function);

/// Whether `function` carries its layouts in the explicit form (a
/// `layout` attribute, or a convert_layout op).
bool carries_explicit_layouts(const ir::Function &function);

/// Whether `key` names a layout attribute of either form, or of the
/// explicit form.
bool is_layout_key(const std::string &key);
bool is_explicit_layout_key(const std::string &key);

/// `name` for result `k` of `op`: `name` itself for an op of one result,
/// else `name_K`.
std::string result_key(const std::string &name, const ir::Operation &op,
                       size_t k);
/// The explicit form's attribute of result `k`'s layout, of argument `j`'s
/// of a loop body or the function.
std::string result_layout_key(const ir::Operation &op, size_t k);
std::string argument_layout_key(size_t j);

/// Writes `layouts`, assigned to `function`, into it.
void write_layouts(ir::Function &function, const LayoutAssignment &layouts);

/// `layout` over `parent` as the attributes spell it: "#blocked1",
/// "#blocked0 dims=[0]".
std::string layout_text(const BlockedLayout &parent, const Layout &layout);

/// A convert_layout of `v` to the layout `layout` spells ("#blocked1",
/// "#shared0"), at `loc`, for its pass to insert.
std::unique_ptr<ir::Operation> make_convert_layout(ir::Value *v,
                                                   const std::string &layout,
                                                   const ir::Location &loc);

/// "#sharedN", the name of `function`'s shared layout `layout` (`known`:
/// its shared layouts so far, LayoutAssignment::shared_layouts), which
/// becomes one of its attributes where it is not yet.
std::string shared_layout_name(ir::Function &function,
                               std::vector<SharedLayout> &known,
                               const SharedLayout &layout);

} // namespace blocc::nvptx
