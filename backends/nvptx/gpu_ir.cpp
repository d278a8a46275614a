#include "backends/nvptx/gpu_ir.h"

#include "ir/tensor_descriptor.h"

#include "backends/nvptx/layout_attrs.h"
#include "backends/nvptx/mma_layouts.h"
#include "ir/error.h"

#include <cmath>
#include <string>
#include <variant>

namespace blocc::nvptx {

using ir::OpCode;

namespace {

[[noreturn]] void invalid(const ir::Operation &op, const std::string &why) {
  throw Error("GPU IR: " + op.describe() + ": " + why);
}

/// The (warps along M, warps along N) of a dot on tensor cores.
std::pair<int64_t, int64_t> mma_warps(const ir::Operation &dot) {
  const std::vector<int64_t> &grid = dot.ints_attr(gpu_attr::kMmaWarps);
  return {grid.at(0), grid.at(1)};
}

void verify_dot(const ir::Operation &dot, int num_warps, const GpuArch &arch) {
  auto engine = dot.attributes().find(gpu_attr::kEngine);
  if (engine == dot.attributes().end())
    invalid(dot, "has no engine (\"mma.sync\" or \"fma\")");
  const std::string *name = std::get_if<std::string>(&engine->second);
  if (!name || (*name != gpu_attr::kMma && *name != gpu_attr::kWgmma &&
                *name != gpu_attr::kFma))
    invalid(dot, "engine must be \"mma.sync\", \"wgmma\" or \"fma\"");
  if (*name == gpu_attr::kFma) {
    if (dot.has_attr(gpu_attr::kMmaWarps) ||
        dot.has_attr(gpu_attr::kMmaAInRegisters))
      invalid(dot, "mma_warps and mma_a_in_registers need engine "
                   "\"mma.sync\"");
    return;
  }
  const bool warpgroups = *name == gpu_attr::kWgmma;
  std::string refusal = warpgroups
                            ? why_not_on_warpgroups(dot, num_warps, arch)
                            : why_not_on_tensor_cores(dot, num_warps, arch);
  if (!refusal.empty())
    invalid(dot,
            std::string("cannot run ") +
                (warpgroups ? "as warpgroup MMAs: " : "on tensor cores: ") +
                refusal);
  auto grid = dot.attributes().find(gpu_attr::kMmaWarps);
  const auto *warps = grid == dot.attributes().end()
                          ? nullptr
                          : std::get_if<std::vector<int64_t>>(&grid->second);
  if (!warps || warps->size() != 2)
    invalid(dot, "mma_warps must be [warps along M, warps along N]");
  auto [along_m, along_n] = mma_warps(dot);
  const ir::Type &c = dot.result()->type();
  if (along_m < 1 || along_n < 1 || along_m * along_n != num_warps ||
      c.dim(0) % (16 * along_m) != 0 || c.dim(1) % (8 * along_n) != 0)
    invalid(dot, "mma_warps [" + std::to_string(along_m) + ", " +
                     std::to_string(along_n) + "] does not split " +
                     std::to_string(c.dim(0)) + " x " +
                     std::to_string(c.dim(1)) + " into 16 x 8 tiles over " +
                     std::to_string(num_warps) + " warps");
  if (warpgroups && along_n != 1)
    invalid(dot, "wgmma needs every warp along M (mma_warps [" +
                     std::to_string(num_warps) + ", 1])");
  if (dot.has_attr(gpu_attr::kMmaAInRegisters) && along_n != 1)
    invalid(dot, "mma_a_in_registers needs warps that split M alone "
                 "(mma_warps [" +
                     std::to_string(num_warps) + ", 1])");
  if (dot.has_attr(gpu_attr::kMmaAInRegisters) &&
      ir::scalar_bits(dot.operand(0)->type().element()) != 16)
    invalid(dot, "mma_a_in_registers needs 16-bit A (f16 or bf16), whose "
                 "accumulator fragments are its A fragments");
}

void verify_stages(const ir::Operation &op) {
  const ir::Attribute &stages = op.attributes().at(gpu_attr::kNumStages);
  const int64_t *count = std::get_if<int64_t>(&stages);
  if (op.code() != OpCode::For)
    invalid(op, "num_stages belongs on loops");
  if (!count || *count < 1 || *count > 8)
    invalid(op, "num_stages must be from 1 to 8");
}

void verify_async_copy(const ir::Operation &op) {
  const ir::Operation *loop = op.parent_op();
  if ((op.code() != OpCode::Load &&
       !(op.code() == OpCode::DescriptorLoad && copied_by_tma(op))) ||
      !loop || loop->code() != OpCode::For || loop_stages(*loop) < 2)
    invalid(op, "async_copy belongs on loads (or descriptor loads marked "
                "tma) in the body of a loop of 2 stages or more");
}

void verify_prefetch(const ir::Operation &op) {
  const ir::Operation *loop = op.parent_op();
  if (op.code() != OpCode::Load || op.result()->type().rank() != 1 || !loop ||
      loop->code() != OpCode::For || loop_stages(*loop) < 2)
    invalid(op, "prefetch belongs on loads of vectors in the body of a loop "
                "of 2 stages or more");
}

/// A TMA copy moves a 2-D tile on sm_90a.
void verify_tma(const ir::Operation &op, const GpuArch &arch) {
  if (!ir::is_descriptor_access(op.code()))
    invalid(op, "tma belongs on descriptor loads and stores");
  if (arch.sm != 90 || !arch.arch_specific)
    invalid(op, "tma needs sm_90a, not " + arch.name());
  if (ir::DescriptorOperands(op).tile_type().rank() != 2)
    invalid(op, "tma copies tiles of rank 2");
}

/// Whether `user` needs its block operands in some layout: it has effects
/// or no block results (stores, yields, reductions to scalars), or one of
/// its block results is needed. A value only dead ops use needs none.
bool needs_operands(const ir::Operation &user,
                    const LayoutAssignment &layouts) {
  bool block_results = false;
  for (size_t k = 0; k < user.num_results(); ++k) {
    const ir::Value *result = user.result(k);
    if (!result->type().is_block())
      continue;
    block_results = true;
    if (layouts.home(result) || layouts.shared_layout(result) ||
        !layouts.layouts_of(result).empty())
      return true;
  }
  return !block_results || user.num_regions() != 0;
}

/// A parent spreads its elements over the 32 threads of each of the
/// kernel's warps: the lowering numbers lanes and warps by it.
void verify_parent(const ir::Function &function, size_t index,
                   const BlockedLayout &p, int num_warps) {
  std::string name = "GPU IR: function '" + function.name() + "': #blocked" +
                     std::to_string(index);
  int64_t threads = 1, warps = 1;
  for (int d = 0; d < p.rank(); ++d) {
    if (p.shape[d] < 1 || p.size_per_thread[d] < 1)
      throw Error(name + " has an empty dimension");
    threads *= p.threads_per_warp[d];
    warps *= p.warps_per_cta[d];
    // A warp's repetitions are registers below the warps' bits: the
    // lowering's replica handling (a tile wider than the shape wraps its
    // lanes and warps) does not know them.
    if (p.repeats_in_warp(d) != 1 && p.tile(d) > p.shape[d])
      throw Error(name + " repeats a warp's lanes along dimension " +
                  std::to_string(d) + " but its tile of " +
                  std::to_string(p.tile(d)) + " exceeds the extent " +
                  std::to_string(p.shape[d]));
  }
  if (threads != kWarpSize || warps != num_warps)
    throw Error(name + " spreads its elements over " + std::to_string(threads) +
                " threads of " + std::to_string(warps) + " warps, not " +
                std::to_string(kWarpSize) + " threads of " +
                std::to_string(num_warps));
}

void verify_explicit_layouts(const ir::Function &function,
                             const LayoutAssignment &layouts);

/// The layouts the IR carries (layout_attrs.h) read (each fits its value,
/// each parent is defined: LayoutAssignment::read checks as it reads),
/// their parents fit the warps, and every block value something needs
/// has one.
void verify_layouts(const ir::Function &function, int num_warps,
                    const GpuArch &arch) {
  std::unique_ptr<LayoutAssignment> layouts =
      LayoutAssignment::read(function, num_warps, arch);
  for (size_t i = 0; i < layouts->parents().size(); ++i)
    verify_parent(function, i, layouts->parents()[i], num_warps);
  if (carries_explicit_layouts(function))
    verify_explicit_layouts(function, *layouts);
  function.walk([&](const ir::Operation &user) {
    if (!needs_operands(user, *layouts))
      return;
    for (const ir::Value *operand : user.operands()) {
      if (!operand->type().is_block() || layouts->home(operand) ||
          layouts->shared_layout(operand) ||
          !layouts->layouts_of(operand).empty())
        continue;
      const ir::Operation *producer = operand->defining_op();
      if (!producer)
        invalid(user,
                "operand of type " + operand->type().str() + " has no layout");
      std::string which =
          producer->num_results() == 1
              ? std::string()
              : "result " + std::to_string(operand->index()) + " ";
      invalid(*producer,
              which + "has no layout (" + user.describe() + " needs it)");
    }
  });
}

/// The explicit form's layouts (layout_attrs.h) agree with each other: a
/// convert_layout moves a value that has a layout to the one its result
/// has, and the ops whose reading rule is their result's layout (elementwise
/// ops, hints, loads, atomics), stores, loops and ifs have their block
/// operands in the layouts they read them in, or in layouts equal to those
/// as linear layouts (the same registers of the same threads). (What a
/// shape op, reduction or dot reads is its operands' layouts, which the
/// lowering checks.)
class ExplicitLayoutsCheck {
public:
  explicit ExplicitLayoutsCheck(const LayoutAssignment &layouts)
      : layouts_(layouts) {}

  void op(const ir::Operation &op) const {
    shared_values(op);
    switch (op.code()) {
    case OpCode::ConvertLayout: {
      const bool from_shared = layouts_.shared_layout(op.operand(0));
      const bool to_shared = layouts_.shared_layout(op.result());
      if (from_shared && to_shared)
        invalid(op, "converts a value in shared memory to shared memory "
                    "(one is written from registers and read into them)");
      if (!from_shared && !layouts_.home(op.operand(0)))
        invalid(op, "converts a value that has no layout");
      if (!to_shared && !layouts_.home(op.result()))
        invalid(op, "has no layout to convert to");
      return;
    }
    case OpCode::Store:
      for (size_t i = 1; i < op.num_operands(); ++i)
        same(op, i, op.operand(0), "its pointers");
      return;
    case OpCode::For:
      for (size_t k = 0; k < op.num_results(); ++k) {
        same(op, 3 + k, op.result(k), "result " + std::to_string(k));
        same_value(op, op.region(0)->argument(1 + k), op.result(k),
                   "body argument " + std::to_string(1 + k),
                   "result " + std::to_string(k));
      }
      return;
    case OpCode::Yield:
      if (const ir::Operation *parent = op.parent_op();
          parent &&
          (parent->code() == OpCode::For || parent->code() == OpCode::If))
        for (size_t k = 0; k < op.num_operands(); ++k)
          same(op, k, parent->result(k),
               "result " + std::to_string(k) + " of " + parent->describe());
      return;
    default:
      break;
    }
    if (ir::is_elementwise(op.code()) || op.code() == OpCode::Load ||
        op.code() == OpCode::AtomicRmw || op.code() == OpCode::AtomicCas ||
        op.code() == OpCode::MultipleOf || op.code() == OpCode::MaxContiguous ||
        op.code() == OpCode::MaxConstancy)
      for (size_t i = 0; i < op.num_operands(); ++i)
        if (!copied_ahead_load(op.operand(i)))
          same(op, i, op.result(), "its result");
  }

private:
  /// A value in shared memory (`#sharedN`) is written by a convert_layout
  /// from registers, or, in a swizzled tile, copied there by a load of a
  /// pipelined loop (async_copy) or by the Tensor Memory Accelerator (a
  /// descriptor_load marked tma; a view of either, is_tile_view, stays
  /// there). A padded
  /// value is read by convert_layout ops of its block, into registers:
  /// the kernel's shared buffer holds it from its write to the reads that
  /// follow. A tile is read by dots on tensor cores, as the tile of the
  /// operand it is (mma_layouts.h: fragment_tile_of), or, written by a
  /// convert_layout, read back by convert_layout ops as a padded value is
  /// (a conversion through a swizzled tile), never both.
  void shared_values(const ir::Operation &op) const {
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const ir::Value *v = op.operand(i);
      const SharedLayout *layout = layouts_.shared_layout(v);
      if (!layout)
        continue;
      std::string shared =
          "#shared" + std::to_string(layouts_.shared_number(v));
      if (layout->kind == SharedLayout::Kind::Swizzled) {
        const bool into_registers = op.code() == OpCode::ConvertLayout;
        auto [it, first] = tile_read_into_registers_.emplace(v, into_registers);
        if (!first && it->second != into_registers)
          invalid(op, "operand " + std::to_string(i) +
                          " is in a tile of shared memory (" + shared +
                          ") that dots read in place and a convert_layout "
                          "reads back into registers: one or the other");
        if (!into_registers) {
          tile_reader(op, i, *layout, shared);
          continue;
        }
        // A conversion through a swizzled tile: written by a convert_layout.
        const ir::Operation *producer = v->defining_op();
        if (!producer || producer->code() != OpCode::ConvertLayout)
          invalid(op, "operand " + std::to_string(i) +
                          " is in a tile of shared memory (" + shared +
                          ") that no convert_layout wrote (a copy ahead or "
                          "a view of a tile): only dots read it, in place");
      }
      if (op.code() != OpCode::ConvertLayout)
        invalid(op, "operand " + std::to_string(i) + " is in shared memory (" +
                        shared + "), which only a convert_layout reads");
      const ir::Operation *producer = v->defining_op();
      if (!producer || producer->parent_block() != op.parent_block())
        invalid(op, "reads a value in shared memory (" + shared +
                        ") outside the block that writes it");
    }
    for (size_t k = 0; k < op.num_results(); ++k)
      if (const SharedLayout *layout = layouts_.shared_layout(op.result(k)))
        shared_writer(op, *layout);
    for (size_t r = 0; r < op.num_regions(); ++r)
      for (const ir::Value *argument : op.region(r)->arguments())
        if (layouts_.shared_layout(argument))
          invalid(op, "a block argument cannot be in shared memory");
  }

  /// `op` reads operand `i`, in the swizzled tile `layout` (`shared`).
  static void tile_reader(const ir::Operation &op, size_t i,
                          const SharedLayout &layout,
                          const std::string &shared) {
    const ir::Value *v = op.operand(i);
    if (is_tile_view(op))
      return; // a tile itself (shared_writer)
    if (!runs_on_tensor_cores(op) || i > 1)
      invalid(op, "operand " + std::to_string(i) +
                      " is in a tile of shared "
                      "memory (" +
                      shared +
                      "), which only dots on tensor cores "
                      "read (as A or B)");
    const int64_t bytes = ir::scalar_bits(v->type().element()) / 8;
    const bool warpgroups = runs_on_warpgroups(op);
    std::optional<FragmentTile> tile =
        fragment_tile_of(layout, static_cast<int>(i), bytes, warpgroups);
    if (!tile || (!tile->k_fastest && bytes != 2))
      invalid(op, std::string(i == 0 ? "A" : "B") + " is in " + shared + " (" +
                      layout.str() + "), which is no tile " +
                      (warpgroups ? "warpgroup MMAs read" : "ldmatrix reads") +
                      " for it: swizzled as its rows' bytes say" +
                      (warpgroups ? " (in atoms of 128 bytes)" : "") +
                      ", with K fastest unless its elements are 16-bit");
  }

  /// `op` writes a result in `layout`.
  void shared_writer(const ir::Operation &op,
                     const SharedLayout &layout) const {
    if (op.code() == OpCode::ConvertLayout)
      return;
    const bool tile = layout.kind == SharedLayout::Kind::Swizzled;
    if (tile && lands_in_tile(op))
      return;
    const SharedLayout *viewed =
        is_tile_view(op) ? layouts_.shared_layout(op.operand(0)) : nullptr;
    if (tile && viewed && view_layout(op, *viewed) == layout)
      return;
    invalid(op, "only a convert_layout writes a value in shared memory (a "
                "load copied ahead, or a view of a tile: a bitcast to the "
                "same width, or a permute, in the tile's layout permuted)");
  }

  static bool copied_ahead_load(const ir::Value *v) {
    const ir::Operation *producer = v->defining_op();
    return producer && lands_in_tile(*producer);
  }

  /// Operand `i` of `op` carries the layout of `other` (where both are
  /// blocks and `other` has one).
  void same(const ir::Operation &op, size_t i, const ir::Value *other,
            const std::string &whose) const {
    same_value(op, op.operand(i), other, "operand " + std::to_string(i), whose);
  }

  void same_value(const ir::Operation &op, const ir::Value *v,
                  const ir::Value *other, const std::string &what,
                  const std::string &whose) const {
    const Layout *expected = layouts_.home(other);
    if (!v->type().is_block() || !expected)
      return;
    const Layout *layout = layouts_.home(v);
    if (layout && same_linear_layout(layouts_.parent(*layout), *layout,
                                     layouts_.parent(*expected), *expected))
      return;
    invalid(op, what + " is in " +
                    (layout ? text(*layout) : std::string("no layout")) +
                    ", not in " + text(*expected) + ", the layout of " + whose +
                    " (a convert_layout moves a value between "
                    "layouts)");
  }

  std::string text(const Layout &l) const {
    return layout_text(layouts_.parent(l), l);
  }

  const LayoutAssignment &layouts_;
  /// Each tile read so far: whether back into registers (or by dots).
  mutable std::map<const ir::Value *, bool> tile_read_into_registers_;
};

void verify_explicit_layouts(const ir::Function &function,
                             const LayoutAssignment &layouts) {
  ExplicitLayoutsCheck check(layouts);
  function.walk([&](const ir::Operation &op) { check.op(op); });
}

} // namespace

bool is_gpu_ir(const ir::Function &function) {
  bool annotated = carries_layouts(function);
  function.walk([&](const ir::Operation &op) {
    annotated = annotated || op.has_attr(gpu_attr::kEngine) ||
                op.has_attr(gpu_attr::kNumStages);
  });
  return annotated;
}

bool runs_on_tensor_cores(const ir::Operation &dot) {
  if (dot.code() != OpCode::Dot)
    return false;
  const std::string engine = dot.string_attr_or(gpu_attr::kEngine, "");
  return engine == gpu_attr::kMma || engine == gpu_attr::kWgmma;
}

bool runs_on_warpgroups(const ir::Operation &dot) {
  return dot.code() == OpCode::Dot &&
         dot.string_attr_or(gpu_attr::kEngine, "") == gpu_attr::kWgmma;
}

bool is_positive_zero(const ir::Value *v) {
  const ir::Operation *op = v->defining_op();
  if (op && op->code() == OpCode::Splat)
    op = op->operand(0)->defining_op();
  if (!op || op->code() != OpCode::Constant || !op->has_attr("value"))
    return false;
  const ir::Attribute &value = op->attributes().at("value");
  if (const auto *real = std::get_if<double>(&value))
    return *real == 0.0 && !std::signbit(*real);
  const auto *integer = std::get_if<int64_t>(&value);
  return integer && *integer == 0;
}

bool uses_warpgroup_mma(const ir::Function &function) {
  bool found = false;
  function.walk([&](const ir::Operation &op) {
    found = found || runs_on_warpgroups(op);
  });
  return found;
}

std::optional<BlockedLayout> accumulator_layout(const ir::Operation &dot) {
  if (!runs_on_tensor_cores(dot))
    return std::nullopt;
  const ir::Type &c = dot.result()->type();
  auto [along_m, along_n] = mma_warps(dot);
  if (runs_on_warpgroups(dot))
    return wgmma_fragments_layout(c.dim(0), c.dim(1), along_m * along_n);
  return mma_fragments_layout(c.dim(0), c.dim(1), along_m, along_n);
}

FragmentTile operand_tile(const ir::Operation &dot, int operand,
                          bool k_fastest) {
  return runs_on_warpgroups(dot) ? wgmma_operand_tile(dot, operand, k_fastest)
                                 : fragment_tile(dot, operand, k_fastest);
}

std::optional<BlockedLayout> registers_a_layout(const ir::Operation &dot) {
  if (!runs_on_tensor_cores(dot) || !dot.has_attr(gpu_attr::kMmaAInRegisters))
    return std::nullopt;
  const ir::Type &a = dot.operand(0)->type();
  const int64_t warps = mma_warps(dot).first;
  return runs_on_warpgroups(dot)
             ? wgmma_fragments_layout(a.dim(0), a.dim(1), warps)
             : mma_fragments_layout(a.dim(0), a.dim(1), warps, 1);
}

bool takes_a_from_registers(const ir::Operation &dot,
                            const BlockedLayout &parent, const Layout &layout) {
  std::optional<BlockedLayout> fragments = registers_a_layout(dot);
  const int64_t k = dot.operand(0)->type().dim(1);
  return fragments && parent == *fragments &&
         layout.dims == std::vector<int>{0, 1} &&
         k / 16 <= kMaxStepsOfAInRegisters;
}

int loop_stages(const ir::Operation &loop) {
  auto it = loop.attributes().find(gpu_attr::kNumStages);
  const int64_t *stages = it == loop.attributes().end()
                              ? nullptr
                              : std::get_if<int64_t>(&it->second);
  return stages ? static_cast<int>(*stages) : 1;
}

bool copied_ahead(const ir::Operation &load) {
  return load.has_attr(gpu_attr::kAsyncCopy);
}

bool prefetched(const ir::Operation &load) {
  return load.has_attr(gpu_attr::kPrefetch);
}

bool copied_by_tma(const ir::Operation &op) {
  return ir::is_descriptor_access(op.code()) && op.has_attr(gpu_attr::kTma);
}

bool lands_in_tile(const ir::Operation &op) {
  return (op.code() == OpCode::Load && copied_ahead(op)) ||
         (op.code() == OpCode::DescriptorLoad && copied_by_tma(op));
}

bool is_tile_view(const ir::Operation &op) {
  if ((op.code() != OpCode::Bitcast && op.code() != OpCode::Permute) ||
      !op.result()->type().is_block())
    return false;
  const ir::Type &type = op.result()->type();
  if (op.code() == OpCode::Bitcast)
    return ir::scalar_bits(type.element()) ==
           ir::scalar_bits(op.operand(0)->type().element());
  return type.rank() == 2; // a permute
}

SharedLayout view_layout(const ir::Operation &view,
                         const SharedLayout &shared) {
  return view.code() == OpCode::Permute
             ? shared.permuted(view.ints_attr("order"))
             : shared;
}

const ir::Operation *landed_tile_source(const ir::Value *v) {
  const ir::Operation *op = v->defining_op();
  while (op && is_tile_view(*op))
    op = op->operand(0)->defining_op();
  return op && lands_in_tile(*op) ? op : nullptr;
}

bool is_landed_tile(const ir::Value *v) {
  return landed_tile_source(v) != nullptr;
}

void verify_gpu_ir(const ir::Function &function, int num_warps,
                   const GpuArch &arch) {
  function.walk([&](const ir::Operation &op) {
    if (op.code() == OpCode::Dot)
      verify_dot(op, num_warps, arch);
    else if (op.has_attr(gpu_attr::kEngine) ||
             op.has_attr(gpu_attr::kMmaWarps) ||
             op.has_attr(gpu_attr::kMmaAInRegisters))
      invalid(op, "engine, mma_warps and mma_a_in_registers belong on dots");
    if (op.has_attr(gpu_attr::kNumStages))
      verify_stages(op);
    if (op.has_attr(gpu_attr::kAsyncCopy))
      verify_async_copy(op);
    if (op.has_attr(gpu_attr::kPrefetch))
      verify_prefetch(op);
    if (op.has_attr(gpu_attr::kTma))
      verify_tma(op, arch);
  });
  if (carries_layouts(function))
    verify_layouts(function, num_warps, arch);
}

} // namespace blocc::nvptx
