#include "backends/nvptx/layout.h"

#include <algorithm>

namespace blocc::nvptx {

std::string ints_text(const std::vector<int64_t> &values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? "," : "") + std::to_string(values[i]);
  return out + "]";
}

std::string ints_text(const std::vector<int> &values) {
  return ints_text(std::vector<int64_t>(values.begin(), values.end()));
}

int64_t BlockedLayout::registers_along(int d) const {
  return std::max<int64_t>(1, shape[d] / tile(d)) * size_per_thread[d] *
         repeats_in_warp(d);
}

int64_t BlockedLayout::num_registers() const {
  int64_t n = 1;
  for (int d = 0; d < rank(); ++d)
    n *= registers_along(d);
  return n;
}

std::vector<int64_t> BlockedLayout::register_offset(int64_t r) const {
  std::vector<int64_t> offset(rank());
  // The last dimension varies fastest across register numbers.
  for (int d = rank() - 1; d >= 0; --d) {
    int64_t along = registers_along(d);
    int64_t c = r % along;
    r /= along;
    // A register's bits along d: its place in the thread's run, then the
    // repetition within the warp, then the repetition of the tile.
    int64_t run = size_per_thread[d], in_warp = repeats_in_warp(d);
    offset[d] = (c / (run * in_warp)) * tile(d) +
                (c / run % in_warp) * (run * threads_per_warp[d]) + c % run;
  }
  return offset;
}

bool BlockedLayout::has_replicas() const {
  for (int d = 0; d < rank(); ++d)
    if (tile(d) > shape[d])
      return true;
  return false;
}

std::string BlockedLayout::str() const {
  return "blocked<shape=" + ints_text(shape) +
         " per_thread=" + ints_text(size_per_thread) +
         " threads=" + ints_text(threads_per_warp) +
         (per_warp.empty() ? "" : " per_warp=" + ints_text(per_warp)) +
         " warps=" + ints_text(warps_per_cta) + ">";
}

namespace {

int log2_exact(int64_t v) {
  return ir::LinearLayout::bits_of(v, "blocked layout extent");
}

} // namespace

ir::LinearLayout linear_layout_of(const BlockedLayout &layout) {
  int rank = layout.rank();
  // One coordinate per output dimension, with `bit` set along d (nothing
  // when the bit lies beyond the shape: that index replicates).
  auto image = [&](int d, int bit) {
    std::vector<int64_t> coordinates(size_t(rank), 0);
    if ((int64_t{1} << bit) < layout.shape[d])
      coordinates[size_t(d)] = int64_t{1} << bit;
    return coordinates;
  };
  std::vector<std::vector<int64_t>> registers, lanes, warps;
  for (int d = rank - 1; d >= 0; --d) {
    int per_thread = log2_exact(layout.size_per_thread[d]);
    int threads = log2_exact(layout.threads_per_warp[d]);
    int in_warp = log2_exact(layout.repeats_in_warp(d));
    int warps_along = log2_exact(layout.warps_per_cta[d]);
    int tile = per_thread + threads + in_warp + warps_along;
    int repeats =
        log2_exact(layout.registers_along(d) /
                   (layout.size_per_thread[d] * layout.repeats_in_warp(d)));
    for (int b = 0; b < per_thread; ++b)
      registers.push_back(image(d, b));
    for (int b = 0; b < in_warp; ++b)
      registers.push_back(image(d, per_thread + threads + b));
    for (int b = 0; b < repeats; ++b)
      registers.push_back(image(d, tile + b));
    for (int b = 0; b < threads; ++b)
      lanes.push_back(image(d, per_thread + b));
    for (int b = 0; b < warps_along; ++b)
      warps.push_back(image(d, per_thread + threads + in_warp + b));
  }
  std::vector<ir::LinearLayout::Dimension> outputs;
  for (int d = 0; d < rank; ++d)
    outputs.push_back({"dim" + std::to_string(d), log2_exact(layout.shape[d])});
  auto bits = [](const std::vector<std::vector<int64_t>> &images) {
    return static_cast<int>(images.size());
  };
  return ir::LinearLayout::from_images({{"register", bits(registers)},
                                        {"lane", bits(lanes)},
                                        {"warp", bits(warps)}},
                                       outputs, {registers, lanes, warps});
}

ir::LinearLayout linear_layout_of(const BlockedLayout &parent,
                                  const Layout &layout) {
  // Parent coordinates -> the value's: each parent dimension the value
  // holds (with more than one element) goes to its value dimension; the
  // others are dropped.
  std::vector<ir::LinearLayout::Dimension> inputs, outputs;
  for (int d = 0; d < parent.rank(); ++d)
    inputs.push_back({"dim" + std::to_string(d), log2_exact(parent.shape[d])});
  for (size_t k = 0; k < layout.shape.size(); ++k)
    outputs.push_back({"dim" + std::to_string(k), log2_exact(layout.shape[k])});
  std::vector<std::vector<std::vector<int64_t>>> images(inputs.size());
  for (int d = 0; d < parent.rank(); ++d)
    for (int b = 0; b < inputs[size_t(d)].bits; ++b) {
      std::vector<int64_t> coordinates(outputs.size(), 0);
      for (size_t k = 0; k < layout.dims.size(); ++k)
        if (layout.dims[k] == d && layout.shape[k] != 1)
          coordinates[k] = int64_t{1} << b;
      images[size_t(d)].push_back(coordinates);
    }
  return linear_layout_of(parent).compose(
      ir::LinearLayout::from_images(inputs, outputs, images));
}

bool same_linear_layout(const BlockedLayout &pa, const Layout &a,
                        const BlockedLayout &pb, const Layout &b) {
  if (a == b)
    return true;
  return a.shape == b.shape &&
         linear_layout_of(pa, a) == linear_layout_of(pb, b);
}

int64_t vector_run(const BlockedLayout &parent, const Layout &layout, int dim,
                   int64_t element_bytes) {
  const int last = parent.rank() - 1;
  if (layout.shape[size_t(dim)] <= 1 || layout.dims[size_t(dim)] != last ||
      parent.shape[last] != layout.shape[size_t(dim)])
    return 1;
  constexpr int64_t kMaxVectorBytes = 16;
  return std::min(parent.size_per_thread[last],
                  std::max<int64_t>(1, kMaxVectorBytes / element_bytes));
}

int64_t row_run(const BlockedLayout &parent, const Layout &layout,
                int64_t element_bytes) {
  const int last = static_cast<int>(layout.shape.size()) - 1;
  return last < 0 ? 1 : vector_run(parent, layout, last, element_bytes);
}

std::vector<int64_t> inverse_order(const std::vector<int64_t> &order) {
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return inverse;
}

Layout permuted(const Layout &layout, const std::vector<int64_t> &order) {
  Layout result = layout;
  for (size_t i = 0; i < order.size(); ++i) {
    result.dims[i] = layout.dims[static_cast<size_t>(order[i])];
    result.shape[i] = layout.shape[static_cast<size_t>(order[i])];
  }
  return result;
}

bool is_full(const BlockedLayout &parent, const Layout &layout) {
  if (layout.shape != parent.shape)
    return false;
  for (size_t k = 0; k < layout.dims.size(); ++k)
    if (layout.dims[k] != static_cast<int>(k))
      return false;
  return true;
}

BlockedLayout choose_blocked_layout(const std::vector<int64_t> &shape,
                                    int64_t vector_width, int num_warps) {
  BlockedLayout l;
  int rank = static_cast<int>(shape.size());
  l.shape = shape;
  l.size_per_thread.assign(rank, 1);
  l.threads_per_warp.assign(rank, 1);
  l.warps_per_cta.assign(rank, 1);
  l.size_per_thread[rank - 1] = std::min(vector_width, shape[rank - 1]);
  int64_t threads = kWarpSize, warps = num_warps;
  for (int d = rank - 1; d >= 0; --d) {
    int64_t room = std::max<int64_t>(1, shape[d] / l.size_per_thread[d]);
    l.threads_per_warp[d] = std::min(threads, room);
    threads /= l.threads_per_warp[d];
  }
  l.threads_per_warp[0] *= threads;
  for (int d = rank - 1; d >= 0; --d) {
    int64_t room = std::max<int64_t>(
        1, shape[d] / (l.size_per_thread[d] * l.threads_per_warp[d]));
    l.warps_per_cta[d] = std::min(warps, room);
    warps /= l.warps_per_cta[d];
  }
  l.warps_per_cta[0] *= warps;
  return l;
}

int64_t canonical_register(const BlockedLayout &parent, const Layout &layout,
                           int64_t r) {
  // Registers differing only along parent dimensions the value does not
  // hold (sliced away or of size 1 in the value) hold the same element.
  std::vector<bool> held(parent.rank(), false);
  for (size_t k = 0; k < layout.dims.size(); ++k)
    if (layout.shape[k] != 1)
      held[layout.dims[k]] = true;
  std::vector<int64_t> coordinate(parent.rank());
  int64_t rest = r;
  for (int d = parent.rank() - 1; d >= 0; --d) {
    coordinate[d] = rest % parent.registers_along(d);
    rest /= parent.registers_along(d);
  }
  int64_t canonical = 0;
  for (int d = 0; d < parent.rank(); ++d)
    canonical =
        canonical * parent.registers_along(d) + (held[d] ? coordinate[d] : 0);
  return canonical;
}

int64_t equal_run_start(const BlockedLayout &parent, const Layout &layout,
                        const std::vector<int64_t> &constancy, int64_t r) {
  std::vector<int64_t> coordinate(parent.rank());
  int64_t rest = r;
  for (int d = parent.rank() - 1; d >= 0; --d) {
    coordinate[d] = rest % parent.registers_along(d);
    rest /= parent.registers_along(d);
  }
  // A thread's elements along d come in runs of size_per_thread[d] that
  // start at multiples of it, so a run of k equal elements (k a power of
  // two, starting at a multiple of k) is aligned inside them too.
  for (size_t k = 0; k < layout.dims.size() && k < constancy.size(); ++k) {
    int d = layout.dims[k];
    if (layout.shape[k] == 1)
      continue;
    int64_t run = std::min(constancy[k], parent.size_per_thread[d]);
    coordinate[d] -= (coordinate[d] % parent.size_per_thread[d]) % run;
  }
  int64_t start = 0;
  for (int d = 0; d < parent.rank(); ++d)
    start = start * parent.registers_along(d) + coordinate[d];
  return canonical_register(parent, layout, start);
}

std::string describe(const BlockedLayout &parent, const Layout &layout) {
  std::vector<int64_t> sliced;
  for (int d = 0; d < parent.rank(); ++d)
    if (std::find(layout.dims.begin(), layout.dims.end(), d) ==
        layout.dims.end())
      sliced.push_back(d);
  if (sliced.empty())
    return parent.str();
  return "slice of " + parent.str() + " along " + ints_text(sliced);
}

} // namespace blocc::nvptx
