// load and store. A thread's registers along the fastest dimension of its
// layout hold consecutive elements; where axis info proves their addresses
// consecutive and aligned, `width` of them (16 bytes at most) move as one
// vector access: ld.global.v4.f32 for four floats, and for elements
// narrower than 4 bytes a vector of 32-bit words (ld.global.v4.b32 for
// eight halves), which NVPTX would otherwise split into byte accesses.
//
// Masks: where axis info proves the mask constant across a group (a mask
// `offsets < n` with n divisible by the group), one predicate guards the
// vector access. Otherwise the group takes the vector access when all its
// lanes are active and falls back to per-lane accesses (llvm.masked.load /
// store, which LLVM expands into predicated scalar accesses) only in the
// group that straddles the end: the masked tail.
//
// Lanes that would make a vector narrower than a 32-bit register (two
// bytes) never form one: LLVM 19's NVPTX target holds no <2 x i8> in a
// register and moves it through a stack slot, a local-memory round trip
// that ptxas assembled wrong (one stored byte taken from a register
// nothing wrote). Such groups pack and unpack with shifts, and
// their masked tails access one lane at a time.
//
// Masked-off lanes touch no memory; a load gives `other` (or 0) there.
// Booleans occupy a byte; any nonzero byte loads as true. Only threads
// that own elements store them (replicas hold copies); a scalar store is
// made by thread 0. Volatile accesses are made one element at a time.
// Cache and eviction hints are accepted and not yet passed on.
#include "backends/nvptx/kernel_lowering.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <optional>

namespace blocc::nvptx {

using ir::OpCode;
using ir::Scalar;

namespace {

/// How one group of `width` consecutive elements moves between registers
/// and memory.
struct Group {
  Scalar element;
  int64_t width = 1;
  llvm::Type *storage = nullptr; // one element in memory
  llvm::Type *access = nullptr;  // what the load/store instruction moves
  llvm::Align align;

  Group(llvm::LLVMContext &context, Scalar s, int64_t w)
      : element(s), width(w), storage(llvm_backend::storage_type(context, s)) {
    int64_t bytes = llvm_backend::storage_bytes(s), total = bytes * w;
    align = llvm::Align(static_cast<uint64_t>(total));
    if (w == 1)
      access = storage;
    else if (bytes >= 4)
      access = llvm::FixedVectorType::get(storage, static_cast<unsigned>(w));
    else if (total >= 8)
      access = llvm::FixedVectorType::get(llvm::Type::getInt32Ty(context),
                                          static_cast<unsigned>(total / 4));
    else
      access =
          llvm::IntegerType::get(context, static_cast<unsigned>(total * 8));
  }

  /// Whether the lanes move through shifts of the integer access rather
  /// than through a vector of lanes (see the comment at the top).
  bool lanes_in_shifts() const {
    return width > 1 && llvm_backend::storage_bytes(element) * width < 4;
  }

  llvm::Type *lanes_type() const {
    return width == 1 ? storage
                      : llvm::FixedVectorType::get(
                            storage, static_cast<unsigned>(width));
  }

  /// Storage-form lanes of a loaded access value, in register form.
  std::vector<llvm::Value *> unpack(llvm::IRBuilderBase &b,
                                    llvm::Value *loaded) const {
    std::vector<llvm::Value *> lanes;
    llvm::Value *vector =
        lanes_in_shifts() ? loaded : b.CreateBitCast(loaded, lanes_type());
    for (int64_t i = 0; i < width; ++i) {
      llvm::Value *lane = width == 1 ? vector
                          : lanes_in_shifts()
                              ? lane_of_integer(b, vector, i)
                              : b.CreateExtractElement(vector, uint64_t(i));
      lanes.push_back(to_register(b, lane));
    }
    return lanes;
  }

  /// A storage-form lane in register form (booleans: any nonzero byte).
  llvm::Value *to_register(llvm::IRBuilderBase &b, llvm::Value *lane) const {
    if (element != Scalar::I1)
      return lane;
    return b.CreateICmpNE(lane, llvm::Constant::getNullValue(storage));
  }

  /// Lane i of an integer holding the lanes, lowest first.
  llvm::Value *lane_of_integer(llvm::IRBuilderBase &b, llvm::Value *packed,
                               int64_t i) const {
    unsigned bits = storage->getPrimitiveSizeInBits();
    llvm::Value *lane =
        b.CreateTrunc(b.CreateLShr(packed, i * bits), b.getIntNTy(bits));
    return b.CreateBitCast(lane, storage);
  }

  /// Register-form lanes packed into the integer access, lowest first.
  llvm::Value *integer_of_lanes(llvm::IRBuilderBase &b,
                                const std::vector<llvm::Value *> &lanes) const {
    unsigned bits = storage->getPrimitiveSizeInBits();
    llvm::Value *packed = llvm::ConstantInt::get(access, 0);
    for (int64_t i = 0; i < width; ++i) {
      llvm::Value *lane =
          b.CreateBitCast(to_storage(b, lanes[i]), b.getIntNTy(bits));
      packed = b.CreateOr(
          packed, b.CreateShl(b.CreateZExt(lane, access), uint64_t(i) * bits));
    }
    return packed;
  }

  /// A register-form lane in storage form (booleans as a byte 0 or 1).
  llvm::Value *to_storage(llvm::IRBuilderBase &b, llvm::Value *lane) const {
    return element == Scalar::I1 ? b.CreateZExt(lane, storage) : lane;
  }

  /// Register-form lanes as one vector of storage elements.
  llvm::Value *pack_lanes(llvm::IRBuilderBase &b,
                          const std::vector<llvm::Value *> &lanes) const {
    if (width == 1)
      return to_storage(b, lanes[0]);
    llvm::Value *vector = llvm::PoisonValue::get(lanes_type());
    for (int64_t i = 0; i < width; ++i)
      vector =
          b.CreateInsertElement(vector, to_storage(b, lanes[i]), uint64_t(i));
    return vector;
  }

  llvm::Value *pack(llvm::IRBuilderBase &b,
                    const std::vector<llvm::Value *> &lanes) const {
    if (lanes_in_shifts())
      return integer_of_lanes(b, lanes);
    return b.CreateBitCast(pack_lanes(b, lanes), access);
  }

  /// The alignment lane i's address is known to have.
  llvm::Align lane_align(int64_t i) const {
    return llvm::commonAlignment(
        align, uint64_t(i * llvm_backend::storage_bytes(element)));
  }

  /// The address of lane i.
  llvm::Value *lane_address(llvm::IRBuilderBase &b, llvm::Value *address,
                            int64_t i) const {
    return b.CreateConstInBoundsGEP1_64(storage, address, uint64_t(i));
  }

  bool packed() const { return llvm_backend::storage_bytes(element) < 4; }

  /// The access as 1, 2 or 4 words of 32 or 64 bits, the form of one
  /// predicated ld/st instruction: 4- and 8-byte elements as themselves
  /// (f32, f64, integers, pointers as integers), narrower ones packed into
  /// 32-bit words; none for accesses under 4 bytes.
  std::optional<std::pair<llvm::Type *, unsigned>>
  words(llvm::LLVMContext &context) const {
    int64_t bytes = llvm_backend::storage_bytes(element), total = bytes * width;
    int64_t word = bytes == 8 ? 8 : 4;
    int64_t count = total / word;
    if (total % word != 0 || (count != 1 && count != 2 && count != 4))
      return std::nullopt;
    llvm::Type *type = llvm::IntegerType::get(context, unsigned(word * 8));
    if (bytes == word && storage->isFloatingPointTy())
      type = storage;
    return std::make_pair(type, unsigned(count));
  }
};

/// PTX's name of a vector of `count` words of `type` ("v4.f32", "u64"),
/// "b32" for packed narrower elements.
std::string word_suffix(llvm::Type *type, unsigned count, bool packed) {
  std::string bits = std::to_string(type->getPrimitiveSizeInBits());
  std::string name = packed                ? "b" + bits
                     : type->isIntegerTy() ? "u" + bits
                                           : "f" + bits;
  return count == 1 ? name : "v" + std::to_string(count) + "." + name;
}

/// "{$first, ..., $first+count-1}" (or "$first" alone).
std::string operand_list(unsigned first, unsigned count) {
  std::string list;
  for (unsigned i = 0; i < count; ++i)
    list += (i ? ", $" : "$") + std::to_string(first + i);
  return count == 1 ? list : "{" + list + "}";
}

/// `value` (any type of the same size) as `count` words of `type`.
std::vector<llvm::Value *> split_words(llvm::IRBuilderBase &b,
                                       llvm::Value *value, llvm::Type *type,
                                       unsigned count) {
  if (count == 1)
    return {b.CreateBitCast(value, type)};
  llvm::Value *vector =
      b.CreateBitCast(value, llvm::FixedVectorType::get(type, count));
  std::vector<llvm::Value *> out;
  for (unsigned i = 0; i < count; ++i)
    out.push_back(b.CreateExtractElement(vector, uint64_t(i)));
  return out;
}

char word_constraint(llvm::Type *type) {
  if (type->isFloatTy())
    return 'f';
  if (type->isDoubleTy())
    return 'd';
  return type->getIntegerBitWidth() == 64 ? 'l' : 'r';
}

// A group under one predicate is one predicated PTX instruction in
// straight-line code ("@p ld.global.v4.b32", as Triton emits it), not a
// branch around the access: with branches, ptxas started using the first
// load's data before issuing the later loads of a row (one DRAM round trip
// more per row), and LLVM moved arithmetic into the stores' branches.
//
// In a loop body that streams (each iteration's loads consumed element by
// element: sums carried to the next iteration, stores; no reduction, scan
// or dot of the loaded block), the masked-off lanes' values are moved in
// after the load under the negated predicate ("@!p mov"); elsewhere they
// are moved into the destination before it (the form Triton emits). In a
// streaming loop the form before made ptxas keep one load in flight at a
// time, reusing its registers for the next load once the sum had read
// them: a grid-stride sum issued its eight 16-byte loads one after
// another, at 0.65x Triton's bandwidth on 4 warps and 0.88x on 8 (1.0x
// with the moves after). Where the loaded block is reduced or multiplied
// as a whole, ptxas already issues its loads together, and the form after
// only cost registers: ptxas keeps conditionally written registers live
// around the loop (a softmax row of 8192 on 8 warps took 114 registers
// instead of 64, half the programs per SM, 0.74x the bandwidth).

/// A load of the group's words where `predicate` holds; `others` (the
/// group's register-form lanes) where it does not.
std::vector<llvm::Value *>
predicated_load(llvm::IRBuilderBase &b, const Group &g, llvm::Value *address,
                llvm::Value *predicate,
                const std::vector<llvm::Value *> &others, bool others_after) {
  auto [type, count] = *g.words(b.getContext());
  const std::string p = "$" + std::to_string(count + 1);
  std::string text =
      "@" + p + " ld.global." + word_suffix(type, count, g.packed()) + " " +
      operand_list(0, count) + ", [$" + std::to_string(count) + "];";
  std::string constraints;
  for (unsigned i = 0; i < count; ++i)
    constraints += std::string(i ? "," : "") +
                   // Early clobber: a move must not overwrite a later move's
                   // source.
                   (others_after ? "=&" : "=") + word_constraint(type);
  constraints += ",l,b";
  for (unsigned i = 0; i < count; ++i) {
    if (!others_after) {
      constraints += "," + std::to_string(i); // tied to the destination
      continue;
    }
    constraints += std::string(",") + word_constraint(type);
    text += "\n\t@!" + p + " mov.b" +
            std::to_string(type->getPrimitiveSizeInBits()) + " $" +
            std::to_string(i) + ", $" + std::to_string(count + 2 + i) + ";";
  }
  std::vector<llvm::Value *> arguments{
      b.CreatePtrToInt(address, b.getInt64Ty()), predicate};
  for (llvm::Value *w : split_words(b, g.pack(b, others), type, count))
    arguments.push_back(w);
  std::vector<llvm::Type *> argument_types;
  for (llvm::Value *a : arguments)
    argument_types.push_back(a->getType());
  llvm::Type *result_type =
      count == 1 ? type
                 : llvm::StructType::get(
                       b.getContext(), std::vector<llvm::Type *>(count, type));
  auto *asm_type = llvm::FunctionType::get(result_type, argument_types, false);
  llvm::CallInst *call = b.CreateCall(
      llvm::InlineAsm::get(asm_type, text, constraints, /*sideeffect=*/false),
      arguments);
  // It reads memory: not moved across stores or barriers, removable.
  call->setOnlyReadsMemory();
  call->setDoesNotThrow();
  llvm::Value *loaded;
  if (count == 1) {
    loaded = b.CreateBitCast(call, g.access);
  } else {
    llvm::Value *vector =
        llvm::PoisonValue::get(llvm::FixedVectorType::get(type, count));
    for (unsigned i = 0; i < count; ++i)
      vector = b.CreateInsertElement(vector, b.CreateExtractValue(call, i),
                                     uint64_t(i));
    loaded = b.CreateBitCast(vector, g.access);
  }
  return g.unpack(b, loaded);
}

/// A store of the group's words where `predicate` holds.
void predicated_store(llvm::IRBuilderBase &b, const Group &g,
                      llvm::Value *address, llvm::Value *predicate,
                      const std::vector<llvm::Value *> &lanes) {
  auto [type, count] = *g.words(b.getContext());
  std::string text = "@$0 st.global." + word_suffix(type, count, g.packed()) +
                     " [$1], " + operand_list(2, count) + ";";
  std::string constraints = "b,l";
  for (unsigned i = 0; i < count; ++i)
    constraints += std::string(",") + word_constraint(type);
  constraints += ",~{memory}";
  std::vector<llvm::Value *> arguments{
      predicate, b.CreatePtrToInt(address, b.getInt64Ty())};
  for (llvm::Value *w : split_words(b, g.pack(b, lanes), type, count))
    arguments.push_back(w);
  std::vector<llvm::Type *> argument_types;
  for (llvm::Value *a : arguments)
    argument_types.push_back(a->getType());
  auto *asm_type =
      llvm::FunctionType::get(b.getVoidTy(), argument_types, false);
  b.CreateCall(
      llvm::InlineAsm::get(asm_type, text, constraints, /*sideeffect=*/true),
      arguments);
}

llvm::Value *all_of(llvm::IRBuilderBase &b,
                    const std::vector<llvm::Value *> &bits) {
  llvm::Value *all = bits[0];
  for (size_t i = 1; i < bits.size(); ++i)
    all = b.CreateAnd(all, bits[i]);
  return all;
}

llvm::Value *as_vector(llvm::IRBuilderBase &b,
                       const std::vector<llvm::Value *> &lanes) {
  if (lanes.size() == 1)
    return lanes[0];
  llvm::Value *v = llvm::PoisonValue::get(llvm::FixedVectorType::get(
      lanes[0]->getType(), static_cast<unsigned>(lanes.size())));
  for (size_t i = 0; i < lanes.size(); ++i)
    v = b.CreateInsertElement(v, lanes[i], uint64_t(i));
  return v;
}

/// Where masks[i] holds, lane i loaded on its own; others[i] elsewhere.
/// (What LLVM makes of a masked load, without a vector of the lanes.)
std::vector<llvm::Value *>
load_lanes_one_by_one(llvm::IRBuilderBase &b, const Group &g,
                      llvm::Value *address,
                      const std::vector<llvm::Value *> &masks,
                      const std::vector<llvm::Value *> &others) {
  llvm::Function *f = b.GetInsertBlock()->getParent();
  std::vector<llvm::Value *> lanes;
  for (int64_t i = 0; i < g.width; ++i) {
    llvm::BasicBlock *before = b.GetInsertBlock();
    auto *load = llvm::BasicBlock::Create(b.getContext(), "load.lane", f);
    auto *join = llvm::BasicBlock::Create(b.getContext(), "load.lane.join", f);
    b.CreateCondBr(masks[size_t(i)], load, join);
    b.SetInsertPoint(load);
    llvm::Value *loaded = g.to_register(
        b, b.CreateAlignedLoad(g.storage, g.lane_address(b, address, i),
                               g.lane_align(i)));
    b.CreateBr(join);
    b.SetInsertPoint(join);
    llvm::PHINode *phi = b.CreatePHI(loaded->getType(), 2);
    phi->addIncoming(loaded, load);
    phi->addIncoming(others[size_t(i)], before);
    lanes.push_back(phi);
  }
  return lanes;
}

/// Where masks[i] holds, lane i stored on its own.
void store_lanes_one_by_one(llvm::IRBuilderBase &b, const Group &g,
                            llvm::Value *address,
                            const std::vector<llvm::Value *> &masks,
                            const std::vector<llvm::Value *> &lanes) {
  llvm::Function *f = b.GetInsertBlock()->getParent();
  for (int64_t i = 0; i < g.width; ++i) {
    auto *store = llvm::BasicBlock::Create(b.getContext(), "store.lane", f);
    auto *join = llvm::BasicBlock::Create(b.getContext(), "store.lane.join", f);
    b.CreateCondBr(masks[size_t(i)], store, join);
    b.SetInsertPoint(store);
    b.CreateAlignedStore(g.to_storage(b, lanes[size_t(i)]),
                         g.lane_address(b, address, i), g.lane_align(i));
    b.CreateBr(join);
    b.SetInsertPoint(join);
  }
}

/// The loop `op` runs in the body of (the innermost), or nullptr.
const ir::Operation *innermost_loop(const ir::Operation &op) {
  const ir::Operation *loop = op.parent_op();
  while (loop && loop->code() != OpCode::For)
    loop = loop->parent_op();
  return loop;
}

/// Whether `loop` streams: reduces, scans or multiplies no block, nested
/// ops included (see predicated_load).
bool streams(const ir::Operation &loop) {
  bool streaming = true;
  loop.walk([&](const ir::Operation &nested) {
    if (nested.code() == OpCode::Reduce || nested.code() == OpCode::Scan ||
        nested.code() == OpCode::Dot)
      streaming = false;
  });
  return streaming;
}

/// Loads one group. `masks` is empty (no mask), one predicate (uniform
/// over the group) or one per lane; `others` holds register-form lanes.
/// `streaming`: the load runs in a streaming loop (see predicated_load).
std::vector<llvm::Value *> load_group(llvm::IRBuilderBase &b, const Group &g,
                                      llvm::Value *address,
                                      const std::vector<llvm::Value *> &masks,
                                      const std::vector<llvm::Value *> &others,
                                      bool is_volatile, bool streaming) {
  auto load_all = [&]() {
    llvm::LoadInst *loaded = b.CreateAlignedLoad(g.access, address, g.align);
    loaded->setVolatile(is_volatile);
    return g.unpack(b, loaded);
  };
  if (masks.empty())
    return load_all();
  if (masks.size() == 1 && !is_volatile && g.words(b.getContext()))
    return predicated_load(b, g, address, masks[0], others, streaming);
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::LLVMContext &context = b.getContext();
  bool uniform = masks.size() == 1;
  llvm::BasicBlock *entry = b.GetInsertBlock();
  auto *vector_block = llvm::BasicBlock::Create(context, "load.vector", f);
  auto *lanes_block =
      uniform ? nullptr : llvm::BasicBlock::Create(context, "load.lanes", f);
  auto *join = llvm::BasicBlock::Create(context, "load.join", f);
  b.CreateCondBr(all_of(b, masks), vector_block, uniform ? join : lanes_block);

  b.SetInsertPoint(vector_block);
  std::vector<llvm::Value *> full = load_all();
  llvm::BasicBlock *vector_end = b.GetInsertBlock();
  b.CreateBr(join);

  std::vector<llvm::Value *> partial = others;
  llvm::BasicBlock *partial_end = entry;
  if (!uniform) {
    b.SetInsertPoint(lanes_block);
    partial = g.lanes_in_shifts()
                  ? load_lanes_one_by_one(b, g, address, masks, others)
                  : g.unpack(b, b.CreateMaskedLoad(g.lanes_type(), address,
                                                   g.align, as_vector(b, masks),
                                                   g.pack_lanes(b, others)));
    partial_end = b.GetInsertBlock();
    b.CreateBr(join);
  }

  b.SetInsertPoint(join);
  std::vector<llvm::Value *> lanes;
  for (int64_t i = 0; i < g.width; ++i) {
    llvm::PHINode *phi = b.CreatePHI(full[i]->getType(), 2);
    phi->addIncoming(full[i], vector_end);
    phi->addIncoming(partial[i], partial_end);
    lanes.push_back(phi);
  }
  return lanes;
}

/// Stores one group under `masks` (as for load_group), in threads where
/// `owner` (i1) holds.
void store_group(llvm::IRBuilderBase &b, const Group &g, llvm::Value *address,
                 const std::vector<llvm::Value *> &lanes,
                 std::vector<llvm::Value *> masks, llvm::Value *owner) {
  auto *always = llvm::dyn_cast<llvm::ConstantInt>(owner);
  bool owner_always = always && always->isOne();
  if (masks.empty() && owner_always) {
    b.CreateAlignedStore(g.pack(b, lanes), address, g.align);
    return;
  }
  if (masks.empty())
    masks.push_back(owner);
  else if (!owner_always)
    for (llvm::Value *&m : masks)
      m = b.CreateAnd(m, owner);
  if (masks.size() == 1 && g.packed() && g.width > 1 &&
      g.words(b.getContext())) {
    predicated_store(b, g, address, masks[0], lanes);
    return;
  }
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::LLVMContext &context = b.getContext();
  bool uniform = masks.size() == 1;
  auto *vector_block = llvm::BasicBlock::Create(context, "store.vector", f);
  auto *lanes_block =
      uniform ? nullptr : llvm::BasicBlock::Create(context, "store.lanes", f);
  auto *join = llvm::BasicBlock::Create(context, "store.join", f);
  b.CreateCondBr(all_of(b, masks), vector_block, uniform ? join : lanes_block);
  b.SetInsertPoint(vector_block);
  b.CreateAlignedStore(g.pack(b, lanes), address, g.align);
  b.CreateBr(join);
  if (!uniform) {
    b.SetInsertPoint(lanes_block);
    if (g.lanes_in_shifts())
      store_lanes_one_by_one(b, g, address, masks, lanes);
    else
      b.CreateMaskedStore(g.pack_lanes(b, lanes), address, g.align,
                          as_vector(b, masks));
    b.CreateBr(join);
  }
  b.SetInsertPoint(join);
}

} // namespace

std::set<const ir::Operation *>
loads_in_streaming_loops(const ir::Function &kernel) {
  std::set<const ir::Operation *> loads;
  kernel.walk([&](const ir::Operation &op) {
    if (op.code() != OpCode::Load)
      return;
    const ir::Operation *loop = innermost_loop(op);
    if (loop && streams(*loop))
      loads.insert(&op);
  });
  return loads;
}

/// The width of a group of `op`'s accesses in `layout`, and the value
/// dimension its lanes run along (-1: none, single elements).
static std::pair<int64_t, int>
group_shape(const ir::Operation &op, const Layout &layout,
            const BlockedLayout &parent,
            const ir::AxisInfoAnalysis &axis_info) {
  int fastest = parent.rank() - 1;
  for (size_t k = 0; k < layout.dims.size(); ++k) {
    if (layout.dims[k] != fastest || layout.shape[k] == 1)
      continue;
    int dim = static_cast<int>(k);
    int64_t width = std::min(parent.size_per_thread[fastest],
                             access_vector_width(op, axis_info, dim));
    if (op.has_attr("volatile"))
      width = 1;
    return {width, dim};
  }
  return {1, -1};
}

/// The masks of the group at register r: none, one uniform predicate, or
/// one per lane.
static std::vector<llvm::Value *>
group_masks(const ir::AxisInfoAnalysis &axis_info, const ir::Value *mask,
            const KernelLowering::Registers *mask_registers, int64_t r,
            int64_t width, int dim) {
  if (!mask_registers)
    return {};
  const ir::AxisInfo &facts = axis_info.get(mask);
  if (width == 1 || (dim >= 0 && facts.constancy[dim] >= width))
    return {(*mask_registers)[r]};
  return std::vector<llvm::Value *>(mask_registers->begin() + r,
                                    mask_registers->begin() + r + width);
}

void KernelLowering::lower_prefetched(const ir::Operation &op,
                                      llvm::Value *first) {
  // The stage holds every element, masked-off ones as zero bytes (the
  // load's other); the loop's barrier made this iteration's visible.
  const Layout &layout = *layouts().home(op.result());
  llvm::Type *element = storage_type(op.result()->type().element());
  define_block(op.result(), layout, per_register(layout, [&](int64_t r) {
                 llvm::Value *at = reserved_shared_element(
                     element,
                     builder.CreateAdd(first, element_index(layout, r, 0)));
                 return builder.CreateLoad(element, at);
               }));
}

KernelLowering::Registers KernelLowering::load_block(const ir::Operation &op,
                                                     const Layout &layout) {
  const ir::Value *pointer = op.operand(0);
  const BlockedLayout &p = parent(layout);
  const ir::Value *mask = op.num_operands() > 1 ? op.operand(1) : nullptr;
  if (mask && provably_all_true(axis_info, mask))
    mask = nullptr;
  Scalar element = pointer->type().pointee();
  const Registers &addresses = registers(pointer, layout);
  const Registers *masks = mask ? &registers(mask, layout) : nullptr;
  const Registers *others =
      op.num_operands() > 2 ? &registers(op.operand(2), layout) : nullptr;
  auto [width, dim] = group_shape(op, layout, p, axis_info);
  Group group(context, element, width);
  llvm::Value *zero =
      llvm::Constant::getNullValue(value_type(op.result()->type()));
  Registers out(p.num_registers(), nullptr);
  for (int64_t r = 0; r < p.num_registers(); ++r) {
    int64_t canonical = canonical_register(p, layout, r);
    if (canonical != r) {
      out[r] = out[canonical];
      continue;
    }
    if (out[r])
      continue; // loaded with its group
    std::vector<llvm::Value *> other_lanes;
    for (int64_t i = 0; i < width; ++i)
      other_lanes.push_back(others ? (*others)[r + i] : zero);
    std::vector<llvm::Value *> lanes = load_group(
        builder, group, addresses[r],
        group_masks(axis_info, mask, masks, r, width, dim), other_lanes,
        op.has_attr("volatile"), in_streaming_loop_.count(&op) != 0);
    for (int64_t i = 0; i < width; ++i)
      out[r + i] = lanes[i];
  }
  return out;
}

llvm::Value *KernelLowering::load_scalar(const ir::Operation &op) {
  const ir::Value *mask = op.num_operands() > 1 ? op.operand(1) : nullptr;
  if (mask && provably_all_true(axis_info, mask))
    mask = nullptr;
  Group group(context, op.operand(0)->type().pointee(), 1);
  std::vector<llvm::Value *> masks;
  if (mask)
    masks.push_back(scalar(mask));
  llvm::Value *other =
      op.num_operands() > 2
          ? scalar(op.operand(2))
          : llvm::Constant::getNullValue(value_type(op.result()->type()));
  return load_group(builder, group, scalar(op.operand(0)), masks, {other},
                    op.has_attr("volatile"),
                    in_streaming_loop_.count(&op) != 0)[0];
}

void KernelLowering::store(const ir::Operation &op) {
  const ir::Value *pointer = op.operand(0);
  const ir::Value *value = op.operand(1);
  const ir::Value *mask = op.num_operands() > 2 ? op.operand(2) : nullptr;
  if (mask && provably_all_true(axis_info, mask))
    mask = nullptr;
  Scalar element = pointer->type().pointee();
  if (!value->type().is_block()) {
    // Every thread holds the scalar; one writes it.
    llvm::Value *thread = builder.CreateIntrinsic(
        llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
    llvm::Value *first = builder.CreateICmpEQ(thread, builder.getInt32(0));
    std::vector<llvm::Value *> masks;
    if (mask)
      masks.push_back(scalar(mask));
    store_group(builder, Group(context, element, 1), scalar(pointer),
                {scalar(value)}, masks, first);
    return;
  }
  const Layout &layout = layouts().store_layout(op);
  const BlockedLayout &p = parent(layout);
  const Registers &addresses = registers(pointer, layout);
  const Registers &values = registers(value, layout);
  const Registers *masks = mask ? &registers(mask, layout) : nullptr;
  auto [width, dim] = group_shape(op, layout, p, axis_info);
  Group group(context, element, width);
  llvm::Value *owner = owns_elements(p);
  for (int64_t r = 0; r < p.num_registers(); r += width) {
    // A full layout has no duplicate registers: every group is stored.
    std::vector<llvm::Value *> lanes(values.begin() + r,
                                     values.begin() + r + width);
    store_group(builder, group, addresses[r], lanes,
                group_masks(axis_info, mask, masks, r, width, dim), owner);
  }
}

} // namespace blocc::nvptx
