#include "backends/nvptx/shared_layouts.h"

#include <map>
#include <set>

#include "backends/nvptx/layout.h"

#include "ir/error.h"

#include <algorithm>
#include <numeric>

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
  int atom_bits =
      swizzle.atom_columns ? log2_of(swizzle.atom_columns, "atom") : col_bits;
  if (atom_bits > col_bits)
    throw Error("shared layout: atoms of " +
                std::to_string(swizzle.atom_columns) +
                " columns are wider than a row of " + std::to_string(cols));
  if (vector_bits + phase_bits > atom_bits)
    throw Error("shared layout: " + std::to_string(swizzle.max_phase) +
                " phases of " + std::to_string(swizzle.vector) +
                "-element vectors do not fit a row of " +
                std::to_string(int64_t{1} << atom_bits));
  std::vector<std::vector<int64_t>> images;
  for (int b = 0; b < atom_bits; ++b) // the position within the atom's row
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
  for (int b = atom_bits; b < col_bits; ++b) // the atom
    images.push_back({0, int64_t{1} << b});
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

Swizzle wgmma_swizzle(int64_t row_bytes, int64_t element_bytes) {
  Swizzle s =
      swizzle_for_rows(std::min<int64_t>(row_bytes, 128), element_bytes);
  if (row_bytes > 128)
    s.atom_columns = 128 / element_bytes;
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

namespace {

bool power_of_two(int64_t v) { return v >= 1 && (v & (v - 1)) == 0; }

} // namespace

SharedLayout SharedLayout::padded_row_major(const std::vector<int64_t> &shape,
                                            int64_t pad) {
  SharedLayout layout;
  layout.shape = shape;
  for (size_t k = shape.size(); k-- > 0;)
    layout.order.push_back(static_cast<int64_t>(k));
  layout.pad = pad;
  return layout;
}

SharedLayout SharedLayout::for_conversion(const BlockedLayout &from_parent,
                                          const Layout &from,
                                          const BlockedLayout &to_parent,
                                          const Layout &to,
                                          int64_t element_bytes) {
  // (A reshape writes and reads layouts of two shapes: each runs along
  // its own last dimension, the row-major index in common.)
  const int64_t from_run = row_run(from_parent, from, element_bytes);
  const int64_t to_run = row_run(to_parent, to, element_bytes);
  const int64_t shorter = std::min(from_run, to_run);
  // Where both move vectors of different lengths, a swizzled tile lets
  // each move its own, where neither side then meets itself on a bank:
  // padding by the shorter run cuts the longer.
  if (from.shape.size() == 2 && from.shape == to.shape && shorter >= 2 &&
      from_run != to_run) {
    const int64_t row_bytes = from.shape[1] * element_bytes;
    if (power_of_two(row_bytes) && row_bytes >= 16 && element_bytes <= 8) {
      SharedLayout s;
      s.kind = Kind::Swizzled;
      s.shape = from.shape;
      s.order = {1, 0};
      s.swizzle = swizzle_for_rows(row_bytes, element_bytes);
      if (worst_bank_conflict(from_parent, from, s, from_run, element_bytes) ==
              1 &&
          worst_bank_conflict(to_parent, to, s, to_run, element_bytes) == 1)
        return s;
    }
  }
  return padded_row_major(from.shape, shorter);
}

int64_t worst_bank_conflict(const BlockedLayout &parent, const Layout &layout,
                            const SharedLayout &shared, int64_t run,
                            int64_t element_bytes) {
  const ir::LinearLayout l = linear_layout_of(parent, layout);
  // (dim0, dim1, ...) -> offset, pads not counted.
  const ir::LinearLayout offsets = shared.linear_layout().invert();
  auto word_of = [&](const ir::LinearLayout::Point &at) {
    int64_t offset = offsets.apply(at).at("offset");
    if (shared.kind == SharedLayout::Kind::Padded)
      offset += offset / shared.pad_every * shared.pad;
    return offset * element_bytes / 4;
  };
  const int64_t access_bytes = run * element_bytes;
  const int64_t words = std::max<int64_t>(1, access_bytes / 4);
  const int64_t group = std::min<int64_t>(32, 128 / access_bytes);
  const int64_t registers = int64_t(1) << l.input_bits("register");
  const int64_t warps = int64_t(1) << l.input_bits("warp");
  int64_t worst = 1;
  for (int64_t warp = 0; warp < warps; ++warp)
    for (int64_t r = 0; r < registers; r += run)
      for (int64_t first = 0; first < 32; first += group) {
        std::map<int64_t, std::set<int64_t>> words_of_bank;
        for (int64_t lane = first; lane < first + group; ++lane) {
          const int64_t word = word_of(
              l.apply({{"register", r}, {"lane", lane}, {"warp", warp}}));
          for (int64_t i = 0; i < words; ++i)
            words_of_bank[(word + i) % 32].insert(word + i);
        }
        for (const auto &[bank, in_bank] : words_of_bank)
          worst = std::max<int64_t>(worst, int64_t(in_bank.size()));
      }
  return worst;
}

std::string SharedLayout::str() const {
  std::string s = kind == Kind::Padded ? "padded" : "swizzled";
  s += "<shape=" + ints_text(shape) + " order=" + ints_text(order);
  if (kind == Kind::Padded)
    return s + " pad_every=" + std::to_string(pad_every) +
           " pad=" + std::to_string(pad) + ">";
  s += " vector=" + std::to_string(swizzle.vector) +
       " per_phase=" + std::to_string(swizzle.per_phase) +
       " max_phase=" + std::to_string(swizzle.max_phase);
  if (swizzle.atom_columns)
    s += " atom_columns=" + std::to_string(swizzle.atom_columns);
  return s + ">";
}

std::string SharedLayout::problem() const {
  if (shape.empty())
    return "it has no dimensions";
  for (int64_t n : shape)
    if (!power_of_two(n))
      return "its shape's sizes must be powers of two";
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> dims(shape.size());
  std::iota(dims.begin(), dims.end(), 0);
  if (sorted != dims)
    return "its order must name each of its " + std::to_string(shape.size()) +
           " dimensions once";
  if (kind == Kind::Padded) {
    if (!power_of_two(pad_every) || pad < 0)
      return "pad_every must be a power of two and pad not negative";
    return "";
  }
  if (shape.size() != 2)
    return "a swizzled layout is a 2-D tile";
  const int64_t columns = shape[size_t(order[0])];
  if (!power_of_two(swizzle.vector) || !power_of_two(swizzle.per_phase) ||
      !power_of_two(swizzle.max_phase))
    return "vector, per_phase and max_phase must be powers of two";
  if (swizzle.atom_columns &&
      (!power_of_two(swizzle.atom_columns) || swizzle.atom_columns > columns))
    return "atom_columns must be a power of two no wider than a row of " +
           std::to_string(columns);
  const int64_t row = swizzle.atom_columns ? swizzle.atom_columns : columns;
  if (swizzle.vector * swizzle.max_phase > row)
    return std::to_string(swizzle.max_phase) + " phases of " +
           std::to_string(swizzle.vector) +
           "-element vectors do not fit a row of " + std::to_string(row);
  return "";
}

namespace {

/// A swizzled tile whose rows run along `shape`'s dimension 0 ([0,1]: the
/// value stored column by column): the tile's map with its two
/// coordinates swapped.
ir::LinearLayout swizzled_columns(const std::vector<int64_t> &shape,
                                  const Swizzle &swizzle) {
  ir::LinearLayout tile = swizzled_shared_layout(shape[1], shape[0], swizzle);
  std::vector<std::vector<int64_t>> images;
  for (int b = 0; b < tile.input_bits("offset"); ++b) {
    ir::LinearLayout::Point p = tile.image("offset", b);
    images.push_back({p.at("dim1"), p.at("dim0")});
  }
  return ir::LinearLayout::from_images(
      {{"offset", tile.input_bits("offset")}},
      {{"dim0", log2_of(shape[0], "a dimension")},
       {"dim1", log2_of(shape[1], "a dimension")}},
      {images});
}

} // namespace

ir::LinearLayout SharedLayout::linear_layout() const {
  if (kind == Kind::Swizzled)
    return order[0] == 1 ? swizzled_shared_layout(shape[0], shape[1], swizzle)
                         : swizzled_columns(shape, swizzle);
  std::vector<ir::LinearLayout::Dimension> outputs;
  for (size_t d = 0; d < shape.size(); ++d)
    outputs.push_back(
        {"dim" + std::to_string(d), log2_of(shape[d], "a dimension")});
  // Offset bits from the lowest: the fastest dimension's first.
  std::vector<std::vector<int64_t>> images;
  for (int64_t d : order)
    for (int b = 0; b < outputs[size_t(d)].bits; ++b) {
      std::vector<int64_t> image(shape.size(), 0);
      image[size_t(d)] = int64_t{1} << b;
      images.push_back(image);
    }
  int bits = static_cast<int>(images.size());
  return ir::LinearLayout::from_images({{"offset", bits}}, outputs, {images});
}

SharedTile SharedLayout::tile(int64_t element_bytes) const {
  SharedTile t;
  t.rows = shape[size_t(order[1])];
  t.columns = shape[size_t(order[0])];
  t.element_bytes = element_bytes;
  t.swizzle = swizzle;
  return t;
}

int64_t SharedLayout::buffer_elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return kind == Kind::Padded ? n + n / pad_every * pad : n;
}

SharedLayout SharedLayout::permuted(const std::vector<int64_t> &order) const {
  SharedLayout result = *this;
  for (size_t i = 0; i < order.size(); ++i)
    result.shape[i] = shape[static_cast<size_t>(order[i])];
  const std::vector<int64_t> position = inverse_order(order);
  for (int64_t &dim : result.order)
    dim = position[static_cast<size_t>(dim)];
  return result;
}

bool SharedLayout::operator==(const SharedLayout &other) const {
  return str() == other.str();
}

} // namespace blocc::nvptx
