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
// vectors starts on bank 0; and it gives them back after the op of its
// block that holds its last reader (a dot, or the loop around it). Tiles
// are nested: written later, released no later (the GPU IR writes a
// dot's tiles right before it, or before its loop).
//
// No barrier follows the write: the writes of the tiles of one dot share
// the one barrier that its first read of them needs (fence_tile_writes).
#include "backends/nvptx/kernel_lowering.h"

#include "backends/nvptx/tile_addresses.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

namespace blocc::nvptx {

namespace {

constexpr int64_t kTileAlignment = 128;
constexpr int64_t kMaxVectorBytes = 16;

/// The op of `block` that is `op` or holds it; nullptr where none does.
const ir::Operation *ancestor_in(const ir::Block *block,
                                 const ir::Operation *op) {
  while (op && op->parent_block() != block)
    op = op->parent_op();
  return op;
}

} // namespace

void KernelLowering::find_tile_releases() {
  kernel.walk([&](const ir::Operation &user) {
    for (const ir::Value *operand : user.operands()) {
      const SharedLayout *shared = layouts_->shared_layout(operand);
      if (!shared || shared->kind != SharedLayout::Kind::Swizzled ||
          !operand->defining_op() ||
          operand->defining_op()->code() != ir::OpCode::ConvertLayout)
        continue;
      // In program order: the last reader's op decides.
      tile_last_readers_[operand] =
          ancestor_in(operand->defining_op()->parent_block(), &user);
    }
  });
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
  // The value's dimension along the tile's rows, and along its columns.
  const int row_dim = static_cast<int>(shared.order[1]);
  const int column_dim = static_cast<int>(shared.order[0]);
  SharedTile tile =
      swizzled_tile(shared.shape[size_t(row_dim)],
                    shared.shape[size_t(column_dim)], element_bytes);
  tile.swizzle = shared.swizzle;

  const int64_t start =
      (shared_reserved_ + kTileAlignment - 1) / kTileAlignment * kTileAlignment;
  if (start + tile.bytes() > arch.max_shared_bytes())
    throw SharedMemoryExhausted(
        "the tile of a " + source->type().str() + " operand of a dot needs " +
        std::to_string(start + tile.bytes()) +
        " bytes of shared memory with what it keeps already, more than the " +
        std::to_string(arch.max_shared_bytes()) + " bytes " + arch.name() +
        " allows a CTA; use smaller blocks (a smaller BLOCK_K) or fewer "
        "stages");
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

void KernelLowering::store_tile(const Layout &from, const Registers &values,
                                const SharedTile &tile, int row_dim,
                                ir::Scalar element,
                                const TileAddresses::ElementAt &element_at) {
  const BlockedLayout &p = parent(from);
  const int column_dim = 1 - row_dim;
  const int last = p.rank() - 1;
  const int64_t element_bytes = llvm_backend::storage_bytes(element);
  // Registers r .. r + run - 1 hold consecutive elements along the row.
  int64_t run = 1;
  if (from.shape[size_t(column_dim)] > 1 &&
      from.dims[size_t(column_dim)] == last &&
      p.shape[last] == from.shape[size_t(column_dim)])
    run = std::min(p.size_per_thread[last],
                   std::max<int64_t>(1, kMaxVectorBytes / element_bytes));
  auto first = [&](int dim) {
    return from.shape[size_t(dim)] == 1 ? builder.getInt32(0)
                                        : element_index(from, 0, dim);
  };
  auto offset_in = [&](int64_t r, int dim) -> int64_t {
    return from.shape[size_t(dim)] == 1
               ? 0
               : p.register_offset(r)[from.dims[size_t(dim)]];
  };
  llvm::Type *type = storage_type(element);
  TileAddresses addresses(builder, tile,
                          thread_part_of(linear_layout_of(p, from), row_dim,
                                         first(row_dim), first(column_dim)),
                          type, element_at);
  for (int64_t r = 0; r < p.num_registers(); ++r) {
    if (canonical_register(p, from, r) != r ||
        p.register_offset(r)[last] % run != 0)
      continue;
    llvm::Value *address =
        addresses.at(offset_in(r, row_dim), offset_in(r, column_dim));
    if (run == 1) {
      builder.CreateStore(values[r], address);
      continue;
    }
    auto *vector_type =
        llvm::FixedVectorType::get(type, static_cast<unsigned>(run));
    llvm::Value *vector = llvm::PoisonValue::get(vector_type);
    for (int64_t i = 0; i < run; ++i)
      vector = builder.CreateInsertElement(vector, values[r + i], i);
    builder.CreateAlignedStore(vector, address,
                               llvm::Align(run * element_bytes));
  }
}

void KernelLowering::fence_tile_writes() {
  if (!tiles_unfenced_)
    return;
  after_shared_write();
}

void KernelLowering::release_tiles_after(const ir::Operation &op) {
  for (auto it = tile_last_readers_.begin(); it != tile_last_readers_.end();) {
    if (it->second != &op) {
      ++it;
      continue;
    }
    const ir::Value *tile = it->first;
    it = tile_last_readers_.erase(it);
    released_.insert(tile);
  }
  // Give back the bytes of the tiles on top that are released.
  while (!live_tiles_.empty() && released_.count(live_tiles_.back().value)) {
    released_.erase(live_tiles_.back().value);
    clear_staged_operand(live_tiles_.back().value);
    reserve_shared_bytes(live_tiles_.back().reserved_before);
    live_tiles_.pop_back();
  }
}

} // namespace blocc::nvptx
