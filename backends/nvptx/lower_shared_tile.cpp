// Values in swizzled tiles of shared memory (the GPU IR's `swizzled<...>`
// layouts, shared_layouts.h): the operands of dots on tensor cores, which
// read them with ldmatrix (lower_dot.cpp).
//
// A convert_layout to a swizzled layout writes its operand's registers
// there: each thread writes the runs of consecutive elements it holds
// along the tile's rows as vectors (16 bytes at most), at addresses read
// off the tile's linear layout (tile_addresses.h). Unlike the kernel's
// other users of shared memory, which take the buffer one at a time from
// its start, a tile keeps its bytes until its last reader is lowered: it
// is placed after the bytes kept so far (reserve_shared_bytes), at a
// multiple of 128 bytes, where the swizzle's pattern of 8 rows of 16-byte
// vectors starts on bank 0, or of the warpgroup swizzle's pattern
// (shared_tile_alignment); and it gives them back after the op of its
// block that holds its last reader (a dot, or the loop around it). Tiles
// are nested: written later, released no later (the GPU IR writes a
// dot's tiles right before it, or before its loop).
//
// No barrier follows the write: the writes of the tiles of one dot share
// the one barrier that its first read of them needs (fence_tile_writes).
#include "backends/nvptx/kernel_lowering.h"

#include "backends/nvptx/gpu_ir.h"

#include "backends/nvptx/mma_layouts.h"
#include "backends/nvptx/tile_addresses.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <llvm/IR/InlineAsm.h>

#include <algorithm>

namespace blocc::nvptx {

namespace {

/// The op of `block` that is `op` or holds it; nullptr where none does.
const ir::Operation *ancestor_in(const ir::Block *block,
                                 const ir::Operation *op) {
  while (op && op->parent_block() != block)
    op = op->parent_op();
  return op;
}

} // namespace

void KernelLowering::find_tile_releases() {
  std::map<const ir::Value *, const ir::Operation *> last_reader;
  kernel.walk([&](const ir::Operation &user) {
    // A view of a tile reads nothing: its readers read the tile.
    if (is_tile_view(user) && landed_tile_source(user.result()))
      return;
    for (const ir::Value *read : user.operands()) {
      const ir::Value *operand = read;
      if (const ir::Operation *source = landed_tile_source(read))
        operand = source->result();
      const SharedLayout *shared = layouts_->shared_layout(operand);
      const ir::Operation *writer = operand->defining_op();
      // Tiles written where they are defined: by a convert_layout, or by a
      // TMA copy outside a pipelined loop (whose stages hold the others).
      if (!shared || shared->kind != SharedLayout::Kind::Swizzled || !writer ||
          (writer->code() != ir::OpCode::ConvertLayout &&
           !(copied_by_tma(*writer) && !copied_ahead(*writer))))
        continue;
      // In program order: the last reader's op decides.
      last_reader[operand] =
          ancestor_in(operand->defining_op()->parent_block(), &user);
    }
  });
  for (const auto &[tile, op] : last_reader)
    tiles_released_after_[op].push_back(tile);
}

void KernelLowering::write_tile(const ir::Operation &convert,
                                const SharedLayout &shared) {
  const ir::Value *source = convert.operand(0);
  const Layout *from = layouts_->home(source);
  if (!from)
    throw Error("internal: " + convert.describe() +
                " writes a value without a layout to shared memory");
  const ir::Scalar element = source->type().element();
  const int64_t element_bytes = llvm_backend::storage_bytes(element);
  // The value's dimension along the tile's rows.
  const int row_dim = static_cast<int>(shared.order[1]);
  const SharedTile tile = shared.tile(element_bytes);

  const int64_t start =
      tile_start(shared_tile_alignment(tile, warpgroup_mma_), tile.bytes(),
                 "the tile of a " + source->type().str() + " operand of a dot",
                 "use smaller blocks (a smaller BLOCK_K) or fewer stages");
  live_tiles_.push_back({convert.result(), shared_reserved_});
  reserve_shared_bytes(start + tile.bytes());
  llvm::Value *first =
      builder.getInt32(static_cast<uint32_t>(start / element_bytes));
  set_staged_operand(convert.result(), {first});

  before_shared_write();
  store_tile(*from, registers(source, *from), tile, row_dim, element,
             [&](llvm::Value *index) {
               return reserved_shared_element(
                   storage_type(element),
                   builder.CreateAdd(first, index, "", /*HasNUW=*/true,
                                     /*HasNSW=*/true));
             });
  tiles_unfenced_ = true;
}

int64_t KernelLowering::tile_start(int64_t alignment, int64_t bytes,
                                   const std::string &what,
                                   const std::string &advice) {
  const int64_t start = align_up(shared_reserved_, alignment);
  if (start + bytes > arch.max_shared_bytes())
    throw SharedMemoryExhausted(
        what + " needs " + std::to_string(start + bytes) +
        " bytes of shared memory with what it keeps already, more than the " +
        std::to_string(arch.max_shared_bytes()) + " bytes " + arch.name() +
        " allows a CTA; " + advice);
  return start;
}

void KernelLowering::store_tile(const Layout &from, const Registers &values,
                                const SharedTile &tile, int row_dim,
                                ir::Scalar element,
                                const TileAddresses::ElementAt &element_at) {
  const int column_dim = 1 - row_dim;
  const int64_t element_bytes = llvm_backend::storage_bytes(element);
  llvm::Type *type = storage_type(element);
  // A swizzled tile keeps 16-byte vectors whole: every run stays one.
  const int64_t run = vector_run(parent(from), from, column_dim, element_bytes);
  TileAddresses addresses(builder, tile,
                          thread_part_of(linear_layout_of(parent(from), from),
                                         row_dim, first_index(from, row_dim),
                                         first_index(from, column_dim)),
                          type, element_at);
  store_register_runs(
      from, values, run, type, element_bytes,
      [&](int64_t r) {
        return addresses.at(register_offset_along(from, r, row_dim),
                            register_offset_along(from, r, column_dim));
      },
      [](llvm::Value *v) { return v; });
}

void KernelLowering::fence_tile_writes() {
  if (!tiles_unfenced_)
    return;
  if (warpgroup_mma_)
    fence_async_proxy();
  after_shared_write();
}

void KernelLowering::fence_async_proxy() {
  ordering_ptx("fence.proxy.async.shared::cta;");
}

void KernelLowering::ordering_ptx(const std::string &text) {
  inline_ptx(builder, text, "", {});
}

void KernelLowering::release_tiles_after(const ir::Operation &op) {
  auto it = tiles_released_after_.find(&op);
  if (it == tiles_released_after_.end())
    return;
  released_.insert(it->second.begin(), it->second.end());
  tiles_released_after_.erase(it);
  // Give back the bytes of the tiles on top that are released.
  while (!live_tiles_.empty() && released_.count(live_tiles_.back().value)) {
    released_.erase(live_tiles_.back().value);
    clear_staged_operand(live_tiles_.back().value);
    reserve_shared_bytes(live_tiles_.back().reserved_before);
    live_tiles_.pop_back();
  }
}

} // namespace blocc::nvptx
