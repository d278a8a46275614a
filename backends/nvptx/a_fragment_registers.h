// A dot's A taken from the registers it was computed in
// (takes_a_from_registers): mma.sync's chains and attention's Q, and the
// later link of a chain on warpgroup MMAs. Those registers already hold
// A's m16n8k16 fragments, element by element; an MMA reads them as words
// of two halves.
#pragma once

#include "backends/nvptx/kernel_lowering.h"

#include <array>
#include <map>

namespace blocc::nvptx {

class AFragmentRegisters {
public:
  /// A's registers for `dot`; empty where it reads A from shared memory.
  AFragmentRegisters(KernelLowering &k, const ir::Operation &dot);

  explicit operator bool() const { return registers_ != nullptr; }
  /// Rows of one tile of A's layout (a warp's rows g and g + 8 lie this
  /// far apart in mma.sync's fragments).
  int64_t tile_rows() const { return tile_rows_; }

  /// The fragment a0..a3 whose rows g and g + 8 are `row` and `row +
  /// below` from the thread's first element, at columns `column` and
  /// `column` + 8: pairs of halves to a word, the lower column in the low
  /// half.
  std::array<llvm::Value *, 4> fragment(int64_t row, int64_t below,
                                        int64_t column) const;

private:
  llvm::Value *word(int64_t row, int64_t column) const;

  llvm::IRBuilder<> &b_;
  const KernelLowering::Registers *registers_ = nullptr;
  std::map<std::pair<int64_t, int64_t>, int64_t> register_at_;
  int64_t tile_rows_ = 0;
};

} // namespace blocc::nvptx
