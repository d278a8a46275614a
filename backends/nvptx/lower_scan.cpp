// Scans (inclusive prefix combinations) along one axis, forward or from
// the end (`reverse`), in the style of the reductions (lower_reduce.cpp):
//   1. in each thread, sequentially over each run of consecutive elements
//      it holds along the axis (a *chunk*: size_per_thread elements; a
//      thread holds several chunks, one tile apart, when the axis is
//      longer than the tile);
//   2. across the lanes of a warp that hold different chunks, an
//      inclusive scan of the chunks' totals by shuffles (shfl.sync.up
//      forward, .down in reverse, log2(lanes) steps), from which each
//      lane takes the combination of the lanes before it (one more
//      shuffle) and the warp's total (shfl.sync.idx from its last lane);
//   3. across warps, when the axis spans several: each warp writes its
//      total to shared memory, and after a barrier every thread combines
//      the totals of the warps before its own, and of every warp for the
//      tile's total;
//   4. across a thread's chunks in scan order: the totals of the earlier
//      tiles;
// then each element is the combination of everything before its thread's
// run (tiles, warps, lanes, in that order) with its in-thread prefix.
//
// "Before" is in scan order: lower indices forward, higher ones in
// reverse. Every combine takes what comes earlier in scan order as its
// left operand, as the interpreter's left fold does, so a combine needs to
// be associative but not commutative; but the grouping is a tree, so float
// sums and products may differ from the interpreter's (and the CPU
// backend's) sequential ones in the last bits. There is no identity
// element for a user's combine: a prefix that is empty in some threads
// (the first lane, the first warp) is selected away there.
//
// Threads holding replicas along the axis (a tile longer than the block)
// scan alongside their originals: a replica at lane position q * lanes + i
// shuffles with replicas q * lanes + i - k, which hold the same elements as
// the originals i - k, so every copy computes the same results.
#include "backends/nvptx/kernel_lowering.h"

#include "ir/error.h"

#include <llvm/IR/Module.h>

namespace blocc::nvptx {

namespace {

/// A combination of some of the elements before a position, held where
/// `valid` (i1; nullptr: everywhere) and empty elsewhere.
struct Prefix {
  std::vector<llvm::Value *> values; // empty: nowhere
  llvm::Value *valid = nullptr;
};

} // namespace

void KernelLowering::lower_scan(const ir::Operation &op) {
  const size_t n = op.num_operands();
  const ir::Block &region = *op.region(0);
  const Layout &layout = *layouts().home(op.result(0));
  const int rank = static_cast<int>(layout.shape.size());
  int axis = static_cast<int>(op.int_attr("axis"));
  if (axis < 0)
    axis += rank;
  const bool reverse = op.has_attr("reverse") && op.int_attr("reverse") != 0;
  const BlockedLayout &p = parent(layout);

  std::vector<Registers> values; // per operand, then per result
  for (size_t i = 0; i < n; ++i)
    values.push_back(registers(op.operand(i), layout));
  auto define_results = [&] {
    for (size_t i = 0; i < n; ++i)
      define_block(op.result(i), layout, values[i]);
  };
  const int64_t length = layout.shape[axis];
  if (length == 1) { // a scan of one element gives it back
    define_results();
    return;
  }

  // The axis in the parent layout.
  const int d = layout.dims[axis];
  // The carries below pass from lanes to warps to the tile's repetitions,
  // the order of the elements along d without repetitions in a warp.
  if (p.repeats_in_warp(d) != 1)
    throw Error("internal: a scan along a dimension whose warps repeat "
                "their lanes (" +
                p.str() + ")");
  const int64_t per_thread = p.size_per_thread[d];
  const int64_t chunks = p.registers_along(d) / per_thread;
  // Thread positions along d holding distinct chunks of a tile, as lanes
  // of one warp times warps.
  const int64_t positions =
      std::min(p.threads_per_warp[d] * p.warps_per_cta[d], length / per_thread);
  const int64_t lanes = std::min(p.threads_per_warp[d], positions);
  const int64_t warps = positions / lanes;
  int64_t stride = 1, lane_stride = 1, warp_stride = 1;
  for (int e = p.rank() - 1; e > d; --e) {
    stride *= p.registers_along(e);
    lane_stride *= p.threads_per_warp[e];
    warp_stride *= p.warps_per_cta[e];
  }
  auto i32 = [&](int64_t v) {
    return builder.getInt32(static_cast<uint32_t>(v));
  };
  // This thread's position among the lanes and warps along d (replicas
  // take their original's).
  llvm::Value *lane_position = builder.CreateURem(
      builder.CreateUDiv(lane, i32(lane_stride)), i32(lanes));
  llvm::Value *warp_position = builder.CreateURem(
      builder.CreateUDiv(warp, i32(warp_stride)), i32(warps));
  // Positions in scan order: position k of `count` is step k forward and
  // step count - 1 - k in reverse.
  auto in_order = [&](int64_t step, int64_t count) {
    return reverse ? count - 1 - step : step;
  };
  // True where at least `k` lanes precede this one in scan order.
  auto lanes_before_at_least = [&](int64_t k) {
    return reverse ? builder.CreateICmpULT(lane_position, i32(lanes - k))
                   : builder.CreateICmpUGE(lane_position, i32(k));
  };
  const Shuffle from_earlier = reverse ? Shuffle::Down : Shuffle::Up;
  auto shuffle_all = [&](const std::vector<llvm::Value *> &vs, Shuffle mode,
                         llvm::Value *b) {
    std::vector<llvm::Value *> out;
    for (llvm::Value *v : vs)
      out.push_back(shuffle(v, mode, b));
    return out;
  };
  auto select_all = [&](llvm::Value *condition,
                        const std::vector<llvm::Value *> &a,
                        const std::vector<llvm::Value *> &b) {
    std::vector<llvm::Value *> out;
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(builder.CreateSelect(condition, a[i], b[i]));
    return out;
  };
  // `earlier` followed by `later` in scan order.
  auto then = [&](const Prefix &earlier, const Prefix &later) -> Prefix {
    if (earlier.values.empty())
      return later;
    if (later.values.empty())
      return earlier;
    std::vector<llvm::Value *> both =
        combine(region, earlier.values, later.values);
    if (!earlier.valid && !later.valid)
      return {both, nullptr};
    if (!later.valid)
      return {select_all(earlier.valid, both, later.values), nullptr};
    if (!earlier.valid)
      return {select_all(later.valid, both, earlier.values), nullptr};
    return {select_all(earlier.valid,
                       select_all(later.valid, both, earlier.values),
                       later.values),
            builder.CreateOr(earlier.valid, later.valid)};
  };

  // Registers holding the first element of a line along the axis, each
  // line scanned independently.
  std::vector<int64_t> lines;
  for (int64_t r = 0; r < p.num_registers(); ++r)
    if (canonical_register(p, layout, r) == r &&
        (r / stride) % p.registers_along(d) == 0)
      lines.push_back(r);
  auto element = [&](int64_t line, int64_t chunk, int64_t k) {
    return line + (chunk * per_thread + k) * stride;
  };

  // 1. In each thread: inclusive scans of each chunk; their totals.
  // totals[line][chunk]: the chunk's total, then the lanes' inclusive scan.
  std::vector<std::vector<std::vector<llvm::Value *>>> totals(lines.size());
  for (size_t l = 0; l < lines.size(); ++l)
    for (int64_t c = 0; c < chunks; ++c) {
      std::vector<llvm::Value *> acc;
      for (int64_t step = 0; step < per_thread; ++step) {
        int64_t r = element(lines[l], c, in_order(step, per_thread));
        std::vector<llvm::Value *> next;
        for (size_t i = 0; i < n; ++i)
          next.push_back(values[i][r]);
        acc = step == 0 ? next : combine(region, acc, next);
        for (size_t i = 0; i < n; ++i)
          values[i][r] = acc[i];
      }
      totals[l].push_back(acc);
    }

  // 2. Across lanes: Hillis and Steele's inclusive scan of the totals.
  for (int64_t k = 1; k < lanes; k *= 2) {
    llvm::Value *has_source = lanes_before_at_least(k);
    for (auto &line : totals)
      for (auto &total : line) {
        std::vector<llvm::Value *> theirs =
            shuffle_all(total, from_earlier, i32(k * lane_stride));
        total = select_all(has_source, combine(region, theirs, total), total);
      }
  }
  // Per line and chunk: the lanes before this one (exclusive) and the
  // warp's total (the last lane's inclusive scan).
  std::vector<std::vector<Prefix>> lane_prefix(lines.size());
  std::vector<std::vector<std::vector<llvm::Value *>>> warp_total(lines.size());
  llvm::Value *has_lane_before = lanes_before_at_least(1);
  llvm::Value *last_lane = builder.CreateAdd(
      lane, builder.CreateMul(builder.CreateSub(i32(in_order(lanes - 1, lanes)),
                                                lane_position),
                              i32(lane_stride)));
  for (size_t l = 0; l < lines.size(); ++l)
    for (int64_t c = 0; c < chunks; ++c) {
      const std::vector<llvm::Value *> &inclusive = totals[l][c];
      if (lanes > 1)
        lane_prefix[l].push_back(
            {shuffle_all(inclusive, from_earlier, i32(lane_stride)),
             has_lane_before});
      else
        lane_prefix[l].push_back({});
      warp_total[l].push_back(
          lanes > 1 && (warps > 1 || chunks > 1)
              ? shuffle_all(inclusive, Shuffle::Index, last_lane)
              : inclusive);
    }

  // 3. Across warps: the warps before this one, and the tile's total.
  std::vector<std::vector<Prefix>> warp_prefix(lines.size(),
                                               std::vector<Prefix>(chunks));
  std::vector<std::vector<std::vector<llvm::Value *>>> tile_total = warp_total;
  if (warps > 1) {
    Layout sliced = layout;
    sliced.dims.erase(sliced.dims.begin() + axis);
    sliced.shape.erase(sliced.shape.begin() + axis);
    int64_t slots = warps * chunks;
    for (int64_t s : sliced.shape)
      slots *= s;
    std::vector<int64_t> offsets;
    int64_t offset = 0;
    for (size_t i = 0; i < n; ++i) {
      offset = (offset + 7) / 8 * 8;
      offsets.push_back(offset);
      llvm::Type *t = warp_total[0][0][i]->getType();
      offset += slots *
                static_cast<int64_t>(
                    module.getDataLayout().getTypeAllocSize(t).getFixedValue());
    }
    auto slot = [&](size_t l, int64_t c, llvm::Value *w) {
      llvm::Value *line_and_chunk = builder.CreateAdd(
          builder.CreateMul(linear_index(sliced, lines[l]), i32(chunks)),
          i32(c));
      return builder.CreateAdd(builder.CreateMul(line_and_chunk, i32(warps)),
                               w);
    };
    before_shared_write();
    for (size_t l = 0; l < lines.size(); ++l)
      for (int64_t c = 0; c < chunks; ++c)
        for (size_t i = 0; i < n; ++i) {
          llvm::Value *v = warp_total[l][c][i];
          builder.CreateStore(v, shared_element(offsets[i], slots, v->getType(),
                                                slot(l, c, warp_position)));
        }
    after_shared_write();
    for (size_t l = 0; l < lines.size(); ++l)
      for (int64_t c = 0; c < chunks; ++c) {
        // Running combinations over the warps in scan order; the one
        // before this warp is its prefix.
        std::vector<llvm::Value *> running;
        Prefix before;
        for (int64_t step = 0; step < warps; ++step) {
          int64_t w = in_order(step, warps);
          std::vector<llvm::Value *> total;
          for (size_t i = 0; i < n; ++i) {
            llvm::Type *t = warp_total[l][c][i]->getType();
            total.push_back(builder.CreateLoad(
                t, shared_element(offsets[i], slots, t, slot(l, c, i32(w)))));
          }
          if (step > 0) {
            // Warps after step - 1 in scan order see running as theirs.
            llvm::Value *here =
                builder.CreateICmpEQ(warp_position, i32(in_order(step, warps)));
            before.values = before.values.empty()
                                ? running
                                : select_all(here, running, before.values);
          }
          running = step == 0 ? total : combine(region, running, total);
        }
        before.valid =
            builder.CreateICmpNE(warp_position, i32(in_order(0, warps)));
        warp_prefix[l][c] = before;
        tile_total[l][c] = running;
      }
  }

  // 4. Across chunks, and every element's prefix.
  for (size_t l = 0; l < lines.size(); ++l) {
    Prefix tiles_before;
    for (int64_t step = 0; step < chunks; ++step) {
      int64_t c = in_order(step, chunks);
      Prefix prefix =
          then(then(tiles_before, warp_prefix[l][c]), lane_prefix[l][c]);
      if (!prefix.values.empty())
        for (int64_t k = 0; k < per_thread; ++k) {
          int64_t r = element(lines[l], c, k);
          std::vector<llvm::Value *> mine;
          for (size_t i = 0; i < n; ++i)
            mine.push_back(values[i][r]);
          std::vector<llvm::Value *> out = combine(region, prefix.values, mine);
          if (prefix.valid)
            out = select_all(prefix.valid, out, mine);
          for (size_t i = 0; i < n; ++i)
            values[i][r] = out[i];
        }
      tiles_before = then(tiles_before, Prefix{tile_total[l][c], nullptr});
    }
  }

  // Registers sharing an element (sliced dimensions) share its value.
  for (size_t i = 0; i < n; ++i)
    for (int64_t r = 0; r < p.num_registers(); ++r)
      values[i][r] = values[i][canonical_register(p, layout, r)];
  define_results();
}

} // namespace blocc::nvptx
