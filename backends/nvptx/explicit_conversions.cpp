// The gpu-explicit-conversions pass (gpu_passes.h): rewrites the layouts
// gpu-assign-layouts wrote (a value's home and every layout it is needed
// in) into the explicit form of layout_attrs.h, where every block value
// has exactly one layout:
//
//   - a value computed per layout (index arithmetic, constants, elementwise
//     ops: everything without a home) becomes one op per layout it is
//     needed in, each reading its operands in the layouts it needs them in;
//   - a value with a home (a load, a reduction, a loop-carried value, ...)
//     stays one op in its home, and each other layout it is needed in is
//     one `convert_layout` right after it (right after a loop body's
//     arguments, for theirs), where the lowering converted it before;
//   - every use then takes the copy in the layout its op reads: stores,
//     reductions, shape ops, dots, loops and ifs as the lowering reads
//     them (kernel_lowering.h).
//
// Copies and conversions stand in the order the lowering computed them
// (the layouts of a value in the assignment's order, right where the value
// is defined), so the PTX does not change. Later passes
// (gpu-remove-conversions) then work on conversions as ops.
//
// A load that a pipelined loop copies ahead (async_copy) never lives in
// registers: the dot reads its stage of shared memory in place, so it is
// used as it is and converted to nothing. (In the GPU pipeline
// gpu-pipeline-loops runs after this pass and removes the conversions of
// the loads it marks; hand-written GPU IR may mark them before.)
#include "backends/nvptx/assign_layouts.h"
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/gpu_passes.h"
#include "backends/nvptx/layout_attrs.h"
#include "backends/nvptx/shape_layouts.h"
#include "ir/error.h"

#include <map>
#include <optional>

namespace blocc::nvptx {

using ir::OpCode;

namespace {

/// One copy of an op: the layout of each of its results (nullopt: a scalar
/// or a result nothing needs) and the layout it reads each operand in
/// (nullopt: a scalar, or taken as it is).
struct Instance {
  std::vector<std::optional<Layout>> results;
  std::vector<std::optional<Layout>> operands;
};

bool is_staged(const ir::Value *v) {
  const ir::Operation *op = v->defining_op();
  return op && lands_in_tile(*op);
}

/// Removes every layout attribute of the implicit form (and any explicit
/// one, which the pass writes again).
void erase_layout_attributes(ir::Attributes &attributes) {
  for (auto it = attributes.begin(); it != attributes.end();)
    it = is_layout_key(it->first) ? attributes.erase(it) : std::next(it);
}

class ExplicitConversions {
public:
  ExplicitConversions(ir::Function &function, const LayoutAssignment &layouts)
      : function_(function), layouts_(layouts) {}

  void run() {
    erase_layout_attributes(function_.attributes());
    for (size_t i = 0; i < layouts_.parents().size(); ++i)
      function_.attributes()[gpu_attr::kParentPrefix + std::to_string(i)] =
          layouts_.parents()[i].str();
    ir::Block &body = function_.body();
    auto at = body.ops().begin();
    for (size_t j = 0; j < function_.num_arguments(); ++j) {
      const ir::Value *argument = function_.argument(j);
      const Layout *home = argument_home(argument);
      if (!home)
        continue;
      function_.attributes()[argument_layout_key(j)] = text(*home);
      at = convert_to_others(body, at, function_.argument(j), *home);
    }
    block(body, at);
  }

private:
  /// A function argument's layout: its home, else the first it is needed in
  /// (block arguments of functions occur in tests of passes only).
  const Layout *argument_home(const ir::Value *argument) const {
    if (!argument->type().is_block())
      return nullptr;
    if (const Layout *home = layouts_.home(argument))
      return home;
    const std::vector<Layout> &needed = layouts_.layouts_of(argument);
    return needed.empty() ? nullptr : &needed.front();
  }

  /// Rewrites the ops of `block` from `from` on.
  void block(ir::Block &block, ir::Block::iterator from) {
    for (auto it = from; it != block.ops().end();)
      it = op(block, it);
  }

  /// Rewrites the op at `it`; returns the position after it and what was
  /// inserted after it.
  ir::Block::iterator op(ir::Block &block, ir::Block::iterator it) {
    ir::Operation &original = **it;
    if (original.code() == OpCode::Yield) {
      yield(original);
      return std::next(it);
    }
    std::vector<Instance> copies = instances(original);
    erase_layout_attributes(original.attributes());
    // The first copy is the op itself; the others are clones made before it
    // reads its operands in its own layouts.
    const std::vector<ir::Value *> operands = original.operands();
    ir::Block::iterator last = it;
    for (size_t c = 1; c < copies.size(); ++c) {
      last = block.insert(std::next(last), clone(original));
      bind(**last, original, operands, copies[c]);
    }
    bind(original, original, operands, copies[0]);
    if (original.code() == OpCode::For)
      loop_body(original);
    else
      for (size_t r = 0; r < original.num_regions(); ++r)
        this->block(*original.region(r), original.region(r)->ops().begin());
    auto next = std::next(last);
    if (copies.size() == 1)
      for (size_t k = 0; k < original.num_results(); ++k)
        if (const std::optional<Layout> &home = copies[0].results[k];
            home && !is_staged(original.result(k)))
          next = convert_to_others(block, next, original.result(k), *home);
    return next;
  }

  /// `op` in layouts: its operands replaced by their copies in the layouts
  /// it reads them in, its results' layouts written and noted as copies.
  void bind(ir::Operation &copy, const ir::Operation &original,
            const std::vector<ir::Value *> &operands,
            const Instance &instance) {
    for (size_t i = 0; i < copy.num_operands(); ++i)
      if (instance.operands[i])
        copy.set_operand(i,
                         version(original, operands[i], *instance.operands[i]));
    for (size_t k = 0; k < copy.num_results(); ++k) {
      if (!instance.results[k])
        continue;
      copy.set_attr(result_layout_key(copy, k), text(*instance.results[k]));
      versions_[{original.result(k), *instance.results[k]}] = copy.result(k);
    }
  }

  static std::unique_ptr<ir::Operation> clone(const ir::Operation &op) {
    std::vector<ir::Type> types;
    for (size_t k = 0; k < op.num_results(); ++k)
      types.push_back(op.result(k)->type());
    if (op.num_regions() != 0)
      throw Error("internal: " + op.describe() +
                  " is computed per layout but has regions");
    return std::make_unique<ir::Operation>(op.code(), op.operands(), types,
                                           op.attributes(), op.loc());
  }

  /// A loop body's block arguments in their loop results' homes, converted
  /// to the other layouts the body needs them in before anything else.
  void loop_body(ir::Operation &loop) {
    ir::Block &body = *loop.region(0);
    auto at = body.ops().begin();
    for (size_t k = 0; k < loop.num_results(); ++k) {
      const Layout *home = layouts_.home(loop.result(k));
      ir::Value *argument = body.argument(1 + k);
      if (!argument->type().is_block() || !home)
        continue;
      loop.set_attr(argument_layout_key(1 + k), text(*home));
      versions_[{argument, *home}] = argument;
      at = convert_to_others(body, at, argument, *home);
    }
    block(body, at);
  }

  /// A loop's or an if's yield hands each block value back in its result's
  /// home.
  void yield(ir::Operation &yield) {
    const ir::Operation *parent = yield.parent_op();
    if (!parent ||
        (parent->code() != OpCode::For && parent->code() != OpCode::If))
      return;
    for (size_t k = 0; k < yield.num_operands(); ++k)
      if (yield.operand(k)->type().is_block())
        yield.set_operand(k, version(yield, yield.operand(k),
                                     home_of(*parent, parent->result(k))));
  }

  /// Inserts at `at` one conversion of `v` (held in `home`) to each other
  /// layout it is needed in; returns the position after them.
  ir::Block::iterator convert_to_others(ir::Block &block,
                                        ir::Block::iterator at, ir::Value *v,
                                        const Layout &home) {
    versions_[{v, home}] = v;
    for (const Layout &layout : layouts_.layouts_of(v)) {
      if (layout == home)
        continue;
      auto convert = make_convert_layout(
          v, text(layout),
          v->defining_op() ? v->defining_op()->loc() : ir::Location{});
      versions_[{v, layout}] = convert->result();
      at = std::next(block.insert(at, std::move(convert)));
    }
    return at;
  }

  /// `v` in `layout`, for `user`.
  ir::Value *version(const ir::Operation &user, ir::Value *v,
                     const Layout &layout) const {
    if (is_staged(v))
      return v;
    auto it = versions_.find({v, layout});
    if (it == versions_.end())
      throw Error("internal: GPU IR: " + user.describe() + " reads " +
                  (v->defining_op() ? v->defining_op()->describe()
                                    : std::string("an argument")) +
                  " in " + text(layout) + ", which it is not computed in");
    return it->second;
  }

  const Layout &home_of(const ir::Operation &op, const ir::Value *v) const {
    const Layout *home = layouts_.home(v);
    if (!home)
      throw Error("internal: GPU IR: " + op.describe() + " has no home");
    return *home;
  }

  /// The copies of `op` and what each reads, as the lowering reads them.
  std::vector<Instance> instances(const ir::Operation &op) const {
    if (moves_elements(op))
      return shape_instances(op);
    Instance one{std::vector<std::optional<Layout>>(op.num_results()),
                 std::vector<std::optional<Layout>>(op.num_operands())};
    for (size_t k = 0; k < op.num_results(); ++k)
      if (const Layout *home = layouts_.home(op.result(k)))
        one.results[k] = *home;
    auto all_block_operands = [&](const Layout &layout) {
      for (size_t i = 0; i < op.num_operands(); ++i)
        if (op.operand(i)->type().is_block())
          one.operands[i] = layout;
    };
    switch (op.code()) {
    case OpCode::Store:
      if (op.operand(1)->type().is_block())
        all_block_operands(layouts_.store_layout(op));
      return {one};
    case OpCode::Reduce:
      if (op.operand(0)->type().is_block())
        all_block_operands(layouts_.reduce_layout(op));
      return {one};
    case OpCode::Scan:
      all_block_operands(home_of(op, op.result(0)));
      return {one};
    case OpCode::Dot:
      dot_operands(op, one);
      return {one};
    case OpCode::For:
      for (size_t k = 0; k < op.num_results(); ++k)
        if (op.operand(3 + k)->type().is_block())
          one.operands[3 + k] = home_of(op, op.result(k));
      return {one};
    case OpCode::If:
      return {one};
    case OpCode::Print:
      for (size_t i = 0; i < op.num_operands(); ++i)
        if (op.operand(i)->type().is_block())
          one.operands[i] = full_layout(op, op.operand(i));
      return {one};
    case OpCode::Assert:
      if (op.operand(0)->type().is_block())
        one.operands[0] = first_needed(op, op.operand(0));
      return {one};
    default:
      break;
    }
    if (op.num_results() != 1 || !op.result()->type().is_block())
      return {one};
    if (const Layout *home = layouts_.home(op.result())) {
      // Produced once (a load, an atomic): its operands in its home.
      all_block_operands(*home);
      return {one};
    }
    std::vector<Instance> copies;
    for (const Layout &layout : layouts_.layouts_of(op.result()))
      copies.push_back(per_layout(op, layout));
    if (copies.empty()) // nothing needs it: left as it is, not computed
      copies.push_back(one);
    return copies;
  }

  /// A value computed in `layout`: what it reads its operands in.
  Instance per_layout(const ir::Operation &op, const Layout &layout) const {
    Instance copy{{layout},
                  std::vector<std::optional<Layout>>(op.num_operands())};
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const ir::Value *operand = op.operand(i);
      if (!operand->type().is_block())
        continue;
      switch (op.code()) {
      case OpCode::Broadcast:
      case OpCode::ExpandDims: {
        // The operand's layout shares the result's parent.
        Layout seen{layout.parent, layout.dims, operand->type().shape()};
        if (op.code() == OpCode::ExpandDims)
          seen.dims.erase(seen.dims.begin() + op.int_attr("axis"));
        copy.operands[i] = seen;
        break;
      }
      case OpCode::Reshape:
        copy.operands[i] = reshaped_operand_layout(op, layout);
        break;
      default: // elementwise ops and hints
        copy.operands[i] = layout;
        break;
      }
    }
    return copy;
  }

  /// A shape op: one copy per run of (result, layout) pairs that read their
  /// operands in the same layouts and give each result at most one layout.
  std::vector<Instance> shape_instances(const ir::Operation &op) const {
    std::vector<Instance> copies;
    if (op.code() == OpCode::Split && !op.result(0)->type().is_block()) {
      Instance pair{{std::nullopt, std::nullopt}, {std::nullopt}};
      pair.operands[0] = layouts_.shape_operand_layouts(op, 0, Layout{}).at(0);
      return {pair};
    }
    for (size_t k = 0; k < op.num_results(); ++k)
      for (const Layout &layout : layouts_.layouts_of(op.result(k))) {
        const std::vector<Layout> &reads =
            layouts_.shape_operand_layouts(op, k, layout);
        std::vector<std::optional<Layout>> operands;
        for (size_t i = 0; i < op.num_operands(); ++i)
          operands.push_back(op.operand(i)->type().is_block()
                                 ? std::optional<Layout>(reads.at(i))
                                 : std::nullopt);
        if (copies.empty() || copies.back().results[k] ||
            copies.back().operands != operands)
          copies.push_back(
              {std::vector<std::optional<Layout>>(op.num_results()), operands});
        copies.back().results[k] = layout;
      }
    if (copies.empty())
      copies.push_back({std::vector<std::optional<Layout>>(op.num_results()),
                        std::vector<std::optional<Layout>>(op.num_operands())});
    return copies;
  }

  /// A dot reads its accumulator in its result's home, A where its
  /// fragments are (mma_a_in_registers) else in the first layout it is
  /// needed in, B in the first; a tile a pipelined loop copied ahead is
  /// read in shared memory as it is.
  void dot_operands(const ir::Operation &dot, Instance &one) const {
    one.operands[2] = home_of(dot, dot.result());
    for (size_t side = 0; side < 2; ++side) {
      const ir::Value *input = dot.operand(side);
      if (is_staged(input))
        continue;
      one.operands[side] = first_needed(dot, input);
      if (side != 0)
        continue;
      if (std::optional<BlockedLayout> fragments = registers_a_layout(dot))
        for (const Layout &layout : layouts_.layouts_of(input))
          if (layouts_.parent(layout) == *fragments &&
              layout.dims == std::vector<int>{0, 1})
            one.operands[side] = layout;
    }
  }

  const Layout &first_needed(const ir::Operation &user,
                             const ir::Value *v) const {
    const std::vector<Layout> &needed = layouts_.layouts_of(v);
    if (needed.empty())
      throw Error("internal: GPU IR: an operand of " + user.describe() +
                  " has no layout");
    return needed.front();
  }

  /// A layout of `v` with the parent's dimensions in order: each element
  /// has one owner there (print).
  const Layout &full_layout(const ir::Operation &user,
                            const ir::Value *v) const {
    for (const Layout &l : layouts_.layouts_of(v)) {
      bool identity = l.shape == layouts_.parent(l).shape &&
                      l.dims.size() == l.shape.size();
      for (size_t d = 0; identity && d < l.dims.size(); ++d)
        identity = l.dims[d] == static_cast<int>(d);
      if (identity)
        return l;
    }
    throw Error("internal: no full layout for the operand of " +
                user.describe());
  }

  std::string text(const Layout &layout) const {
    return layout_text(layouts_.parent(layout), layout);
  }

  ir::Function &function_;
  const LayoutAssignment &layouts_;
  /// Each value's copy in each layout: the value itself in its home (or
  /// first layout), the other copies or conversions.
  std::map<std::pair<const ir::Value *, Layout>, ir::Value *> versions_;
};

} // namespace

void make_conversions_explicit(ir::Function &function,
                               const GpuPassOptions &options) {
  // Explicit layouts stand; without layouts there is nothing to rewrite.
  if (!carries_layouts(function) || carries_explicit_layouts(function))
    return;
  // The implicit form must hold (complete, each layout fitting its value):
  // a message about it names what is wrong there.
  verify_gpu_ir(function, options.num_warps, options.arch);
  std::unique_ptr<LayoutAssignment> layouts =
      LayoutAssignment::read(function, options.num_warps, options.arch);
  ExplicitConversions(function, *layouts).run();
}

} // namespace blocc::nvptx
