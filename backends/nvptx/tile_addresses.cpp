#include "backends/nvptx/tile_addresses.h"

#include "ir/error.h"

namespace blocc::nvptx {

namespace {

int log2_exact(int64_t v) {
  return ir::LinearLayout::bits_of(v, "tile addresses");
}

/// The bits of the images along `out` of the lane and warp bits: what
/// the coordinate of a thread's part may hold.
int64_t reachable_bits(const ir::LinearLayout &layout, const std::string &out) {
  int64_t bits = 0;
  for (const ir::LinearLayout::Dimension &in : layout.inputs())
    if (in.name == "lane" || in.name == "warp")
      for (int i = 0; i < in.bits; ++i)
        bits |= layout.image(in.name, i).at(out);
  return bits;
}

} // namespace

llvm::Value *emit_swizzled_offset(llvm::IRBuilder<> &b, const SharedTile &tile,
                                  llvm::Value *row, llvm::Value *column) {
  const Swizzle &s = tile.swizzle;
  auto i32 = [&](int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); };
  llvm::Value *vector = b.CreateLShr(column, log2_exact(s.vector));
  if (s.max_phase > 1) {
    llvm::Value *phase = b.CreateAnd(b.CreateLShr(row, log2_exact(s.per_phase)),
                                     i32(s.max_phase - 1));
    vector = b.CreateXor(vector, phase);
  }
  llvm::Value *within_row =
      b.CreateOr(b.CreateShl(vector, log2_exact(s.vector)),
                 b.CreateAnd(column, i32(s.vector - 1)));
  if (s.atom_columns && s.atom_columns < tile.columns) {
    // Atoms of W columns one after another, each row by row.
    const int64_t w = s.atom_columns;
    llvm::Value *atom = b.CreateLShr(within_row, log2_exact(w));
    llvm::Value *in_atom = b.CreateAnd(within_row, i32(w - 1));
    llvm::Value *atom_start = b.CreateMul(atom, i32(tile.rows * w));
    return b.CreateAdd(
        b.CreateAdd(atom_start, b.CreateMul(row, i32(w)), "", true, true),
        in_atom, "", true, true);
  }
  return b.CreateAdd(b.CreateMul(row, i32(tile.columns)), within_row, "",
                     /*HasNUW=*/true, /*HasNSW=*/true);
}

ThreadPart emit_thread_part(llvm::IRBuilder<> &b,
                            const ir::LinearLayout &layout, llvm::Value *lane,
                            llvm::Value *warp) {
  ThreadPart part;
  part.row = part.column = b.getInt32(0);
  for (const ir::LinearLayout::Dimension &in : layout.inputs()) {
    llvm::Value *index = in.name == "lane" ? lane : warp;
    for (int i = 0; i < in.bits; ++i) {
      ir::LinearLayout::Point image = layout.image(in.name, i);
      // Bit i of the index, as 0 or its image: images of one bit (all the
      // lowering's) become a shift, the others a select.
      llvm::Value *bit = b.CreateAnd(index, b.getInt32(1u << i));
      auto term = [&](int64_t v) -> llvm::Value * {
        if (v == 0)
          return nullptr;
        if ((v & (v - 1)) == 0) {
          int shift = log2_exact(v) - i;
          return shift >= 0 ? b.CreateShl(bit, shift)
                            : b.CreateLShr(bit, -shift);
        }
        return b.CreateSelect(b.CreateICmpNE(bit, b.getInt32(0)),
                              b.getInt32(static_cast<uint32_t>(v)),
                              b.getInt32(0));
      };
      if (llvm::Value *t = term(image.at("dim0")))
        part.row = b.CreateXor(part.row, t);
      if (llvm::Value *t = term(image.at("dim1")))
        part.column = b.CreateXor(part.column, t);
    }
  }
  part.row_bits = reachable_bits(layout, "dim0");
  part.column_bits = reachable_bits(layout, "dim1");
  return part;
}

ThreadPart thread_part_of(const ir::LinearLayout &layout, int row_dim,
                          llvm::Value *row, llvm::Value *column) {
  const std::string dims[2] = {"dim0", "dim1"};
  ThreadPart part{row, column, reachable_bits(layout, dims[row_dim]),
                  reachable_bits(layout, dims[1 - row_dim])};
  return part;
}

TileAddresses::TileAddresses(llvm::IRBuilder<> &b, const SharedTile &tile,
                             ThreadPart thread, llvm::Type *element,
                             ElementAt element_at)
    : b_(b), tile_(tile), offsets_(tile.offsets()), thread_(thread),
      element_(element), element_at_(std::move(element_at)) {
  // Every bit a thread's offset may have: the span of the images of the
  // row and column bits it may have.
  for (int i = 0; i < offsets_.input_bits("dim0"); ++i)
    if (thread_.row_bits >> i & 1)
      thread_offset_bits_ |= offsets_.image("dim0", i).at("offset");
  for (int i = 0; i < offsets_.input_bits("dim1"); ++i)
    if (thread_.column_bits >> i & 1)
      thread_offset_bits_ |= offsets_.image("dim1", i).at("offset");
}

std::optional<std::pair<int64_t, int64_t>>
TileAddresses::split(int64_t row, int64_t column) const {
  if ((row & thread_.row_bits) || (column & thread_.column_bits) ||
      row >= tile_.rows || column >= tile_.columns || row < 0 || column < 0)
    return std::nullopt;
  int64_t offset =
      offsets_.apply({{"dim0", row}, {"dim1", column}}).at("offset");
  return std::pair{offset & thread_offset_bits_, offset & ~thread_offset_bits_};
}

llvm::Value *TileAddresses::base_index(int64_t xored) {
  auto found = base_index_.find(xored);
  if (found != base_index_.end())
    return found->second;
  llvm::Value *base =
      xored == 0 ? emit_swizzled_offset(b_, tile_, thread_.row, thread_.column)
                 : b_.CreateXor(base_index(0),
                                b_.getInt32(static_cast<uint32_t>(xored)));
  base_index_[xored] = base;
  return base;
}

llvm::Value *TileAddresses::index(int64_t row, int64_t column) {
  std::optional<std::pair<int64_t, int64_t>> parts = split(row, column);
  if (!parts)
    return emit_swizzled_offset(
        b_, tile_,
        b_.CreateAdd(thread_.row, b_.getInt32(static_cast<uint32_t>(row))),
        b_.CreateAdd(thread_.column,
                     b_.getInt32(static_cast<uint32_t>(column))));
  // The added bits are none of the base's: the sum is their OR.
  return b_.CreateAdd(base_index(parts->first),
                      b_.getInt32(static_cast<uint32_t>(parts->second)), "",
                      /*HasNUW=*/true, /*HasNSW=*/true);
}

llvm::Value *TileAddresses::at(int64_t row, int64_t column) {
  std::optional<std::pair<int64_t, int64_t>> parts = split(row, column);
  if (!parts)
    return element_at_(index(row, column));
  auto found = base_address_.find(parts->first);
  if (found == base_address_.end())
    found = base_address_
                .emplace(parts->first, element_at_(base_index(parts->first)))
                .first;
  return b_.CreateConstGEP1_64(element_, found->second, parts->second);
}

llvm::Value *TileAddresses::at(llvm::Value *row, llvm::Value *column) {
  return element_at_(
      emit_swizzled_offset(b_, tile_, b_.CreateAdd(thread_.row, row),
                           b_.CreateAdd(thread_.column, column)));
}

} // namespace blocc::nvptx
