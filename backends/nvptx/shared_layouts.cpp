#include "backends/nvptx/shared_layouts.h"

#include "ir/error.h"

#include <algorithm>

namespace blocc::nvptx {

namespace {

int log2_of(int64_t v, const char *what) {
  return ir::LinearLayout::bits_of(v, std::string("shared layout: ") + what);
}

} // namespace

ir::LinearLayout swizzled_shared_layout(int64_t rows, int64_t cols,
                                        const Swizzle &swizzle) {
  int row_bits = log2_of(rows, "rows"), col_bits = log2_of(cols, "columns");
  int vector_bits = log2_of(swizzle.vector, "vector");
  int per_phase_bits = log2_of(swizzle.per_phase, "per_phase");
  int phase_bits = log2_of(swizzle.max_phase, "max_phase");
  if (vector_bits + phase_bits > col_bits)
    throw Error("shared layout: " + std::to_string(swizzle.max_phase) +
                " phases of " + std::to_string(swizzle.vector) +
                "-element vectors do not fit a row of " + std::to_string(cols));
  std::vector<std::vector<int64_t>> images;
  for (int b = 0; b < col_bits; ++b) // the position within the row
    images.push_back({0, int64_t{1} << b});
  for (int r = 0; r < row_bits; ++r) {
    // Row bit r is phase bit r - per_phase_bits where that is a phase bit:
    // it flips the same bit of the vector index (XOR is its own inverse).
    int phase_bit = r - per_phase_bits;
    int64_t flip = phase_bit >= 0 && phase_bit < phase_bits
                       ? int64_t{1} << (vector_bits + phase_bit)
                       : 0;
    images.push_back({int64_t{1} << r, flip});
  }
  return ir::LinearLayout::from_images({{"offset", row_bits + col_bits}},
                                       {{"dim0", row_bits}, {"dim1", col_bits}},
                                       {images});
}

Swizzle swizzle_for_rows(int64_t row_bytes, int64_t element_bytes) {
  log2_of(row_bytes, "row bytes");
  if (row_bytes < 16 || element_bytes > 16)
    throw Error("shared layout: rows of " + std::to_string(row_bytes) +
                " bytes are no whole 16-byte vectors of " +
                std::to_string(element_bytes) + "-byte elements");
  Swizzle s;
  s.vector = 16 / element_bytes;
  s.max_phase = std::min<int64_t>(8, row_bytes / 16);
  s.per_phase = std::max<int64_t>(1, 128 / row_bytes);
  return s;
}

ir::LinearLayout SharedTile::offsets() const {
  return swizzled_shared_layout(rows, columns, swizzle).invert();
}

SharedTile swizzled_tile(int64_t rows, int64_t columns, int64_t element_bytes) {
  SharedTile tile;
  tile.rows = rows;
  tile.columns = columns;
  tile.element_bytes = element_bytes;
  tile.swizzle = swizzle_for_rows(columns * element_bytes, element_bytes);
  return tile;
}

} // namespace blocc::nvptx
