// The gpu-remove-conversions pass (gpu_passes.h): rewrites the convert_layout
// ops of the explicit form (layout_attrs.h) that cost more than they must,
// Triton's RemoveLayoutConversions on blocc's linear layouts. One rewrite at
// a time, each on the IR as the previous one left it, until none applies:
//
//   - a conversion nothing uses goes;
//   - a conversion between two layouts that are the same linear layout
//     (ir/linear_layout.h: the same registers of the same threads, say the
//     row slices of two parents that differ only along the rows' other
//     dimension) goes, its users reading the value as it is (the verifier
//     and KernelLowering::registers accept a layout equal as a linear
//     layout to the one read). A user that writes or prints each element
//     once, by its owner, keeps a layout that holds every dimension of its
//     parent (layout.h: is_full), and a dot keeps its exact layout (it may
//     read A in registers as fragments only from their own parent);
//   - a conversion of a conversion converts the first source instead
//     (and goes where that is back in the source's layout);
//   - two conversions of one value to one layout are one, where the first
//     comes before the second (in its block or a block around it);
//   - rematerialization: a conversion of a value that cheap ops (elementwise
//     ops, constants, arange, splat, broadcast, expand_dims, hints) compute,
//     in the conversion's block, from values held in the target layout
//     already (or from scalars) is replaced by those ops computed again in
//     the target layout. Loads, reductions, scans, dots, atomics, loop and
//     if results are never computed again; nor are integer divisions and
//     remainders (each checks its divisor for zero and may stop the
//     program) or float remainders (a long subroutine). A value from
//     another block (outside a loop, in a branch) is only read, never
//     computed again here, so nothing runs more often than it did;
//   - sinking into a narrowing cast: a conversion whose value cheap ops of
//     its block carry into a cast to narrower elements (an accumulator
//     scaled and cast to half precision for its store) moves past them:
//     they run in the conversion's source layout (their other leaves
//     converted there within warps) and the narrow value is converted,
//     half the bytes or fewer, where that costs less.
//
// Whether to rematerialize is a cost in instructions per thread, read off
// the two linear layouts (conversion_path.h):
//   - a renumbering of registers costs nothing: recomputing never wins,
//     unless it recomputes fewer elements than the originals that die;
//   - shuffles cost one shfl per register that changes lanes (and an index
//     computation where lanes are permuted);
//   - shared memory costs a store per element the thread holds, a load per
//     element it needs, the addresses of both, and a barrier that stops
//     the whole CTA (and usually one more before the next write): counted
//     as kBarrierCost instructions.
// A sinking counts the conversions through shared memory by the vectors
// each side moves (SharedLayout::for_conversion: narrower elements make
// longer runs). Recomputing costs one instruction per element each cloned
// elementwise op (or arange) computes in the target layout, kMathCost for
// math functions and divisions; splat, broadcast, expand_dims, constants and
// hints move nothing. The originals that no longer have users go, and their
// cost is subtracted. The conversion is replaced when recomputing costs less.
#include "backends/nvptx/assign_layouts.h"
#include "backends/nvptx/conversion_path.h"
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/gpu_passes.h"
#include "backends/nvptx/layout_attrs.h"

#include "backends/llvm/llvm_types.h"

#include <algorithm>
#include <map>
#include <set>

namespace blocc::nvptx {

using ir::OpCode;

namespace {

/// A barrier stalls every warp of the CTA until the slowest arrives: worth
/// far more than the instruction it is.
constexpr int64_t kBarrierCost = 32;
/// exp, sin, sqrt, division and the like: a few instructions each.
constexpr int64_t kMathCost = 8;
/// The most ops one rematerialization computes again.
constexpr size_t kMaxRematerialized = 16;

/// A load a pipelined loop copies ahead, or a bitcast of one: it lives in
/// shared memory, never in registers, and the dot reads it in place.
bool is_staged(const ir::Value *v) { return is_landed_tile(v); }

/// Whether `a` comes before `b`, or before the op whose regions hold `b`:
/// its result is defined wherever `b` runs.
bool dominates(const ir::Operation &a, const ir::Operation &b) {
  const ir::Block *block = a.parent_block();
  const ir::Operation *inner = &b;
  while (inner && inner->parent_block() != block)
    inner = inner->parent_op();
  if (!inner || inner == &a)
    return false;
  for (const auto &op : block->ops()) {
    if (op.get() == &a)
      return true;
    if (op.get() == inner)
      return false;
  }
  return false;
}

/// Ops computed again in another layout rather than converted.
bool is_rematerializable(const ir::Operation &op) {
  if (op.num_results() != 1 || op.num_regions() != 0 ||
      !op.result()->type().is_block())
    return false;
  switch (op.code()) {
  case OpCode::Constant:
  case OpCode::Arange:
  case OpCode::Splat:
  case OpCode::Broadcast:
  case OpCode::ExpandDims:
  case OpCode::MultipleOf:
  case OpCode::MaxContiguous:
  case OpCode::MaxConstancy:
    return true;
  case OpCode::Rem:
    return false;
  case OpCode::Div:
    return op.result()->type().is_float();
  default:
    return ir::is_elementwise(op.code());
  }
}

bool is_math(OpCode code) {
  return ir::is_unary_math(code) || code == OpCode::Div;
}

class RemoveConversions {
public:
  RemoveConversions(ir::Function &function, const GpuPassOptions &options)
      : function_(function), options_(options) {}

  void run() {
    while (rewrite_one()) {
    }
  }

private:
  /// Reads the layouts and uses afresh and applies the first rewrite that
  /// fits a conversion, in program order; false where none does.
  bool rewrite_one() {
    layouts_ =
        LayoutAssignment::read(function_, options_.num_warps, options_.arch);
    uses_.clear();
    std::vector<ir::Operation *> conversions;
    function_.walk([&](ir::Operation &op) {
      for (const ir::Value *operand : op.operands())
        uses_[operand].push_back(&op);
      if (op.code() == OpCode::ConvertLayout)
        conversions.push_back(&op);
    });
    for (ir::Operation *convert : conversions) {
      const ir::Value *source = convert->operand(0);
      if (is_staged(source) || !layouts_->home(source) ||
          !layouts_->home(convert->result()))
        continue;
      if (erase_if_unused(*convert) || remove_if_same(*convert) ||
          fold_chain(*convert) || merge_duplicate(*convert) ||
          rematerialize(*convert) || sink_into_narrowing(*convert))
        return true;
    }
    return false;
  }

  const std::vector<ir::Operation *> &uses(const ir::Value *v) const {
    static const std::vector<ir::Operation *> none;
    auto it = uses_.find(v);
    return it == uses_.end() ? none : it->second;
  }

  const Layout &layout_of(const ir::Value *v) const {
    return *layouts_->home(v);
  }

  bool same_linear(const Layout &a, const Layout &b) const {
    return same_linear_layout(layouts_->parent(a), a, layouts_->parent(b), b);
  }

  /// Whether the users of `v`, which read it in `read`, may read it in
  /// `carried` instead: the same linear layout, each element owned alike,
  /// and no dot among them where the two differ.
  bool may_read_as(const ir::Value *v, const Layout &carried,
                   const Layout &read) const {
    if (carried == read)
      return true;
    if (!same_linear(carried, read) ||
        is_full(layouts_->parent(carried), carried) !=
            is_full(layouts_->parent(read), read))
      return false;
    for (const ir::Operation *user : uses(v))
      if (user->code() == OpCode::Dot)
        return false;
    return true;
  }

  /// Replaces the uses of `convert`'s result by `v` and erases it.
  void replace(ir::Operation &convert, ir::Value *v) {
    function_.replace_all_uses(convert.result(), v);
    convert.parent_block()->erase(&convert);
  }

  bool erase_if_unused(ir::Operation &convert) {
    if (!uses(convert.result()).empty())
      return false;
    convert.parent_block()->erase(&convert);
    return true;
  }

  bool remove_if_same(ir::Operation &convert) {
    ir::Value *source = convert.operand(0);
    if (!may_read_as(convert.result(), layout_of(source),
                     layout_of(convert.result())))
      return false;
    replace(convert, source);
    return true;
  }

  /// convert(convert(v)) -> convert(v); the inner one goes where nothing
  /// else uses it.
  bool fold_chain(ir::Operation &convert) {
    ir::Operation *inner = convert.operand(0)->defining_op();
    if (!inner || inner->code() != OpCode::ConvertLayout ||
        !layouts_->home(inner->operand(0)))
      return false;
    convert.set_operand(0, inner->operand(0));
    if (uses(inner->result()).size() == 1)
      inner->parent_block()->erase(inner);
    return true;
  }

  /// A second conversion of one value to one layout reads the first's.
  bool merge_duplicate(ir::Operation &convert) {
    const Layout &target = layout_of(convert.result());
    for (ir::Operation *other : uses(convert.operand(0)))
      if (other != &convert && other->code() == OpCode::ConvertLayout &&
          layouts_->home(other->result()) &&
          may_read_as(convert.result(), layout_of(other->result()), target) &&
          dominates(*other, convert)) {
        replace(convert, other->result());
        return true;
      }
    return false;
  }

  // ---- Rematerialization. -----------------------------------------------

  using Key = std::pair<const ir::Value *, Layout>;

  /// What a conversion would compute again: the ops, operands first, each
  /// with the layout it is computed in, and the values it reads as held.
  struct Slice {
    std::vector<std::pair<ir::Operation *, Layout>> ops;
    std::set<Key> computed;
    std::map<Key, ir::Value *> held;
    /// Sinking: a leaf that is neither held nor computed again may be a
    /// value converted within warps to the layout it is read in
    /// (`converted`: the value to convert, by the leaf it stands for).
    bool converts_leaves = false;
    std::map<Key, ir::Value *> converted;
  };

  /// `v` as held in `layout` (or a layout equal to it as a linear layout)
  /// where `at` runs: itself, or a conversion of it that comes before.
  ir::Value *held_in(ir::Value *v, const Layout &layout,
                     const ir::Operation &at) const {
    if (is_staged(v))
      return nullptr;
    if (const Layout *carried = layouts_->home(v);
        carried && same_linear(*carried, layout))
      return v;
    // A conversion's value is its source's, in the source's layout.
    if (const ir::Operation *convert = v->defining_op();
        convert && convert->code() == OpCode::ConvertLayout)
      if (const Layout *source = layouts_->home(convert->operand(0));
          source && same_linear(*source, layout) &&
          !is_staged(convert->operand(0)))
        return convert->operand(0);
    for (ir::Operation *user : uses(v))
      if (user->code() == OpCode::ConvertLayout && user != &at &&
          layouts_->home(user->result()) &&
          same_linear(layout_of(user->result()), layout) &&
          dominates(*user, at))
        return user->result();
    return nullptr;
  }

  /// The layout `op`, computed in `layout`, reads its block operand `i` in.
  static Layout operand_layout(const ir::Operation &op, size_t i,
                               const Layout &layout) {
    if (op.code() != OpCode::Broadcast && op.code() != OpCode::ExpandDims)
      return layout;
    Layout read{layout.parent, layout.dims, op.operand(i)->type().shape()};
    if (op.code() == OpCode::ExpandDims)
      read.dims.erase(read.dims.begin() + op.int_attr("axis"));
    return read;
  }

  /// Adds what computing `v` in `layout` at `at` takes to `slice`; false
  /// where something there cannot be computed again.
  bool collect(ir::Value *v, const Layout &layout, const ir::Operation &at,
               Slice &slice) const {
    Key key{v, layout};
    if (!v->type().is_block() || slice.computed.count(key) ||
        slice.held.count(key))
      return true;
    if (ir::Value *held = held_in(v, layout, at)) {
      slice.held[key] = held;
      return true;
    }
    ir::Operation *op = v->defining_op();
    if (!op || !is_rematerializable(*op) ||
        op->parent_block() != at.parent_block() ||
        slice.ops.size() >= kMaxRematerialized) {
      if (ir::Value *within =
              slice.converts_leaves ? within_warps(v, layout) : nullptr) {
        slice.converted[key] = within;
        return true;
      }
      return false;
    }
    for (size_t i = 0; i < op->num_operands(); ++i)
      if (!collect(op->operand(i), operand_layout(*op, i, layout), at, slice))
        return false;
    if (ir::Value *same = computed_already(*op, layout, at, slice)) {
      slice.held[key] = same;
      return true;
    }
    slice.ops.emplace_back(op, layout);
    slice.computed.insert(key);
    return true;
  }

  /// An op before `at` in its block that computes what `op` would in
  /// `layout` (same opcode, attributes and operands as the slice holds
  /// them), such as what an earlier rematerialization left there.
  ir::Value *computed_already(const ir::Operation &op, const Layout &layout,
                              const ir::Operation &at,
                              const Slice &slice) const {
    std::vector<ir::Value *> operands;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      ir::Value *operand = op.operand(i);
      if (operand->type().is_block()) {
        auto held = slice.held.find({operand, operand_layout(op, i, layout)});
        if (held == slice.held.end())
          return nullptr; // computed again itself
        operand = held->second;
      }
      operands.push_back(operand);
    }
    ir::Attributes attributes = op.attributes();
    attributes.erase(result_layout_key(op, 0));
    for (const auto &candidate : at.parent_block()->ops()) {
      if (candidate.get() == &at)
        return nullptr;
      const ir::Operation &other = *candidate;
      if (other.code() != op.code() || other.num_results() != 1 ||
          other.operands() != operands ||
          other.result()->type() != op.result()->type())
        continue;
      ir::Attributes others = other.attributes();
      others.erase(result_layout_key(other, 0));
      if (others == attributes && layouts_->home(other.result()) &&
          same_linear(layout_of(other.result()), layout))
        return other.result();
    }
    return nullptr;
  }

  /// The elements a thread holds in `layout`, replicas counted once.
  int64_t elements(const Layout &layout) const {
    const BlockedLayout &p = layouts_->parent(layout);
    int64_t count = 0;
    for (int64_t r = 0; r < p.num_registers(); ++r)
      count += canonical_register(p, layout, r) == r;
    return count;
  }

  int64_t op_cost(const ir::Operation &op, const Layout &layout) const {
    switch (op.code()) {
    case OpCode::Constant:
    case OpCode::Splat:
    case OpCode::Broadcast:
    case OpCode::ExpandDims:
    case OpCode::MultipleOf:
    case OpCode::MaxContiguous:
    case OpCode::MaxConstancy:
      return 0;
    default:
      return (is_math(op.code()) ? kMathCost : 1) * elements(layout);
    }
  }

  /// What converting a value from `from` to `to` costs (see the top).
  int64_t conversion_cost(const Layout &from, const Layout &to) const {
    const BlockedLayout &pf = layouts_->parent(from);
    const BlockedLayout &pt = layouts_->parent(to);
    std::optional<WarpRoute> route =
        warp_route(linear_layout_of(pf, from), linear_layout_of(pt, to));
    if (!route)
      return 2 * (elements(from) + elements(to)) + kBarrierCost;
    int64_t shuffles = 0;
    for (int64_t r = 0; r < pt.num_registers(); ++r)
      if (canonical_register(pt, to, r) == r &&
          (!route->keeps_lanes() || route->lane_xor[size_t(r)] != 0))
        shuffles += route->keeps_lanes() ? 1 : 2;
    return shuffles;
  }

  /// The ops of `slice` that nothing but `convert` and each other would use
  /// once `convert` is rematerialized: they go.
  std::set<ir::Operation *> dying(const Slice &slice,
                                  const ir::Operation &convert) const {
    std::set<ir::Operation *> dead;
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto &[op, layout] : slice.ops) {
        if (dead.count(op))
          continue;
        bool unused = true;
        for (const ir::Operation *user : uses(op->result()))
          unused = unused && (user == &convert ||
                              dead.count(const_cast<ir::Operation *>(user)));
        if (unused && op->num_results() == 1) {
          dead.insert(op);
          changed = true;
        }
      }
    }
    return dead;
  }

  bool rematerialize(ir::Operation &convert) {
    ir::Value *source = convert.operand(0);
    const Layout &target = layout_of(convert.result());
    Slice slice;
    if (held_in(source, target, convert) ||
        !collect(source, target, convert, slice))
      return false;
    std::set<ir::Operation *> dead = dying(slice, convert);
    int64_t cost = 0;
    for (const auto &[op, layout] : slice.ops)
      cost += op_cost(*op, layout);
    for (ir::Operation *op : dead)
      if (const Layout *carried = layouts_->home(op->result()))
        cost -= op_cost(*op, *carried);
    if (cost >= conversion_cost(layout_of(source), target))
      return false;

    std::map<Key, ir::Value *> versions = slice.held;
    ir::Block &block = *convert.parent_block();
    ir::Block::iterator at = block.find(&convert);
    for (const auto &[op, layout] : slice.ops)
      versions[{op->result(), layout}] =
          clone_in(*op, layout, versions, block, at);
    replace(convert, versions.at({source, target}));
    // The originals that died, users first.
    for (auto it = slice.ops.rbegin(); it != slice.ops.rend(); ++it)
      if (dead.count(it->first)) {
        dead.erase(it->first);
        it->first->parent_block()->erase(it->first);
      }
    return true;
  }

  // ---- Sinking into a narrowing cast. -----------------------------------

  /// `v`, or the source of the conversion that defines it, where a
  /// conversion within warps (shuffles) takes it to `layout`.
  ir::Value *within_warps(ir::Value *v, const Layout &layout) const {
    std::vector<ir::Value *> candidates{v};
    if (const ir::Operation *op = v->defining_op();
        op && op->code() == OpCode::ConvertLayout)
      candidates.insert(candidates.begin(), op->operand(0));
    for (ir::Value *candidate : candidates) {
      const Layout *home = layouts_->home(candidate);
      if (home && !is_staged(candidate) && home->shape == layout.shape &&
          warp_route(linear_layout_of(layouts_->parent(*home), *home),
                     linear_layout_of(layouts_->parent(layout), layout)))
        return candidate;
    }
    return nullptr;
  }

  /// What moving a value of `bytes`-byte elements from `from` to `to`
  /// costs with the vectors it moves (shared memory: a store per run the
  /// writer holds, a load per run the reader needs, at the runs
  /// SharedLayout::for_conversion lets each move, and a barrier).
  int64_t vector_conversion_cost(const Layout &from, const Layout &to,
                                 int64_t bytes) const {
    const BlockedLayout &pf = layouts_->parent(from);
    const BlockedLayout &pt = layouts_->parent(to);
    if (warp_route(linear_layout_of(pf, from), linear_layout_of(pt, to)))
      return conversion_cost(from, to);
    const SharedLayout shared =
        SharedLayout::for_conversion(pf, from, pt, to, bytes);
    auto moves = [&](const BlockedLayout &p, const Layout &l) {
      int64_t run = row_run(p, l, bytes);
      if (shared.kind == SharedLayout::Kind::Padded)
        run = std::min(run, std::max<int64_t>(shared.pad, 1));
      return 2 * elements(l) / run;
    };
    return moves(pf, from) + moves(pt, to) + kBarrierCost;
  }

  static int64_t element_bytes(const ir::Value *v) {
    return llvm_backend::storage_bytes(v->type().element());
  }

  /// A conversion whose value cheap ops of its block carry into a cast to
  /// narrower elements (an accumulator scaled and cast to half precision
  /// for its store) is moved past them: they run in the source layout,
  /// where the conversion's source is, leaves they read from elsewhere
  /// converted there within warps, and the narrow value is converted,
  /// moving half the bytes or fewer. Done where that costs less
  /// (vector_conversion_cost and the ops computed again, less those that
  /// die).
  bool sink_into_narrowing(ir::Operation &convert) {
    const Layout source = layout_of(convert.operand(0));
    const Layout target = layout_of(convert.result());
    ir::Block &block = *convert.parent_block();
    bool after = false;
    for (const auto &candidate : block.ops()) {
      ir::Operation &cast = *candidate;
      after = after || &cast == &convert;
      if (!after || cast.code() != OpCode::Cast ||
          !cast.result()->type().is_block() || !layouts_->home(cast.result()) ||
          !same_linear(layout_of(cast.result()), target) ||
          element_bytes(cast.result()) >= element_bytes(cast.operand(0)))
        continue;
      Slice slice;
      slice.converts_leaves = true;
      if (!collect(cast.result(), source, cast, slice) || slice.ops.empty() ||
          slice.ops.back().first != &cast || !reads_conversion(slice, convert))
        continue;
      if (sink_cost(slice, convert, cast, source, target) >= 0)
        continue;
      sink(slice, cast, source, target);
      return true;
    }
    return false;
  }

  /// Whether the slice reads `convert`'s value (as its source).
  bool reads_conversion(const Slice &slice,
                        const ir::Operation &convert) const {
    for (const auto &[op, layout] : slice.ops)
      for (const ir::Value *operand : op->operands())
        if (operand == convert.result())
          return true;
    return false;
  }

  /// The sinking's cost less what it saves (negative: it pays).
  int64_t sink_cost(const Slice &slice, const ir::Operation &convert,
                    const ir::Operation &cast, const Layout &source,
                    const Layout &target) const {
    std::set<ir::Operation *> dead = dying(slice, cast);
    dead.insert(const_cast<ir::Operation *>(&cast));
    int64_t cost =
        vector_conversion_cost(source, target, element_bytes(cast.result()));
    for (const auto &[op, layout] : slice.ops)
      cost += op_cost(*op, layout);
    for (const auto &[key, v] : slice.converted)
      cost += conversion_cost(layout_of(v), key.second);
    for (ir::Operation *op : dead)
      if (const Layout *carried = layouts_->home(op->result()))
        cost -= op_cost(*op, *carried);
    // The wide conversion goes where the slice was its only reader.
    bool others = false;
    for (const ir::Operation *user : uses(convert.result()))
      others = others || !dead.count(const_cast<ir::Operation *>(user));
    if (!others)
      cost -= vector_conversion_cost(source, target,
                                     element_bytes(convert.result()));
    return cost;
  }

  /// The slice computed again before `cast` in `source`, its narrow value
  /// converted to `target` in place of the cast's result.
  void sink(const Slice &slice, ir::Operation &cast, const Layout &source,
            const Layout &target) {
    ir::Block &block = *cast.parent_block();
    ir::Block::iterator at = block.find(&cast);
    std::map<Key, ir::Value *> versions = slice.held;
    for (const auto &[key, v] : slice.converted) {
      auto convert = make_convert_layout(
          v, layout_text(layouts_->parent(key.second), key.second), cast.loc());
      versions[key] = convert->result();
      block.insert(at, std::move(convert));
    }
    for (const auto &[op, layout] : slice.ops)
      versions[{op->result(), layout}] =
          clone_in(*op, layout, versions, block, at);
    auto narrow = make_convert_layout(
        versions.at({cast.result(), source}),
        layout_text(layouts_->parent(target), target), cast.loc());
    ir::Value *converted = narrow->result();
    block.insert(at, std::move(narrow));
    function_.replace_all_uses(cast.result(), converted);
    erase_unused(slice);
  }

  /// `op` computed again in `layout` before `at` in `block`, reading
  /// `versions`.
  ir::Value *clone_in(const ir::Operation &op, const Layout &layout,
                      const std::map<Key, ir::Value *> &versions,
                      ir::Block &block, ir::Block::iterator at) {
    auto copy = std::make_unique<ir::Operation>(
        op.code(), op.operands(), std::vector<ir::Type>{op.result()->type()},
        op.attributes(), op.loc());
    for (size_t i = 0; i < copy->num_operands(); ++i)
      if (copy->operand(i)->type().is_block())
        copy->set_operand(
            i, versions.at({copy->operand(i), operand_layout(op, i, layout)}));
    copy->set_attr(result_layout_key(*copy, 0),
                   layout_text(layouts_->parent(layout), layout));
    ir::Value *result = copy->result();
    block.insert(at, std::move(copy));
    return result;
  }

  /// The slice's originals that nothing uses any more, users first.
  void erase_unused(const Slice &slice) {
    for (auto it = slice.ops.rbegin(); it != slice.ops.rend(); ++it)
      if (!function_.has_uses(it->first->result()))
        it->first->parent_block()->erase(it->first);
  }

  ir::Function &function_;
  const GpuPassOptions &options_;
  std::unique_ptr<LayoutAssignment> layouts_;
  std::map<const ir::Value *, std::vector<ir::Operation *>> uses_;
};

} // namespace

void remove_conversions(ir::Function &function, const GpuPassOptions &options) {
  if (!carries_explicit_layouts(function))
    return;
  RemoveConversions(function, options).run();
}

} // namespace blocc::nvptx
