// Copies by the Tensor Memory Accelerator (tma.h): the mbarriers they
// complete on, the bulk tensor copies one thread issues, and the lowering
// of a descriptor_load copied by TMA outside a pipelined loop (inside one,
// LoopPipeline issues its copies ahead: lower_pipelined_loop.cpp) and of a
// descriptor_store: the value written to a swizzled tile, fenced for the
// async proxy, copied out by thread 0 as a bulk group it waits to have
// read the tile (elements outside the array are not written).
//
// One thread (thread 0) initializes an mbarrier expecting one arrival,
// arrives on it announcing the bytes its copies bring
// (mbarrier.arrive.expect_tx), and issues one cp.async.bulk.tensor per box
// (an atom of the tile's rows); the phase completes when every byte has
// landed, and every thread waits for it (mbarrier.try_wait.parity) before
// its warpgroup MMAs read the tile. The copies read the tensor map the host
// encoded, a kernel parameter read in place (`grid_constant`: the generic
// address of the parameter itself, which cp.async.bulk.tensor takes).
#include "backends/nvptx/kernel_lowering.h"

#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/shared_layouts.h"
#include "ir/tensor_descriptor.h"

#include <llvm/IR/InlineAsm.h>

namespace blocc::nvptx {

void inline_ptx(llvm::IRBuilder<> &b, const std::string &text,
                const std::string &constraints,
                const std::vector<llvm::Value *> &values) {
  std::vector<llvm::Type *> types;
  for (llvm::Value *v : values)
    types.push_back(v->getType());
  auto *type = llvm::FunctionType::get(b.getVoidTy(), types, false);
  b.CreateCall(llvm::InlineAsm::get(type, text,
                                    constraints.empty()
                                        ? "~{memory}"
                                        : constraints + ",~{memory}",
                                    /*hasSideEffects=*/true),
               values);
}

namespace {

/// `text`, one PTX instruction, executed where the i32 `$0` is non-zero.
std::string predicated(const std::string &text) {
  return "{\n.reg .pred p;\nsetp.ne.u32 p, $0, 0;\n@p " + text + "\n}";
}

} // namespace

llvm::Value *KernelLowering::issuing_thread(llvm::Value *issue) {
  llvm::Value *first = builder.CreateICmpEQ(
      builder.CreateOr(
          lane, builder.CreateXor(warp, builder.getInt32(issuing_warp_))),
      builder.getInt32(0));
  if (issue)
    first = builder.CreateAnd(issue, first);
  return builder.CreateZExt(first, builder.getInt32Ty());
}

const TmaCopy &KernelLowering::tma_copy_of(const ir::Operation &load) const {
  auto it = tma_index_.find(&load);
  if (it == tma_index_.end())
    throw Error("internal: " + load.describe() + " is no TMA copy");
  return tma_copies_[it->second];
}

std::vector<cuda::TensorMapRequest> KernelLowering::tensor_maps() const {
  std::vector<cuda::TensorMapRequest> maps;
  for (const TmaCopy &copy : tma_copies_)
    maps.push_back(copy.map);
  return maps;
}

llvm::Value *KernelLowering::shared_window_address(llvm::Type *type,
                                                   llvm::Value *index) {
  return builder.CreateTrunc(
      builder.CreatePtrToInt(reserved_shared_element(type, index),
                             builder.getInt64Ty()),
      builder.getInt32Ty());
}

/// `text`, an instruction on the mbarrier at `$1`, run by thread 0 for each
/// of `count` mbarriers of 8 bytes from `first`.
void KernelLowering::on_each_mbarrier(const std::string &text,
                                      llvm::Value *first, int count) {
  llvm::Value *issue = issuing_thread();
  for (int i = 0; i < count; ++i)
    inline_ptx(builder, predicated(text), "r,r",
               {issue, builder.CreateAdd(first, builder.getInt32(8 * i))});
}

void KernelLowering::start_mbarriers(llvm::Value *first, int count,
                                     int arrivals) {
  // What this CTA wrote before (global stores, shared memory the copies'
  // bytes held) is ordered before the async proxy's reads and writes.
  ordering_ptx("fence.proxy.async;");
  on_each_mbarrier("mbarrier.init.shared::cta.b64 [$1], " +
                       std::to_string(arrivals) + ";",
                   first, count);
  // The initialization, a write of the generic proxy, made visible to the
  // copies' completion through the async proxy.
  inline_ptx(builder, predicated("fence.mbarrier_init.release.cluster;"), "r",
             {issuing_thread()});
}

void KernelLowering::init_mbarriers(llvm::Value *first, int count) {
  start_mbarriers(first, count, 1);
  // Every thread is done with the bytes, and sees the mbarriers ready.
  barrier();
}

void KernelLowering::arrive_per_warp(llvm::Value *barrier,
                                     llvm::Value *arrive) {
  llvm::Value *mine = builder.CreateZExt(
      builder.CreateAnd(arrive,
                        builder.CreateICmpEQ(lane, builder.getInt32(0))),
      builder.getInt32Ty());
  inline_ptx(builder,
             "{\n.reg .pred p;\n.reg .b64 state;\nsetp.ne.u32 p, $0, 0;\n"
             "@p mbarrier.arrive.shared::cta.b64 state, [$1];\n}",
             "r,r", {mine, barrier});
}

void KernelLowering::invalidate_mbarriers(llvm::Value *first, int count) {
  on_each_mbarrier("mbarrier.inval.shared::cta.b64 [$1];", first, count);
}

void KernelLowering::expect_tma_bytes(llvm::Value *barrier, int64_t bytes,
                                      llvm::Value *issue) {
  llvm::Value *mine = issuing_thread(issue);
  inline_ptx(builder,
             "{\n.reg .pred p;\n.reg .b64 state;\nsetp.ne.u32 p, $0, 0;\n"
             "@p mbarrier.arrive.expect_tx.shared::cta.b64 state, [$1], $2;\n}",
             "r,r,r",
             {mine, barrier, builder.getInt32(static_cast<uint32_t>(bytes))});
}

void KernelLowering::for_each_box(
    const TmaCopy &copy, llvm::Value *first,
    const std::function<void(llvm::Value *, llvm::Value *, llvm::Value *)> &f) {
  ir::DescriptorOperands d(*copy.op);
  llvm::Type *element = storage_type(d.tile_type().element());
  llvm::Value *row = tma_coordinate(d.offset(0)),
              *column = tma_coordinate(d.offset(1));
  // One box a 128-byte atom of the rows: atoms lie one after another,
  // each rows x box_columns elements.
  for (int64_t box = 0; box < copy.boxes; ++box) {
    llvm::Value *shared = shared_window_address(
        element, builder.CreateAdd(
                     first, builder.getInt32(static_cast<uint32_t>(
                                box * copy.tile.rows * copy.box_columns))));
    llvm::Value *inner = builder.CreateAdd(
        column,
        builder.getInt32(static_cast<uint32_t>(box * copy.box_columns)));
    f(shared, inner, row);
  }
}

llvm::Value *KernelLowering::tma_coordinate(const ir::Value *offset) {
  llvm::Value *v = scalar(offset);
  if (v->getType()->getIntegerBitWidth() == 32)
    return v;
  // A 64-bit offset (a block pointer's): clamped where the box would lie
  // wholly outside any array its map takes (cuda::TensorMapRequest::
  // wide_offsets), so that the 32-bit coordinate copies the same zeros.
  llvm::Value *low = builder.getInt64(uint64_t(int64_t{INT32_MIN}));
  llvm::Value *high = builder.getInt64(uint64_t(cuda::kMaxWideOffsetExtent));
  llvm::Value *clamped = builder.CreateBinaryIntrinsic(
      llvm::Intrinsic::smin,
      builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, v, low), high);
  return builder.CreateTrunc(clamped, builder.getInt32Ty());
}

llvm::Value *KernelLowering::tensor_map_address(const TmaCopy &copy) {
  return builder.CreatePtrToInt(tensor_map_parameters_[tma_index_.at(copy.op)],
                                builder.getInt64Ty());
}

void KernelLowering::issue_tma_copy(const TmaCopy &copy, llvm::Value *first,
                                    llvm::Value *barrier, llvm::Value *issue) {
  llvm::Value *mine = issuing_thread(issue);
  llvm::Value *map = tensor_map_address(copy);
  for_each_box(copy, first,
               [&](llvm::Value *shared, llvm::Value *inner, llvm::Value *row) {
                 inline_ptx(builder,
                            predicated("cp.async.bulk.tensor.2d.shared::"
                                       "cluster.global.tile.mbarrier::"
                                       "complete_tx::bytes [$1], [$2, {$3, "
                                       "$4}], [$5];"),
                            "r,r,l,r,r,r",
                            {mine, shared, map, inner, row, barrier});
               });
}

void KernelLowering::wait_mbarrier(llvm::Value *barrier, llvm::Value *parity) {
  inline_ptx(builder,
             "{\n.reg .pred done;\nblocc_tma_wait:\n"
             "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
             "@!done bra blocc_tma_wait;\n}",
             "r,r", {barrier, parity});
}

void KernelLowering::lower_tma_load(const ir::Operation &load) {
  const TmaCopy &copy = tma_copy_of(load);
  const int64_t element_bytes = copy.tile.element_bytes;
  // The tile, then its mbarrier (a tile's bytes are a multiple of 16).
  const int64_t start =
      tile_start(wgmma_tile_alignment(copy.tile), copy.bytes() + 8,
                 "the tile " + load.describe() + " copies",
                 "use smaller blocks or fewer stages");
  const int64_t barrier_at = start + copy.bytes();
  live_tiles_.push_back({load.result(), shared_reserved_});
  reserve_shared_bytes(barrier_at + 8);
  llvm::Value *first =
      builder.getInt32(static_cast<uint32_t>(start / element_bytes));
  set_staged_operand(load.result(), {first});
  llvm::Value *mbarrier = shared_window_address(
      builder.getInt64Ty(),
      builder.getInt32(static_cast<uint32_t>(barrier_at / 8)));
  init_mbarriers(mbarrier, 1);
  expect_tma_bytes(mbarrier, copy.bytes(), builder.getTrue());
  issue_tma_copy(copy, first, mbarrier, builder.getTrue());
  wait_mbarrier(mbarrier, builder.getInt32(0));
  // Every thread has seen the phase complete before the barrier goes.
  barrier();
  invalidate_mbarriers(mbarrier, 1);
}

void KernelLowering::lower_tma_store(const ir::Operation &store) {
  const TmaCopy &copy = tma_copy_of(store);
  ir::DescriptorOperands d(store);
  const ir::Value *value = d.value();
  const Layout *from = layouts_->home(value);
  if (!from)
    throw Error("internal: " + store.describe() +
                " stores a value without a layout");
  const int64_t element_bytes = copy.tile.element_bytes;
  const int64_t saved = shared_reserved_;
  const int64_t start =
      tile_start(wgmma_tile_alignment(copy.tile), copy.bytes(),
                 "the tile " + store.describe() + " stages for its copy",
                 "use smaller blocks");
  reserve_shared_bytes(start + copy.bytes());
  llvm::Value *first =
      builder.getInt32(static_cast<uint32_t>(start / element_bytes));
  // The value into its tile (rows along its first dimension), every
  // thread's writes made visible to the async proxy before thread 0's
  // copies read them: those of the tile, and those of global memory the
  // kernel stored through pointers before (the copies' writes of the same
  // addresses must land after them).
  before_shared_write();
  store_tile(*from, registers(value, *from), copy.tile, /*row_dim=*/0,
             d.tile_type().element(), [&](llvm::Value *index) {
               return reserved_shared_element(
                   storage_type(d.tile_type().element()),
                   builder.CreateAdd(first, index));
             });
  ordering_ptx("fence.proxy.async;");
  barrier();
  llvm::Value *mine = issuing_thread();
  llvm::Value *map = tensor_map_address(copy);
  for_each_box(copy, first,
               [&](llvm::Value *shared, llvm::Value *inner, llvm::Value *row) {
                 inline_ptx(builder,
                            predicated("cp.async.bulk.tensor.2d.global.shared::"
                                       "cta.bulk_group [$2, {$3, $4}], [$1];"),
                            "r,r,l,r,r", {mine, shared, map, inner, row});
               });
  // The copies have read the tile before anyone writes its bytes again;
  // their writes of global memory complete before the kernel ends.
  inline_ptx(builder, predicated("cp.async.bulk.commit_group;"), "r", {mine});
  inline_ptx(builder, predicated("cp.async.bulk.wait_group.read 0;"), "r",
             {mine});
  barrier();
  reserve_shared_bytes(saved);
  stored_since_barrier_ = true;
}

} // namespace blocc::nvptx
