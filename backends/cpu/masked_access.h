// Masked contiguous vector accesses that run as plain ones when every lane
// of the chunk is active.
//
// A masked load or store of a chunk (llvm.masked.load/store) costs more
// than a plain one on current x86 cores even when its mask is all ones
// (measured on AMD Zen 5 streaming a vector add: about 25% of the
// bandwidth), and in the usual kernel only the last chunk of a row or
// of the grid is partial. So each masked access tests its mask (one
// kortest) and branches to a plain access when it is full. Which lanes
// touch memory is unchanged.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace blocc::cpu {

/// llvm.masked.load of `vector` at `address`, or a plain load when `mask`
/// (<VL x i1>) is all true; the result is `other` in inactive lanes.
llvm::Value *masked_load_fast_when_full(llvm::IRBuilder<> &builder,
                                        llvm::Type *vector,
                                        llvm::Value *address, llvm::Align align,
                                        llvm::Value *mask, llvm::Value *other);

/// llvm.masked.store of `data` at `address`, or a plain store when `mask`
/// is all true.
void masked_store_fast_when_full(llvm::IRBuilder<> &builder, llvm::Value *data,
                                 llvm::Value *address, llvm::Align align,
                                 llvm::Value *mask);

} // namespace blocc::cpu
