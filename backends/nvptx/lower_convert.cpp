// Shared memory and layout conversions.
//
// The kernel has one shared buffer (kernel_lowering.h): every user writes
// it from offset 0, waits at a barrier, and reads it back; static up to
// 48 KB, dynamic beyond. A conversion whose elements stay within each
// warp, and where no thread's lane decides which register it reads
// (conversion_path.h: warp_route, read off the two linear layouts), is a
// renumbering of registers and one shuffle a register that changes lanes.
// Any other conversion writes each element the thread holds in the source
// layout at its row-major position, padded after every 32 elements so that
// the threads of a warp, which own runs of 1 to 8 consecutive elements,
// write different banks; then each thread reads the elements of the target
// layout. Where both layouts hold runs of consecutive elements, the pad is
// the shorter run (SharedLayout::for_conversion) and each such run moves
// as one vector of up to 16 bytes, written and read alike. Where the two
// runs differ and a swizzled tile keeps both sides off each other's banks,
// the value goes through that tile instead, each side moving its own runs
// at the addresses TileAddresses gives. Threads holding replicas write the
// same value to the same place.
// In the GPU IR such a conversion is two convert_layout ops
// (gpu-stage-conversions): the write to a value in shared memory, whose
// shared layout (SharedLayout) says where each element goes, and its read;
// lowered one after the other, they are the same instructions.
#include "backends/nvptx/kernel_lowering.h"

#include "backends/nvptx/conversion_path.h"
#include "backends/nvptx/shared_layouts.h"
#include "backends/nvptx/tile_addresses.h"

#include "backends/llvm/llvm_types.h"

#include "ir/error.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

namespace blocc::nvptx {

namespace {

/// The type an element takes in shared memory (booleans: a byte; pointers:
/// their address).
llvm::Type *shared_type(llvm::IRBuilderBase &b, llvm::Type *t) {
  if (t->isIntegerTy(1))
    return b.getInt8Ty();
  if (t->isPointerTy())
    return b.getInt64Ty();
  return t;
}

llvm::Value *to_shared(llvm::IRBuilderBase &b, llvm::Value *v) {
  if (v->getType()->isIntegerTy(1))
    return b.CreateZExt(v, b.getInt8Ty());
  if (v->getType()->isPointerTy())
    return b.CreatePtrToInt(v, b.getInt64Ty());
  return v;
}

llvm::Value *from_shared(llvm::IRBuilderBase &b, llvm::Value *v,
                         llvm::Type *t) {
  if (t->isIntegerTy(1))
    return b.CreateICmpNE(v, b.getInt8(0));
  if (t->isPointerTy())
    return b.CreateIntToPtr(v, t);
  return v;
}

} // namespace

void KernelLowering::emit_barrier() {
  // With a producer warpgroup, a barrier of the kernel's code is one of
  // the consumers (lower_warp_specialized_loop.cpp).
  if (specialized_loop_)
    named_barrier(kConsumersBarrier, kWarpSize * num_warps);
  else
    builder.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
}

void KernelLowering::barrier() {
  emit_barrier();
  stored_since_barrier_ = false;
  shared_read_since_barrier_ = false;
  tiles_unfenced_ = false;
}

llvm::Value *KernelLowering::first_index(const Layout &layout, int dim) {
  return layout.shape[size_t(dim)] == 1 ? builder.getInt32(0)
                                        : element_index(layout, 0, dim);
}

int64_t KernelLowering::register_offset_along(const Layout &layout, int64_t r,
                                              int dim) const {
  if (layout.shape[size_t(dim)] == 1)
    return 0;
  return parent(layout).register_offset(r)[layout.dims[size_t(dim)]];
}

void KernelLowering::store_register_runs(
    const Layout &layout, const Registers &values, int64_t run,
    llvm::Type *type, int64_t element_bytes,
    const std::function<llvm::Value *(int64_t)> &address_of,
    const std::function<llvm::Value *(llvm::Value *)> &stored) {
  const BlockedLayout &p = parent(layout);
  const int last = p.rank() - 1;
  for (int64_t r = 0; r < p.num_registers(); ++r) {
    if (canonical_register(p, layout, r) != r ||
        p.register_offset(r)[last] % run != 0)
      continue;
    llvm::Value *address = address_of(r);
    if (run == 1) {
      builder.CreateStore(stored(values[r]), address);
      continue;
    }
    auto *vector_type =
        llvm::FixedVectorType::get(type, static_cast<unsigned>(run));
    llvm::Value *vector = llvm::PoisonValue::get(vector_type);
    for (int64_t i = 0; i < run; ++i)
      vector = builder.CreateInsertElement(vector, stored(values[r + i]), i);
    builder.CreateAlignedStore(vector, address,
                               llvm::Align(run * element_bytes));
  }
}

void KernelLowering::before_shared_write() {
  shared_holder_ = nullptr;
  if (shared_read_since_barrier_)
    barrier();
}

void KernelLowering::after_shared_write() {
  barrier();
  shared_read_since_barrier_ = true;
}

llvm::Value *KernelLowering::shared_element(int64_t offset, int64_t count,
                                            llvm::Type *type,
                                            llvm::Value *index) {
  return shared_address(shared_reserved_ + offset, count, type, index);
}

llvm::Value *KernelLowering::shared_address(int64_t offset, int64_t count,
                                            llvm::Type *type,
                                            llvm::Value *index) {
  int64_t bytes = static_cast<int64_t>(
      module.getDataLayout().getTypeAllocSize(type).getFixedValue());
  claim_shared_bytes(offset + count * bytes);
  if (!shared_) {
    // A placeholder: lower() replaces it with a buffer of the final size.
    auto *placeholder = llvm::ArrayType::get(builder.getInt8Ty(), 0);
    shared_ = new llvm::GlobalVariable(
        module, placeholder, false, llvm::GlobalValue::InternalLinkage,
        llvm::UndefValue::get(placeholder), "blocc_shared_placeholder", nullptr,
        llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
  }
  llvm::Value *base =
      builder.CreateConstGEP1_64(builder.getInt8Ty(), shared_, offset);
  return builder.CreateGEP(type, base, index);
}

void KernelLowering::claim_shared_bytes(int64_t end) {
  if (end > arch.max_shared_bytes())
    throw SharedMemoryExhausted(
        "needs " + std::to_string(end) +
        " bytes of shared memory per program, more than the " +
        std::to_string(arch.max_shared_bytes()) + " bytes " + arch.name() +
        " allows a CTA; use a smaller block");
  shared_bytes_ = std::max(shared_bytes_, end);
}

void KernelLowering::reserve_shared_bytes(int64_t bytes) {
  shared_holder_ = nullptr; // the buffer's offsets move
  claim_shared_bytes(bytes);
  shared_reserved_ = bytes;
}

llvm::Value *KernelLowering::reserved_shared_element(llvm::Type *type,
                                                     llvm::Value *index) {
  return shared_address(0, 0, type, index);
}

void KernelLowering::define_shared_buffer() {
  // Now that every user has reserved its bytes: the real buffer. Beyond
  // the static limit it is the kernel's dynamic shared memory, an external
  // array without a size (`.extern .shared`), sized by the launch.
  const bool dynamic = shared_bytes_ > kMaxStaticSharedBytes;
  auto *type = llvm::ArrayType::get(
      builder.getInt8Ty(), dynamic ? 0 : static_cast<uint64_t>(shared_bytes_));
  auto *buffer = new llvm::GlobalVariable(
      module, type, false,
      dynamic ? llvm::GlobalValue::ExternalLinkage
              : llvm::GlobalValue::InternalLinkage,
      dynamic ? nullptr : llvm::UndefValue::get(type), "blocc_shared", nullptr,
      llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
  // Warpgroup MMAs swizzle by the address's own bits: their tiles start
  // at multiples of 1024 bytes from the buffer's start, which must be one.
  buffer->setAlignment(llvm::Align(warpgroup_mma_ ? 1024 : 16));
  shared_->replaceAllUsesWith(buffer);
  shared_->eraseFromParent();
  shared_ = nullptr;
  dynamic_shared_bytes_ = dynamic ? shared_bytes_ : 0;
}

llvm::Value *KernelLowering::linear_index(const Layout &layout, int64_t r) {
  llvm::Value *index = builder.getInt32(0);
  for (size_t k = 0; k < layout.shape.size(); ++k) {
    index = builder.CreateMul(
        index, builder.getInt32(static_cast<uint32_t>(layout.shape[k])));
    index =
        builder.CreateAdd(index, element_index(layout, r, static_cast<int>(k)));
  }
  return index;
}

KernelLowering::Registers KernelLowering::convert_within_warps(
    const WarpRoute &route, const Registers &values, const Layout &to) {
  // The lane each thread reads from, before the register's own XOR: its
  // own where lanes stay, else the XOR of the images of its lane's bits.
  llvm::Value *base = nullptr;
  if (!route.keeps_lanes()) {
    base = builder.getInt32(0);
    for (size_t b = 0; b < route.lane_images.size(); ++b) {
      llvm::Value *bit = builder.CreateAnd(
          builder.CreateLShr(lane, static_cast<uint64_t>(b)), 1);
      base = builder.CreateXor(
          base, builder.CreateMul(bit, builder.getInt32(static_cast<uint32_t>(
                                           route.lane_images[b]))));
    }
  }
  return per_register(to, [&](int64_t r) {
    llvm::Value *value = values[route.source_register[size_t(r)]];
    const auto lanes = static_cast<uint32_t>(route.lane_xor[size_t(r)]);
    if (!base)
      return lanes == 0 ? value : shuffle_xor(value, static_cast<int>(lanes));
    return shuffle(value, Shuffle::Index,
                   builder.CreateXor(base, builder.getInt32(lanes)));
  });
}

void KernelLowering::lower_convert_layout(const ir::Operation &op) {
  const ir::Value *source = op.operand(0);
  if (const SharedLayout *shared = layouts_->shared_layout(op.result())) {
    if (shared->kind == SharedLayout::Kind::Swizzled &&
        !read_into_registers(op.result())) {
      write_tile(op, *shared); // a dot's operand, read in place
      return;
    }
    const Layout *home = layouts_->home(source);
    if (!home)
      throw Error("internal: " + op.describe() +
                  " writes a value without a layout to shared memory");
    SharedValue &held = shared_values_[op.result()];
    held = {*home, registers(source, *home)};
    write_shared(source, *shared, held.from, held.values);
    shared_holder_ = op.result();
    return;
  }
  if (const SharedLayout *shared = layouts_->shared_layout(source)) {
    const Layout *to = layouts_->home(op.result());
    if (!to)
      return; // nothing reads it
    const SharedValue &held = shared_values_.at(source);
    if (shared_holder_ != source) {
      // Something else used the buffer since: write the value again.
      write_shared(source, *shared, held.from, held.values);
      shared_holder_ = source;
    }
    define_block(op.result(), *to, read_shared(source, *shared, *to));
    return;
  }
  const Layout *from = layouts_->home(source);
  const Layout *to = layouts_->home(op.result());
  if (!to)
    return; // nothing reads it
  if (!from)
    throw Error("internal: " + op.describe() +
                " converts a value without "
                "a layout");
  define_block(op.result(), *to,
               convert_layout(source, *from, registers(source, *from), *to));
}

void KernelLowering::define_block(const ir::Value *v, const Layout &home,
                                  Registers values) {
  blocks_[{v, layout_id(home)}] = values;
  for (const Layout &layout : layouts_->layouts_of(v))
    if (!(layout == home))
      blocks_[{v, layout_id(layout)}] = convert_layout(v, home, values, layout);
}

KernelLowering::Registers
KernelLowering::convert_layout(const ir::Value *v, const Layout &from,
                               const Registers &values, const Layout &to) {
  // (A reshape through shared memory passes layouts of two shapes, the
  // row-major index in common.)
  if (from.shape == to.shape)
    if (std::optional<WarpRoute> route =
            warp_route(linear_layout_of(parent(from), from),
                       linear_layout_of(parent(to), to)))
      return convert_within_warps(*route, values, to);
  SharedLayout shared = SharedLayout::for_conversion(
      parent(from), from, parent(to), to,
      llvm_backend::storage_bytes(v->type().element()));
  write_shared(v, shared, from, values);
  return read_shared(v, shared, to);
}

bool KernelLowering::read_into_registers(const ir::Value *in_shared) {
  if (!read_from_shared_) {
    read_from_shared_.emplace();
    kernel.walk([&](const ir::Operation &op) {
      if (op.code() == ir::OpCode::ConvertLayout &&
          layouts_->shared_layout(op.operand(0)) && layouts_->home(op.result()))
        read_from_shared_->insert(op.operand(0));
    });
  }
  return read_from_shared_->count(in_shared) > 0;
}

std::function<llvm::Value *(int64_t)> KernelLowering::shared_value_addresses(
    const ir::Value *v, const SharedLayout &shared, const Layout &layout) {
  if (shared.kind == SharedLayout::Kind::Padded)
    return [this, v, &shared, &layout](int64_t r) {
      return shared_value_address(v, shared, layout, r);
    };
  // A swizzled tile: each register's address is the thread's first
  // element's plus the register's offset (tile_addresses.h).
  if (shared.order != std::vector<int64_t>{1, 0})
    throw Error("GPU IR: " + shared.str() +
                ": the lowering reads swizzled values back row by row");
  llvm::Type *type = shared_type(builder, value_type(v->type()));
  const auto bytes = static_cast<int64_t>(
      module.getDataLayout().getTypeAllocSize(type).getFixedValue());
  const int64_t count = shared.buffer_elements();
  auto addresses = std::make_shared<TileAddresses>(
      builder, shared.tile(bytes),
      thread_part_of(linear_layout_of(parent(layout), layout), 0,
                     first_index(layout, 0), first_index(layout, 1)),
      type, [this, count, type](llvm::Value *index) {
        return shared_element(0, count, type, index);
      });
  return [this, addresses, &layout](int64_t r) {
    return addresses->at(register_offset_along(layout, r, 0),
                         register_offset_along(layout, r, 1));
  };
}

llvm::Value *KernelLowering::shared_value_address(const ir::Value *v,
                                                  const SharedLayout &shared,
                                                  const Layout &layout,
                                                  int64_t r) {
  // The row-major index, then its pads. (A reshape writes and reads in
  // layouts of two shapes with the row-major index in common.)
  if (shared.kind != SharedLayout::Kind::Padded ||
      shared.order != SharedLayout::padded_row_major(shared.shape).order)
    throw Error("GPU IR: " + shared.str() +
                ": the lowering holds values in shared memory row by row");
  llvm::Type *type = shared_type(builder, value_type(v->type()));
  llvm::Value *index = linear_index(layout, r);
  const int shift = ir::LinearLayout::bits_of(shared.pad_every, "pad_every");
  index = builder.CreateAdd(
      index,
      builder.CreateMul(builder.CreateLShr(index, static_cast<uint64_t>(shift)),
                        builder.getInt32(static_cast<uint32_t>(shared.pad))));
  return shared_element(0, shared.buffer_elements(), type, index);
}

int64_t KernelLowering::shared_run(const ir::Value *v,
                                   const SharedLayout &shared,
                                   const Layout &layout) {
  const int last = static_cast<int>(layout.shape.size()) - 1;
  const int64_t bytes = llvm_backend::storage_bytes(v->type().element());
  int64_t run = row_run(parent(layout), layout, bytes);
  // A run stays within a stretch between pads (a swizzled tile's vector),
  // and starts where the buffer's own alignment keeps its address a
  // multiple of its bytes.
  const bool padded = shared.kind == SharedLayout::Kind::Padded;
  while (run > 1 &&
         ((padded && (shared.pad_every % run != 0 || shared.pad % run != 0)) ||
          (!padded && shared.swizzle.vector % run != 0) ||
          shared_reserved_ % (run * bytes) != 0 ||
          layout.shape[size_t(last)] % run != 0))
    run /= 2;
  return run;
}

void KernelLowering::write_shared(const ir::Value *v,
                                  const SharedLayout &shared,
                                  const Layout &from, const Registers &values) {
  before_shared_write();
  llvm::Type *type = shared_type(builder, value_type(v->type()));
  store_register_runs(from, values, shared_run(v, shared, from), type,
                      llvm_backend::storage_bytes(v->type().element()),
                      shared_value_addresses(v, shared, from),
                      [&](llvm::Value *x) { return to_shared(builder, x); });
  after_shared_write();
}

KernelLowering::Registers
KernelLowering::read_shared(const ir::Value *v, const SharedLayout &shared,
                            const Layout &to) {
  llvm::Type *type = shared_type(builder, value_type(v->type()));
  llvm::Type *register_type = value_type(v->type());
  const int64_t run = shared_run(v, shared, to);
  const int64_t bytes = llvm_backend::storage_bytes(v->type().element());
  const BlockedLayout &p = parent(to);
  const int last = p.rank() - 1;
  const std::function<llvm::Value *(int64_t)> address =
      shared_value_addresses(v, shared, to);
  // Each run of registers read as one vector, at its first register.
  std::map<int64_t, llvm::Value *> vectors;
  return per_register(to, [&](int64_t r) {
    if (run == 1)
      return from_shared(builder, builder.CreateLoad(type, address(r)),
                         register_type);
    const int64_t lane = p.register_offset(r)[last] % run;
    llvm::Value *&vector = vectors[r - lane];
    if (!vector)
      vector = builder.CreateAlignedLoad(
          llvm::FixedVectorType::get(type, static_cast<unsigned>(run)),
          address(r - lane), llvm::Align(run * bytes));
    return from_shared(builder, builder.CreateExtractElement(vector, lane),
                       register_type);
  });
}

} // namespace blocc::nvptx
