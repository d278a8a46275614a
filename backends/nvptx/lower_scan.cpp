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

/// Per line along the axis and chunk of it: the operands' values.
using PerChunk = std::vector<std::vector<std::vector<llvm::Value *>>>;

/// The lowering of one scan of a block, in the four steps above.
class ScanLowering {
public:
  ScanLowering(KernelLowering &k, const ir::Operation &op)
      : k_(k), b_(k.builder), op_(op), region_(*op.region(0)),
        n_(op.num_operands()), layout_(*k.layouts().home(op.result(0))),
        p_(k.parent(layout_)) {
    axis_ = static_cast<int>(op.int_attr("axis"));
    if (axis_ < 0)
      axis_ += static_cast<int>(layout_.shape.size());
    reverse_ = op.has_attr("reverse") && op.int_attr("reverse") != 0;
    for (size_t i = 0; i < n_; ++i)
      values_.of.push_back(k.registers(op.operand(i), layout_));
  }

  void lower() {
    if (layout_.shape[axis_] == 1) // a scan of one element gives it back
      return define_results();
    measure();
    PerChunk totals = within_chunks();
    across_lanes(totals);
    lane_prefixes(totals);
    across_warps();
    across_chunks();
    // Registers sharing an element (sliced dimensions) share its value.
    for (size_t i = 0; i < n_; ++i)
      for (int64_t r = 0; r < p_.num_registers(); ++r)
        values_.of[i][r] = values_.of[i][canonical_register(p_, layout_, r)];
    define_results();
  }

private:
  /// The axis in the parent layout, its chunks, lanes and warps, this
  /// thread's lane and warp positions along it, and its lines.
  void measure() {
    d_ = layout_.dims[axis_];
    // The carries below pass from lanes to warps to the tile's
    // repetitions, the order of the elements along d without repetitions
    // in a warp.
    if (p_.repeats_in_warp(d_) != 1)
      throw Error("internal: a scan along a dimension whose warps repeat "
                  "their lanes (" +
                  p_.str() + ")");
    const int64_t length = layout_.shape[axis_];
    per_thread_ = p_.size_per_thread[d_];
    chunks_ = p_.registers_along(d_) / per_thread_;
    // Thread positions along d holding distinct chunks of a tile, as
    // lanes of one warp times warps.
    const int64_t positions = std::min(
        p_.threads_per_warp[d_] * p_.warps_per_cta[d_], length / per_thread_);
    lanes_ = std::min(p_.threads_per_warp[d_], positions);
    warps_ = positions / lanes_;
    int64_t warp_stride = 1;
    for (int e = p_.rank() - 1; e > d_; --e) {
      stride_ *= p_.registers_along(e);
      lane_stride_ *= p_.threads_per_warp[e];
      warp_stride *= p_.warps_per_cta[e];
    }
    // This thread's position among the lanes and warps along d (replicas
    // take their original's).
    lane_position_ =
        b_.CreateURem(b_.CreateUDiv(k_.lane, i32(lane_stride_)), i32(lanes_));
    warp_position_ =
        b_.CreateURem(b_.CreateUDiv(k_.warp, i32(warp_stride)), i32(warps_));
    // Registers holding the first element of a line along the axis, each
    // line scanned independently.
    for (int64_t r = 0; r < p_.num_registers(); ++r)
      if (canonical_register(p_, layout_, r) == r &&
          (r / stride_) % p_.registers_along(d_) == 0)
        lines_.push_back(r);
  }

  /// 1. In each thread: inclusive scans of each chunk; their totals.
  PerChunk within_chunks() {
    PerChunk totals(lines_.size());
    for (size_t l = 0; l < lines_.size(); ++l)
      for (int64_t c = 0; c < chunks_; ++c) {
        std::vector<llvm::Value *> acc;
        for (int64_t step = 0; step < per_thread_; ++step) {
          int64_t r = element(lines_[l], c, in_order(step, per_thread_));
          std::vector<llvm::Value *> next = values_.at(r);
          acc = step == 0 ? next : k_.combine(region_, acc, next);
          values_.set(r, acc);
        }
        totals[l].push_back(acc);
      }
    return totals;
  }

  /// 2. Across lanes: Hillis and Steele's inclusive scan of the totals.
  void across_lanes(PerChunk &totals) {
    for (int64_t j = 1; j < lanes_; j *= 2) {
      llvm::Value *has_source = lanes_before_at_least(j);
      for (auto &line : totals)
        for (auto &total : line) {
          std::vector<llvm::Value *> theirs =
              shuffle_all(total, from_earlier(), i32(j * lane_stride_));
          total =
              select_all(has_source, k_.combine(region_, theirs, total), total);
        }
    }
  }

  /// Per line and chunk: the lanes before this one (exclusive) and the
  /// warp's total (the last lane's inclusive scan).
  void lane_prefixes(const PerChunk &totals) {
    lane_prefix_.assign(lines_.size(), {});
    warp_total_.assign(lines_.size(), {});
    llvm::Value *has_lane_before = lanes_before_at_least(1);
    llvm::Value *last_lane = b_.CreateAdd(
        k_.lane, b_.CreateMul(b_.CreateSub(i32(in_order(lanes_ - 1, lanes_)),
                                           lane_position_),
                              i32(lane_stride_)));
    for (size_t l = 0; l < lines_.size(); ++l)
      for (int64_t c = 0; c < chunks_; ++c) {
        const std::vector<llvm::Value *> &inclusive = totals[l][c];
        if (lanes_ > 1)
          lane_prefix_[l].push_back(
              {shuffle_all(inclusive, from_earlier(), i32(lane_stride_)),
               has_lane_before});
        else
          lane_prefix_[l].push_back({});
        warp_total_[l].push_back(
            lanes_ > 1 && (warps_ > 1 || chunks_ > 1)
                ? shuffle_all(inclusive, KernelLowering::Shuffle::Index,
                              last_lane)
                : inclusive);
      }
  }

  /// 3. Across warps, through shared memory: the warps before this one,
  /// and the tile's total.
  void across_warps() {
    warp_prefix_.assign(lines_.size(), std::vector<Prefix>(chunks_));
    tile_total_ = warp_total_;
    if (warps_ <= 1)
      return;
    Layout sliced = layout_;
    sliced.dims.erase(sliced.dims.begin() + axis_);
    sliced.shape.erase(sliced.shape.begin() + axis_);
    int64_t slots = warps_ * chunks_;
    for (int64_t s : sliced.shape)
      slots *= s;
    std::vector<llvm::Type *> types;
    for (llvm::Value *v : warp_total_[0][0])
      types.push_back(v->getType());
    const std::vector<int64_t> offsets = k_.stacked_arrays(types, slots);
    auto slot = [&](size_t l, int64_t c, llvm::Value *w) {
      llvm::Value *line_and_chunk = b_.CreateAdd(
          b_.CreateMul(k_.linear_index(sliced, lines_[l]), i32(chunks_)),
          i32(c));
      return b_.CreateAdd(b_.CreateMul(line_and_chunk, i32(warps_)), w);
    };
    k_.before_shared_write();
    for (size_t l = 0; l < lines_.size(); ++l)
      for (int64_t c = 0; c < chunks_; ++c)
        for (size_t i = 0; i < n_; ++i) {
          llvm::Value *v = warp_total_[l][c][i];
          b_.CreateStore(v, k_.shared_element(offsets[i], slots, v->getType(),
                                              slot(l, c, warp_position_)));
        }
    k_.after_shared_write();
    for (size_t l = 0; l < lines_.size(); ++l)
      for (int64_t c = 0; c < chunks_; ++c) {
        // Running combinations over the warps in scan order; the one
        // before this warp is its prefix.
        std::vector<llvm::Value *> running;
        Prefix before;
        for (int64_t step = 0; step < warps_; ++step) {
          int64_t w = in_order(step, warps_);
          std::vector<llvm::Value *> total;
          for (size_t i = 0; i < n_; ++i) {
            llvm::Type *t = warp_total_[l][c][i]->getType();
            total.push_back(
                b_.CreateLoad(t, k_.shared_element(offsets[i], slots, t,
                                                   slot(l, c, i32(w)))));
          }
          if (step > 0) {
            // Warps after step - 1 in scan order see running as theirs.
            llvm::Value *here =
                b_.CreateICmpEQ(warp_position_, i32(in_order(step, warps_)));
            before.values = before.values.empty()
                                ? running
                                : select_all(here, running, before.values);
          }
          running = step == 0 ? total : k_.combine(region_, running, total);
        }
        before.valid =
            b_.CreateICmpNE(warp_position_, i32(in_order(0, warps_)));
        warp_prefix_[l][c] = before;
        tile_total_[l][c] = running;
      }
  }

  /// 4. Across chunks, and every element's prefix: the earlier tiles,
  /// warps and lanes, in that order, before its in-thread prefix.
  void across_chunks() {
    for (size_t l = 0; l < lines_.size(); ++l) {
      Prefix tiles_before;
      for (int64_t step = 0; step < chunks_; ++step) {
        int64_t c = in_order(step, chunks_);
        Prefix prefix =
            then(then(tiles_before, warp_prefix_[l][c]), lane_prefix_[l][c]);
        if (!prefix.values.empty())
          for (int64_t j = 0; j < per_thread_; ++j) {
            int64_t r = element(lines_[l], c, j);
            std::vector<llvm::Value *> mine = values_.at(r);
            std::vector<llvm::Value *> out =
                k_.combine(region_, prefix.values, mine);
            if (prefix.valid)
              out = select_all(prefix.valid, out, mine);
            values_.set(r, out);
          }
        tiles_before = then(tiles_before, Prefix{tile_total_[l][c], nullptr});
      }
    }
  }

  void define_results() {
    for (size_t i = 0; i < n_; ++i)
      k_.define_block(op_.result(i), layout_, values_.of[i]);
  }

  /// `earlier` followed by `later` in scan order.
  Prefix then(const Prefix &earlier, const Prefix &later) {
    if (earlier.values.empty())
      return later;
    if (later.values.empty())
      return earlier;
    std::vector<llvm::Value *> both =
        k_.combine(region_, earlier.values, later.values);
    if (!earlier.valid && !later.valid)
      return {both, nullptr};
    if (!later.valid)
      return {select_all(earlier.valid, both, later.values), nullptr};
    if (!earlier.valid)
      return {select_all(later.valid, both, earlier.values), nullptr};
    return {select_all(earlier.valid,
                       select_all(later.valid, both, earlier.values),
                       later.values),
            b_.CreateOr(earlier.valid, later.valid)};
  }

  llvm::Value *i32(int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }
  /// Position k of `count` in scan order: step k forward, count - 1 - k in
  /// reverse.
  int64_t in_order(int64_t step, int64_t count) const {
    return reverse_ ? count - 1 - step : step;
  }
  /// True where at least `j` lanes precede this one in scan order.
  llvm::Value *lanes_before_at_least(int64_t j) {
    return reverse_ ? b_.CreateICmpULT(lane_position_, i32(lanes_ - j))
                    : b_.CreateICmpUGE(lane_position_, i32(j));
  }
  KernelLowering::Shuffle from_earlier() const {
    return reverse_ ? KernelLowering::Shuffle::Down
                    : KernelLowering::Shuffle::Up;
  }
  std::vector<llvm::Value *> shuffle_all(const std::vector<llvm::Value *> &vs,
                                         KernelLowering::Shuffle mode,
                                         llvm::Value *lane) {
    std::vector<llvm::Value *> out;
    for (llvm::Value *v : vs)
      out.push_back(k_.shuffle(v, mode, lane));
    return out;
  }
  std::vector<llvm::Value *> select_all(llvm::Value *condition,
                                        const std::vector<llvm::Value *> &a,
                                        const std::vector<llvm::Value *> &b) {
    std::vector<llvm::Value *> out;
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(b_.CreateSelect(condition, a[i], b[i]));
    return out;
  }
  int64_t element(int64_t line, int64_t chunk, int64_t j) const {
    return line + (chunk * per_thread_ + j) * stride_;
  }
  KernelLowering &k_;
  llvm::IRBuilderBase &b_;
  const ir::Operation &op_;
  const ir::Block &region_;
  const size_t n_;
  const Layout &layout_;
  const BlockedLayout &p_;
  int axis_ = 0;
  bool reverse_ = false;
  int d_ = 0;
  int64_t per_thread_ = 0, chunks_ = 0, lanes_ = 0, warps_ = 0;
  int64_t stride_ = 1, lane_stride_ = 1;
  llvm::Value *lane_position_ = nullptr, *warp_position_ = nullptr;
  std::vector<int64_t> lines_;
  CombinedRegisters values_;
  std::vector<std::vector<Prefix>> lane_prefix_, warp_prefix_;
  PerChunk warp_total_, tile_total_;
};

} // namespace

void KernelLowering::lower_scan(const ir::Operation &op) {
  ScanLowering(*this, op).lower();
}

} // namespace blocc::nvptx
