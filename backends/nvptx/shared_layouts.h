// Shared-memory layouts as linear layouts: which tile element each offset
// (in elements) of a shared buffer holds. A row-major tile whose rows are
// XOR-swizzled keeps a warp's reads of one column of 16-byte vectors (as
// ldmatrix and MMA operand loads make them) on distinct banks, where a
// plain row-major tile with rows of 128 bytes puts all of them on the same
// banks; and it needs no padding, so that a tile takes exactly its bytes.
//
// SharedLayout names either kind as the GPU IR does (the function's
// attributes `shared0`, `shared1`, ...: layout_attrs.h):
//
//   padded<shape=[64,64] order=[1,0] pad_every=32 pad=1>
//       the elements one dimension after another, the first of `order`
//       fastest ([1,0]: row by row), with `pad` unused elements after
//       every `pad_every`, so that the threads of a warp, which hold runs
//       of consecutive elements, reach different banks
//   swizzled<shape=[64,64] order=[1,0] vector=8 per_phase=1 max_phase=8>
//       a tile row by row, each row's vectors swizzled (Swizzle below);
//       order=[0,1] stores the value column by column (its dimension 0
//       runs along the tile's rows), as a dot operand with K slowest is
//       kept for ldmatrix .trans; " atom_columns=64" at the end splits
//       the rows into atoms of 64 columns (Swizzle)
#pragma once

#include "backends/nvptx/layout.h"
#include "ir/linear_layout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blocc::nvptx {

/// `n` rounded up to a multiple of `to` (bytes of shared memory placed at
/// an alignment).
inline int64_t align_up(int64_t n, int64_t to) {
  return (n + to - 1) / to * to;
}

/// How the rows of a tile are swizzled: a row's vectors of `vector`
/// elements are permuted by XOR with its phase, (row / per_phase) %
/// max_phase. max_phase 1 is no swizzle. All powers of two.
///
/// `atom_columns` (0: the whole row) splits a tile whose rows are longer
/// into atoms of that many columns, one after another, each holding every
/// row's part of its columns, row by row: the warpgroup MMA reads operands
/// in atoms of 8 rows of at most 128 bytes, the rows of one atom 128 bytes
/// apart (its "swizzle atoms", 1024 bytes each at 128-byte rows).
struct Swizzle {
  int64_t vector = 1;
  int64_t per_phase = 1;
  int64_t max_phase = 1;
  int64_t atom_columns = 0;
  friend bool operator==(const Swizzle &, const Swizzle &) = default;
};

/// offset -> (dim0 = row, dim1 = column) for a rows x cols tile stored row
/// by row, each row swizzled by `swizzle`: the element at (row, col) sits
/// at offset row * cols + ((col / vector) ^ phase(row)) * vector + col %
/// vector; in atoms of W = atom_columns columns, at (col / W) * rows * W +
/// row * W + the same within the atom's row.
ir::LinearLayout swizzled_shared_layout(int64_t rows, int64_t cols,
                                        const Swizzle &swizzle);

/// The swizzle the warpgroup MMA reads a tile of rows of `row_bytes` with:
/// swizzle_for_rows of rows of at most 128 bytes (its 128-, 64- and
/// 32-byte swizzling modes), in atoms of 128 bytes where rows are longer.
Swizzle wgmma_swizzle(int64_t row_bytes, int64_t element_bytes);

/// The swizzle of rows of `row_bytes` (a power of two, 16 or more) in
/// 16-byte vectors (what ldmatrix reads per row and cp.async writes per
/// thread), as Triton and CUTLASS choose it: the phase changes every
/// 128 / row_bytes rows (every row from 128 bytes on) and takes
/// min(8, row_bytes / 16) values, so that any 8 consecutive rows of an
/// aligned group of 8 (one ldmatrix matrix) put a column of vectors on 8
/// different groups of 4 banks: all 32 banks once.
Swizzle swizzle_for_rows(int64_t row_bytes, int64_t element_bytes);

/// A tile in shared memory: `rows` rows of `columns` elements of
/// `element_bytes`, stored row by row without padding, each row's 16-byte
/// vectors swizzled by `swizzle` (swizzle_for_rows).
struct SharedTile {
  int64_t rows = 0, columns = 0;
  int64_t element_bytes = 2;
  Swizzle swizzle;
  int64_t elements() const { return rows * columns; }
  int64_t bytes() const { return elements() * element_bytes; }
  /// (dim0 = row, dim1 = column) -> offset: where each element sits, the
  /// inverse of swizzled_shared_layout. Every address of the tile is read
  /// off this map (tile_addresses.h).
  ir::LinearLayout offsets() const;
};

/// The swizzled tile of rows x columns elements of `element_bytes`.
SharedTile swizzled_tile(int64_t rows, int64_t columns, int64_t element_bytes);

/// A block value's layout in shared memory: at which offset (in elements)
/// of a buffer each of its elements sits.
struct SharedLayout {
  enum class Kind { Padded, Swizzled };
  Kind kind = Kind::Padded;
  std::vector<int64_t> shape;
  /// The dimensions from the fastest varying to the slowest.
  std::vector<int64_t> order;
  /// Padded: `pad` elements after every `pad_every`.
  int64_t pad_every = 32, pad = 1;
  /// Swizzled (2-D; the tile's rows run along order[0]): how the rows'
  /// vectors are permuted.
  Swizzle swizzle;

  /// Row by row (the last dimension fastest), `pad` elements after every
  /// 32.
  static SharedLayout padded_row_major(const std::vector<int64_t> &shape,
                                       int64_t pad = 1);
  /// The layout a conversion from `from` to `to` (over their parents)
  /// writes through: row by row, padded after every 32 elements by the
  /// shorter of the runs that the writer and the reader hold (vector_run),
  /// which both then move as aligned vectors. A row of 32 elements then
  /// starts that many banks further than the row before, as one element
  /// does for scalar accesses: the threads of a warp, which hold runs
  /// along rows and step across rows, reach different banks. (Padding by
  /// the longer run would make the side that reads single elements down
  /// columns meet itself in every 32 / run rows.)
  /// Where both hold runs, of two lengths (an MMA's pairs of columns read
  /// back as 16-byte rows), a 2-D value whose rows are whole 16-byte
  /// vectors goes through a swizzled tile instead (swizzle_for_rows),
  /// where neither side's accesses then meet on a bank
  /// (worst_bank_conflict): each moves its own runs, the longer ones
  /// whole.
  static SharedLayout for_conversion(const BlockedLayout &from_parent,
                                     const Layout &from,
                                     const BlockedLayout &to_parent,
                                     const Layout &to, int64_t element_bytes);

  /// What the GPU IR spells: "padded<shape=[..] order=[..] pad_every=N
  /// pad=N>" or "swizzled<shape=[..] order=[..] vector=N per_phase=N
  /// max_phase=N>".
  std::string str() const;
  /// offset -> (dim0, dim1, ...): the element each offset holds, offsets
  /// counted without the pads (a padded layout's offset o sits at o + o /
  /// pad_every * pad in the buffer).
  ir::LinearLayout linear_layout() const;
  /// A swizzled layout's tile of `element_bytes` elements: its rows run
  /// along order[1], its columns along order[0].
  SharedTile tile(int64_t element_bytes) const;
  /// Elements the buffer holds, pads included.
  int64_t buffer_elements() const;
  /// Why the layout is not one (sizes not powers of two, `order` not a
  /// permutation of the dimensions, a swizzle not of a 2-D
  /// tile, or one whose vectors do not fit its rows); empty where it is.
  std::string problem() const;
  /// The layout of a permute's result (its dimension i is this layout's
  /// dimension order[i]) that reads the same buffer: the same offsets,
  /// each holding the element it held, under its new index.
  SharedLayout permuted(const std::vector<int64_t> &order) const;
  bool operator==(const SharedLayout &other) const;
};

/// The most distinct 4-byte words one bank serves in one pass of a warp's
/// accesses of the elements of `layout` (over `parent`) through `shared`,
/// each thread moving runs of `run` registers of `element_bytes` as one
/// vector: lanes go in groups that move 128 bytes together (32 lanes of 4
/// bytes, 16 of 8, 8 of 16), and a bank serves one word per pass; 1 where
/// no two lanes of a pass meet on a bank.
int64_t worst_bank_conflict(const BlockedLayout &parent, const Layout &layout,
                            const SharedLayout &shared, int64_t run,
                            int64_t element_bytes);

} // namespace blocc::nvptx
