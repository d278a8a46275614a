#include "backends/nvptx/shape_layouts.h"

#include "ir/error.h"

#include <algorithm>
#include <map>

namespace blocc::nvptx {

using ir::OpCode;

namespace {

std::vector<int64_t> without_ones(const std::vector<int64_t> &shape) {
  std::vector<int64_t> out;
  for (int64_t d : shape)
    if (d != 1)
      out.push_back(d);
  return out;
}

int64_t flat_index(const std::vector<int64_t> &coordinates,
                   const std::vector<int64_t> &shape) {
  int64_t flat = 0;
  for (size_t k = 0; k < shape.size(); ++k)
    flat = flat * shape[k] + coordinates[k];
  return flat;
}

std::vector<int64_t> unflatten(int64_t flat,
                               const std::vector<int64_t> &shape) {
  std::vector<int64_t> coordinates(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    coordinates[k] = flat % shape[k];
    flat /= shape[k];
  }
  return coordinates;
}

int log2_of(int64_t n) {
  int bits = 0;
  while ((int64_t{1} << bits) < n)
    ++bits;
  return bits;
}

/// The first element (per parent dimension) of `thread`, as
/// KernelLowering::compute_thread_positions computes it.
std::vector<int64_t> thread_first(const BlockedLayout &p, int64_t thread) {
  std::vector<int64_t> first(p.rank());
  int64_t lane_rest = thread % kWarpSize, warp_rest = thread / kWarpSize;
  for (int d = p.rank() - 1; d >= 0; --d) {
    int64_t lane_d = lane_rest % p.threads_per_warp[d];
    lane_rest /= p.threads_per_warp[d];
    int64_t warp_d = warp_rest % p.warps_per_cta[d];
    warp_rest /= p.warps_per_cta[d];
    first[d] =
        (warp_d * p.threads_per_warp[d] * p.repeats_in_warp(d) + lane_d) *
        p.size_per_thread[d];
    if (p.tile(d) > p.shape[d])
      first[d] %= p.shape[d];
  }
  return first;
}

std::vector<int64_t> value_coordinates(const Layout &layout,
                                       const std::vector<int64_t> &first,
                                       const std::vector<int64_t> &offset) {
  std::vector<int64_t> coordinates(layout.shape.size(), 0);
  for (size_t k = 0; k < layout.shape.size(); ++k)
    if (layout.shape[k] != 1)
      coordinates[k] = first[layout.dims[k]] + offset[layout.dims[k]];
  return coordinates;
}

/// The row-major index bit (as a number: 0 or a power of two) that each
/// lane bit, warp bit and register bit of a thread contributes to the
/// element it holds.
struct BitImages {
  std::vector<int64_t> lanes, warps, registers;
};

BitImages bit_images(const BlockedLayout &p, const Layout &layout,
                     int num_warps) {
  auto image = [&](int64_t thread, int64_t r) {
    return flat_index(element_coordinates(p, layout, thread, r), layout.shape);
  };
  BitImages images;
  for (int j = 0; (1 << j) < kWarpSize; ++j)
    images.lanes.push_back(image(int64_t{1} << j, 0));
  for (int j = 0; (1 << j) < num_warps; ++j)
    images.warps.push_back(image(int64_t{kWarpSize} << j, 0));
  for (int j = 0; (int64_t{1} << j) < p.num_registers(); ++j)
    images.registers.push_back(image(0, int64_t{1} << j));
  return images;
}

bool same_images(BitImages a, BitImages b) {
  std::sort(a.registers.begin(), a.registers.end());
  std::sort(b.registers.begin(), b.registers.end());
  return a.lanes == b.lanes && a.warps == b.warps && a.registers == b.registers;
}

} // namespace

Layout whole_layout(int parent, const std::vector<int64_t> &shape) {
  Layout l{parent, {}, shape};
  for (size_t d = 0; d < shape.size(); ++d)
    l.dims.push_back(static_cast<int>(d));
  return l;
}

bool only_adds_or_drops_ones(const ir::Operation &reshape) {
  return without_ones(reshape.operand(0)->type().shape()) ==
         without_ones(reshape.result()->type().shape());
}

bool moves_elements(const ir::Operation &op) {
  switch (op.code()) {
  case OpCode::Reshape:
    return !only_adds_or_drops_ones(op);
  case OpCode::Permute:
  case OpCode::Join:
  case OpCode::Split:
  case OpCode::Cat:
    return true;
  default:
    return false;
  }
}

bool is_transposed(const Layout &layout) {
  int last = -1;
  for (size_t k = 0; k < layout.dims.size(); ++k) {
    if (layout.shape[k] == 1)
      continue;
    if (layout.dims[k] < last)
      return true;
    last = layout.dims[k];
  }
  return false;
}

std::vector<int64_t> element_coordinates(const BlockedLayout &parent,
                                         const Layout &layout, int64_t thread,
                                         int64_t r) {
  return value_coordinates(layout, thread_first(parent, thread),
                           parent.register_offset(r));
}

std::optional<BlockedLayout> reshaped_parent(const BlockedLayout &parent,
                                             const Layout &layout,
                                             const std::vector<int64_t> &shape,
                                             int num_warps) {
  BitImages images = bit_images(parent, layout, num_warps);
  // Registers that repeat an element (a slice of a parent whose dropped
  // dimension a thread holds several of) add nothing the operand must
  // hold: each reads the operand register holding its element (lower_shape
  // finds it), so they do not stand in the way of a blocked operand.
  std::erase(images.registers, int64_t{0});
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  const int bits = log2_of(count);
  // Which hardware bit sets each index bit: 'r'egister, 'l'ane or 'w'arp.
  std::vector<std::pair<char, int>> owner(bits, {0, 0});
  auto claim = [&](int64_t image, char kind, int index) {
    if (image == 0)
      return true; // lanes or warps holding copies: checked below
    int bit = log2_of(image);
    if ((int64_t{1} << bit) != image || bit >= bits || owner[bit].first)
      return false;
    owner[bit] = {kind, index};
    return true;
  };
  for (size_t j = 0; j < images.lanes.size(); ++j)
    if (!claim(images.lanes[j], 'l', static_cast<int>(j)))
      return std::nullopt;
  for (size_t j = 0; j < images.warps.size(); ++j)
    if (!claim(images.warps[j], 'w', static_cast<int>(j)))
      return std::nullopt;
  for (size_t j = 0; j < images.registers.size(); ++j)
    if (!claim(images.registers[j], 'r', static_cast<int>(j)))
      return std::nullopt;
  for (const auto &o : owner)
    if (!o.first)
      return std::nullopt;

  // Each dimension's index bits, lowest first, must read: registers inside
  // a thread, then lanes, then warps, then registers repeating the tile;
  // lanes and warps numbered upwards from the last dimension.
  const int rank = static_cast<int>(shape.size());
  BlockedLayout out{shape, std::vector<int64_t>(rank, 1),
                    std::vector<int64_t>(rank, 1),
                    std::vector<int64_t>(rank, 1)};
  int bit = 0, next_lane = 0, next_warp = 0;
  bool repeats_in_first = false;
  for (int d = rank - 1; d >= 0; --d) {
    const int end = bit + log2_of(shape[d]);
    while (bit < end && owner[bit].first == 'r') {
      out.size_per_thread[d] *= 2;
      ++bit;
    }
    while (bit < end && owner[bit] == std::pair<char, int>{'l', next_lane}) {
      out.threads_per_warp[d] *= 2;
      ++next_lane, ++bit;
    }
    while (bit < end && owner[bit] == std::pair<char, int>{'w', next_warp}) {
      out.warps_per_cta[d] *= 2;
      ++next_warp, ++bit;
    }
    if (d == 0)
      repeats_in_first = bit < end;
    while (bit < end && owner[bit].first == 'r')
      ++bit;
    if (bit < end)
      return std::nullopt;
  }
  // Lanes and warps holding replicas are the highest ones; they wrap
  // around the first dimension, whose tile must then exceed it.
  const int lanes = static_cast<int>(images.lanes.size());
  const int warps = static_cast<int>(images.warps.size());
  if (next_lane < lanes && (out.warps_per_cta[0] > 1 || repeats_in_first))
    return std::nullopt;
  if (next_warp < warps && repeats_in_first)
    return std::nullopt;
  out.threads_per_warp[0] <<= lanes - next_lane;
  out.warps_per_cta[0] <<= warps - next_warp;
  if (!same_images(images,
                   bit_images(out, whole_layout(0, out.shape), num_warps)))
    return std::nullopt;
  return out;
}

bool same_threads(const BlockedLayout &a, const BlockedLayout &b,
                  int num_warps) {
  return a.shape == b.shape &&
         same_images(bit_images(a, whole_layout(0, a.shape), num_warps),
                     bit_images(b, whole_layout(0, b.shape), num_warps));
}

BlockedLayout with_pair_dimension(const BlockedLayout &parent) {
  BlockedLayout out = parent;
  out.shape.push_back(2);
  out.size_per_thread.push_back(2);
  out.threads_per_warp.push_back(1);
  out.warps_per_cta.push_back(1);
  if (!out.per_warp.empty())
    out.per_warp.push_back(1);
  return out;
}

BlockedLayout halved(const BlockedLayout &parent, int d) {
  BlockedLayout out = parent;
  out.shape[d] /= 2;
  out.size_per_thread[d] = std::min(out.size_per_thread[d], out.shape[d]);
  return out;
}

SourceMap source_map(const ir::Operation &op, size_t result) {
  const std::vector<int64_t> from = op.operand(0)->type().shape();
  switch (op.code()) {
  case OpCode::Reshape: {
    const std::vector<int64_t> to = op.result()->type().shape();
    return [from, to](const std::vector<int64_t> &index) {
      return ElementSource{0, unflatten(flat_index(index, to), from)};
    };
  }
  case OpCode::Permute: {
    const std::vector<int64_t> order = op.ints_attr("order");
    return [order](const std::vector<int64_t> &index) {
      std::vector<int64_t> source(order.size());
      for (size_t i = 0; i < order.size(); ++i)
        source[order[i]] = index[i]; // result dim i is operand dim order[i]
      return ElementSource{0, source};
    };
  }
  case OpCode::Join:
    return [](const std::vector<int64_t> &index) {
      return ElementSource{
          static_cast<int>(index.back()),
          std::vector<int64_t>(index.begin(), index.end() - 1)};
    };
  case OpCode::Split:
    return [result](const std::vector<int64_t> &index) {
      std::vector<int64_t> source = index;
      source.push_back(static_cast<int64_t>(result));
      return ElementSource{0, source};
    };
  case OpCode::Cat: {
    int64_t axis = op.has_attr("axis") ? op.int_attr("axis") : 0;
    if (axis < 0)
      axis += static_cast<int64_t>(from.size());
    const int64_t half = from[axis];
    return [axis, half](const std::vector<int64_t> &index) {
      ElementSource s{0, index};
      if (index[axis] >= half) {
        s.operand = 1;
        s.coordinates[axis] -= half;
      }
      return s;
    };
  }
  default:
    throw Error("internal: " + op.describe() + " is not a shape op");
  }
}

namespace {

/// The thread and register parts of a layout's coordinates, computed once.
struct Positions {
  const BlockedLayout &parent;
  const Layout &layout;
  std::vector<std::vector<int64_t>> firsts, offsets;

  Positions(const BlockedLayout &p, const Layout &l, int64_t threads)
      : parent(p), layout(l) {
    for (int64_t t = 0; t < threads; ++t)
      firsts.push_back(thread_first(p, t));
    for (int64_t r = 0; r < p.num_registers(); ++r)
      offsets.push_back(p.register_offset(r));
  }
  std::vector<int64_t> at(int64_t thread, int64_t r) const {
    return value_coordinates(layout, firsts[thread], offsets[r]);
  }
};

} // namespace

std::optional<std::vector<RegisterSource>>
register_sources(const std::vector<BlockedLayout> &parents,
                 const Layout &result, const std::vector<Layout> &operands,
                 const SourceMap &source, int num_warps) {
  const int64_t threads = int64_t{kWarpSize} * num_warps;
  const BlockedLayout &p = parents[result.parent];
  Positions out(p, result, threads);
  std::vector<Positions> in;
  // Thread 0's register for each element of each operand.
  std::vector<std::map<std::vector<int64_t>, int64_t>> first_thread;
  for (const Layout &l : operands) {
    in.emplace_back(parents[l.parent], l, threads);
    std::map<std::vector<int64_t>, int64_t> registers;
    for (int64_t r = 0; r < parents[l.parent].num_registers(); ++r)
      registers.emplace(in.back().at(0, r), r);
    first_thread.push_back(std::move(registers));
  }
  std::vector<RegisterSource> sources(p.num_registers());
  for (int64_t r = 0; r < p.num_registers(); ++r) {
    int64_t canonical = canonical_register(p, result, r);
    if (canonical != r) {
      sources[r] = sources[canonical];
      continue;
    }
    ElementSource s = source(out.at(0, r));
    auto found = first_thread[s.operand].find(s.coordinates);
    if (found == first_thread[s.operand].end())
      return std::nullopt;
    RegisterSource chosen{found->second, s.operand};
    for (int64_t t = 1; t < threads; ++t) {
      ElementSource st = source(out.at(t, r));
      if (st.operand != s.operand)
        chosen.operand = -1;
      if (chosen.reg >= in[st.operand].parent.num_registers() ||
          in[st.operand].at(t, chosen.reg) != st.coordinates)
        return std::nullopt;
    }
    sources[r] = chosen;
  }
  return sources;
}

} // namespace blocc::nvptx
