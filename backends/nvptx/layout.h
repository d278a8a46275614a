// How the elements of a block value are spread over the threads of a CTA.
//
// A BlockedLayout distributes a shape over `num_warps` warps of 32 threads:
// along each dimension d, each thread owns `size_per_thread[d]` consecutive
// elements, `threads_per_warp[d]` threads of a warp sit side by side, the
// warp's part repeats `per_warp[d]` times (each thread holding the element
// at the same place of every repetition: the warpgroup MMA's accumulator
// gives a warp 16 rows as two 8-row passes of its lanes), then
// `warps_per_cta[d]` warps sit side by side, and the resulting tile repeats
// until it covers the shape. The last dimension is the fastest: a thread's
// elements along it are adjacent in its registers, and consecutive threads of a
// warp own consecutive runs, so a warp's accesses to contiguous memory coalesce
// and a thread's run of 16 bytes becomes one vector access (ld.global.v4.f32).
// When the tile is larger than the shape (a small block on many threads),
// the surplus threads hold copies of elements owned by others ("replicas");
// only owners write memory.
//
// A Layout is how one value uses a BlockedLayout (its *parent*): each of the
// value's dimensions maps to a parent dimension (`dims`), where a value
// dimension of size 1 holds index 0 for every thread (a value about to be
// broadcast), and parent dimensions the value does not map to are sliced
// away (a value about to be expanded: every thread along them holds the
// same element). Registers are numbered as the parent's, so broadcast and
// expand_dims move no data: a thread's register r of the operand is its
// register r of the result. Registers whose elements coincide (because of
// slicing or size-1 dimensions) share one value; `canonical_register` names
// the first of each group.
#pragma once

#include "ir/linear_layout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blocc::nvptx {

constexpr int kWarpSize = 32;

struct BlockedLayout {
  std::vector<int64_t> shape;
  std::vector<int64_t> size_per_thread;
  std::vector<int64_t> threads_per_warp;
  std::vector<int64_t> warps_per_cta;
  /// Repetitions of a warp's lanes along each dimension before the next
  /// warp's elements; empty where every dimension has one (the usual case,
  /// which the IR's text leaves out). A dimension repeated within a warp
  /// has no replicas: its tile fits its extent (verify_gpu_ir).
  std::vector<int64_t> per_warp = {};

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t repeats_in_warp(int d) const {
    return per_warp.empty() ? 1 : per_warp[size_t(d)];
  }
  /// Elements one warp covers along d.
  int64_t warp_tile(int d) const {
    return size_per_thread[d] * threads_per_warp[d] * repeats_in_warp(d);
  }
  /// Elements one pass of all threads covers along d.
  int64_t tile(int d) const { return warp_tile(d) * warps_per_cta[d]; }
  /// Registers a thread holds along d (repetitions of the tile times the
  /// elements per thread).
  int64_t registers_along(int d) const;
  int64_t num_registers() const;
  /// The offset of register r's element from the thread's first element,
  /// per dimension.
  std::vector<int64_t> register_offset(int64_t r) const;
  /// True when some threads hold replicas (the tile exceeds the shape).
  bool has_replicas() const;
  /// "blocked<shape=[1024] per_thread=[4] threads=[32] warps=[4]>", with
  /// " per_warp=[..]" before " warps=" where a dimension repeats in a warp.
  std::string str() const;

  friend bool operator==(const BlockedLayout &,
                         const BlockedLayout &) = default;
};

/// A list of numbers as the GPU IR's layouts spell it: "[64,64]".
std::string ints_text(const std::vector<int64_t> &values);
std::string ints_text(const std::vector<int> &values);

/// `layout` as a linear layout: (register, lane, warp) -> (dim0, dim1, ...).
/// Register, lane and warp numbers fill the last dimension first, as the
/// lowering numbers them; a thread's register bits along a dimension are
/// its run of size_per_thread elements, then the tile's repetitions; lane
/// and warp bits beyond the shape have image 0 (replicas).
ir::LinearLayout linear_layout_of(const BlockedLayout &layout);

/// The blocked layout for `shape` on `num_warps` warps, with
/// `vector_width` consecutive elements of the last dimension per thread
/// (clamped to the shape): threads and then warps fill the dimensions from
/// the last one, and what is left over replicates along the first.
BlockedLayout choose_blocked_layout(const std::vector<int64_t> &shape,
                                    int64_t vector_width, int num_warps);

struct Layout {
  int parent = 0;             // index into the layout assignment's parents
  std::vector<int> dims;      // value dimension -> parent dimension
  std::vector<int64_t> shape; // the value's shape

  friend bool operator==(const Layout &, const Layout &) = default;
  friend auto operator<=>(const Layout &, const Layout &) = default;
};

/// The inverse of a permute's `order`: where each operand dimension goes
/// (inverse[order[i]] = i), itself the order that permutes back.
std::vector<int64_t> inverse_order(const std::vector<int64_t> &order);

/// The layout of a permute's result (its dimension i is the operand's
/// dimension order[i]) whose operand is in `layout`: the same registers
/// of the same threads, each element under its new index.
Layout permuted(const Layout &layout, const std::vector<int64_t> &order);

/// A value in `layout` over `parent` as a linear layout: (register, lane,
/// warp) -> the value's dimensions. Parent dimensions the value slices
/// away, and the value's dimensions of size 1, have image 0: the bits that
/// walk them replicate the value's elements.
ir::LinearLayout linear_layout_of(const BlockedLayout &parent,
                                  const Layout &layout);

/// Whether a value in `a` (over parent `pa`) and in `b` (over `pb`) sit in
/// the same registers of the same threads: their linear layouts are equal,
/// so the registers of one are the other's, register for register, and a
/// conversion between them moves nothing.
bool same_linear_layout(const BlockedLayout &pa, const Layout &a,
                        const BlockedLayout &pb, const Layout &b);

/// Whether `layout` holds every dimension of `parent` in order, at the
/// parent's extent: each element then has one owner (the thread whose
/// replicated lane and warp bits are 0), which stores and prints rely on.
bool is_full(const BlockedLayout &parent, const Layout &layout);

/// How many consecutive registers of `layout` hold consecutive elements
/// along value dimension `dim` (the parent's last, at its extent), at most
/// one 16-byte vector of `element_bytes` elements; 1 elsewhere. Registers
/// r .. r + run - 1 are such a run where r's offset along `dim` is a
/// multiple of it.
int64_t vector_run(const BlockedLayout &parent, const Layout &layout, int dim,
                   int64_t element_bytes);
/// vector_run along the value's last dimension, along which shared
/// memory holds it row by row; 1 for a value of no dimension.
int64_t row_run(const BlockedLayout &parent, const Layout &layout,
                int64_t element_bytes);

/// The first register of `parent` holding the same element of a value in
/// `layout` as register r.
int64_t canonical_register(const BlockedLayout &parent, const Layout &layout,
                           int64_t r);

/// The first register of `parent` holding an element equal to register r's
/// in a value whose runs of equal elements (axis info's constancy, per
/// value dimension) are `constancy` long: within a thread's run of
/// consecutive elements, registers of one run of equal elements share its
/// first one. Canonical, as canonical_register.
int64_t equal_run_start(const BlockedLayout &parent, const Layout &layout,
                        const std::vector<int64_t> &constancy, int64_t r);

/// "blocked<...>", or "slice of blocked<...> along [1]" for a value that
/// drops parent dimensions, as messages name layouts.
std::string describe(const BlockedLayout &parent, const Layout &layout);

} // namespace blocc::nvptx
