// dot: C = A x B + acc, with the accumulator in registers, on the tensor
// cores where it can run there (below), else on the CUDA cores by fused
// multiply-adds.
//
// Tensor cores (mma.sync, mma_layouts.h: MmaInstruction — m16n8k16 for
// f16 and bf16, m16n8k8 for f32 as tf32, m16n8k32 for int8 and fp8):
// where the layout assignment homed the result in the MMA accumulator
// layout (mma_layouts.h: each warp's registers are the fragments of its
// part of the block), A and B are read from tiles in shared memory in
// their own type: values of the GPU IR in swizzled layouts
// (gpu-stage-dot-operands; mma_layouts.h: FragmentTile, K fastest for
// elements other than 16 bits), written by a convert_layout
// (lower_shared_tile.cpp) or copied there by a pipelined loop
// (loop_pipeline.h), and read in place. Every address in them, written or
// read, comes from one place (tile_addresses.h);
// each step of 32 bytes along K, a warp reads its fragments with ldmatrix
// (.trans for a tile stored with K slowest, which only 16-bit tiles are:
// .trans moves halves) and issues one MMA per 16 x 8 tile. In words the
// fragments of every input type are alike (mma_layouts.h), so one addressing
// serves them all. f32 inputs are rounded to tf32 (cvt.rna) as their fragments
// are read; tf32x3 splits each into big = tf32(x) and small =
// tf32(x - big) and adds small x big, big x small, then big x big. The
// products are exact (but for tf32's rounding of the inputs) and the sums
// in the tensor cores' order: results agree with the CPU backend within
// the rounding of a sum, not bit for bit (int8: exactly).
//
// The result is produced in its home layout (assign_layouts.h: the layout
// its first user needs, so that a loop-carried accumulator converts
// nothing), and the accumulator is read in that layout: each thread
// computes the elements of C its registers hold, for which it needs their
// rows of A and columns of B at every k. A and B reach it through shared
// memory:
//   1. every thread writes the elements of A and B it holds, in whatever
//      layout they were computed, converted to the accumulator's type once
//      (the interpreter's rule; beyond 48 KB in dynamic shared memory,
//      lower_convert.cpp) — or, where that would not fit in what the
//      architecture allows a CTA, in their own narrower type (fp8 as f16,
//      which holds every fp8 value exactly), converted as they are read;
//   2. a barrier;
//   3. a loop over K in groups of four: each thread reads the group's
//      values of its rows of A and columns of B and accumulates
//      c = fma(a, b, c) in increasing k — the interpreter's order and
//      rounding, so that results are bit for bit the CPU backend's (f16
//      accumulators use fma.rn.f16: the same rounding, but a NaN result
//      may have other bits).
// The side with fewer lines (rows or columns) per thread is read first
// for the group; the other is streamed a line at a time, so that only one
// line of it is live beside the accumulator.
//
// Shared layout of each input: when the thread holds several consecutive
// rows (A) or columns (B) of C — size_per_thread > 1 along M or N, as
// layouts for vector stores have along N — the input is stored k-major
// ([k][m] or [k][n]) and read as vectors along M or N: the lanes of a warp
// read one contiguous row. Otherwise it is stored with K fastest ([m][k]
// or [n][k]) and the group of a line is one vector read; the row pitch is
// an odd number of vectors, so that lanes reading consecutive lines hit
// different banks. Writes are vectors where the source layout holds runs
// along the stored row.
//
// int8 x int8 accumulating in int32 (either signedness): both inputs are
// kept as bytes with K fastest, a group of four is one 32-bit word, and
// dp4a adds the four products to the accumulator in one instruction —
// exact, since integer sums wrap alike in any order.
#include "backends/nvptx/a_fragment_registers.h"
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/kernel_lowering.h"
#include "backends/nvptx/mma_layouts.h"
#include "backends/nvptx/tile_addresses.h"

#include "backends/llvm/element_ops.h"
#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>

namespace blocc::nvptx {

using ir::Scalar;
namespace llb = llvm_backend;

namespace {

/// Values of k accumulated per step of the loop (dp4a: a word of four
/// bytes).
constexpr int64_t kGroup = 4;
constexpr int64_t kMaxVectorBytes = 16;
/// Steps of 16 along K that a dot on tensor cores issues without a loop.
constexpr int64_t kUnrolledMmaSteps = kMaxStepsOfAInRegisters;

/// How one input of the dot is kept in shared memory.
struct Staging {
  Scalar input = Scalar::F32;   // the operand's element type
  Scalar element = Scalar::F32; // what shared memory holds
  bool k_fastest = false;       // [batch][mn][k] rather than [batch][k][mn]
  int64_t vector = 1;           // elements one read moves along the row
  int64_t pitch = 0;            // elements between rows (CUDA cores)
  // Tensor cores: the swizzled tile it is read from (then `pitch`,
  // `batch_stride`, `offset` and `count` are unused).
  std::optional<FragmentTile> tile;
  int64_t batch_stride = 0; // elements between batches
  int64_t offset = 0;       // bytes into the kernel's shared memory
  int64_t count = 0;        // elements in all

  int64_t element_bytes() const { return llb::storage_bytes(element); }
  int64_t bytes() const { return count * element_bytes(); }
};

/// A row of A or a column of B that a thread needs: batch and index as
/// offsets from the thread's first element of C.
struct Line {
  int64_t batch = 0, index = 0;
  friend bool operator==(const Line &, const Line &) = default;
};

/// Lines read together: `width` consecutive indices from `first` (one
/// vector along M or N), lines[w] naming the side's line first + w.
struct Unit {
  Line first;
  int64_t width = 1;
  std::vector<size_t> lines;
};

/// One register of C: its line of A (row) and of B (column).
struct Cell {
  int64_t reg = 0;
  size_t row = 0, col = 0;
};

size_t index_of(std::vector<Line> &lines, const Line &line) {
  auto it = std::find(lines.begin(), lines.end(), line);
  if (it != lines.end())
    return static_cast<size_t>(it - lines.begin());
  lines.push_back(line);
  return lines.size() - 1;
}

class DotLowering {
public:
  DotLowering(KernelLowering &k, const ir::Operation &op)
      : k_(k), b_(k.builder), op_(op), home_(*k.layouts().home(op.result())),
        parent_(k.parent(home_)), a_registers_(k, op) {
    const ir::Type &c = op.result()->type();
    rank_ = c.rank();
    batch_ = rank_ == 3 ? c.dim(0) : 1;
    m_ = c.dim(rank_ - 2);
    n_ = c.dim(rank_ - 1);
    depth_ = op.operand(0)->type().dim(rank_ - 1);
    acc_ = c.element();
    Scalar a = op.operand(0)->type().element();
    Scalar b = op.operand(1)->type().element();
    auto is_byte = [](Scalar s) { return s == Scalar::I8 || s == Scalar::U8; };
    dp4a_ = is_byte(a) && is_byte(b) &&
            (acc_ == Scalar::I32 || acc_ == Scalar::U32) && depth_ % 4 == 0;
  }

  void lower() {
    if (on_tensor_cores()) {
      lower_on_tensor_cores();
      return;
    }
    find_cells();
    group_ = std::min(kGroup, depth_);
    plan_staging();
    k_.before_shared_write();
    write(0, staging_[0]);
    write(1, staging_[1]);
    k_.after_shared_write();

    const KernelLowering::Registers &init = k_.registers(op_.operand(2), home_);
    std::vector<llvm::Value *> acc;
    for (const Cell &cell : cells_)
      acc.push_back(init[cell.reg]);
    loop(depth_ / group_, group_, acc,
         [&](llvm::Value *k0, std::vector<llvm::Value *> &a) { step(k0, a); });
    std::vector<llvm::Value *> by_register(parent_.num_registers());
    for (size_t i = 0; i < cells_.size(); ++i)
      by_register[cells_[i].reg] = acc[i];
    k_.define_block(op_.result(), home_, k_.per_register(home_, [&](int64_t r) {
      return by_register[r];
    }));
  }

private:
  int mn_dim(int operand) const { return operand == 0 ? rank_ - 2 : rank_ - 1; }
  int k_dim(int operand) const { return operand == 0 ? rank_ - 1 : rank_ - 2; }

  /// Register r's offset from the thread's first element along value
  /// dimension `dim` of C.
  int64_t offset(int64_t r, int dim) const {
    if (home_.shape[dim] == 1)
      return 0;
    return parent_.register_offset(r)[home_.dims[dim]];
  }

  /// Consecutive elements a thread holds along value dimension `dim` of C.
  int64_t per_thread(int dim) const {
    if (home_.shape[dim] == 1 ||
        parent_.shape[home_.dims[dim]] != home_.shape[dim])
      return 1;
    return parent_.size_per_thread[home_.dims[dim]];
  }

  void find_cells() {
    for (int64_t r = 0; r < parent_.num_registers(); ++r) {
      if (canonical_register(parent_, home_, r) != r)
        continue;
      int64_t p = rank_ == 3 ? offset(r, 0) : 0;
      cells_.push_back({r, index_of(lines_[0], {p, offset(r, rank_ - 2)}),
                        index_of(lines_[1], {p, offset(r, rank_ - 1)})});
    }
    for (int side = 0; side < 2; ++side)
      base_[side] = k_.element_index(home_, 0, mn_dim(side));
    batch_base_ = rank_ == 3 ? k_.element_index(home_, 0, 0) : b_.getInt32(0);
  }

  Staging plan(int operand, Scalar element) const {
    Staging s;
    s.input = op_.operand(operand)->type().element();
    s.element = element;
    int64_t mn = operand == 0 ? m_ : n_;
    int64_t bytes = s.element_bytes();
    int64_t lanes = std::min(per_thread(mn_dim(operand)),
                             std::max<int64_t>(1, kMaxVectorBytes / bytes));
    s.k_fastest = dp4a_ || lanes < 2;
    int64_t row = s.k_fastest ? depth_ : mn;
    s.vector = s.k_fastest
                   ? std::min<int64_t>(
                         group_, std::max<int64_t>(1, kMaxVectorBytes / bytes))
                   : lanes;
    s.pitch = row;
    if ((row / s.vector) % 2 == 0)
      s.pitch += s.vector;
    s.batch_stride = s.pitch * (s.k_fastest ? mn : depth_);
    s.count = batch_ * s.batch_stride;
    return s;
  }

  /// Shared element types: the accumulator's type where both inputs fit in
  /// what the architecture allows a CTA (static shared memory up to 48 KB,
  /// dynamic beyond), else their own (fp8 as f16, booleans as bytes),
  /// converted as they are read (several instructions an element, against
  /// one fused multiply-add per element pair); int8 for dp4a.
  void plan_staging() {
    auto narrow = [&](int operand) {
      Scalar in = op_.operand(operand)->type().element();
      return ir::is_fp8(in) ? Scalar::F16 : in == Scalar::I1 ? Scalar::I8 : in;
    };
    std::vector<std::pair<Scalar, Scalar>> choices;
    if (dp4a_)
      choices.push_back({narrow(0), narrow(1)});
    else
      choices = {{acc_, acc_}, {narrow(0), narrow(1)}};
    int64_t least = 0;
    for (auto [a, b] : choices) {
      staging_[0] = plan(0, a);
      staging_[1] = plan(1, b);
      staging_[1].offset = align_up(staging_[0].bytes(), 16);
      int64_t end = staging_[1].offset + staging_[1].bytes();
      if (end <= k_.arch.max_shared_bytes())
        return;
      least = least ? std::min(least, end) : end;
    }
    too_much_shared_memory(least);
  }

  /// The error for inputs that need `bytes` of shared memory, beyond what
  /// the architecture allows a CTA.
  [[noreturn]] void too_much_shared_memory(int64_t bytes) const {
    const ir::Type &a = op_.operand(0)->type(), &b = op_.operand(1)->type();
    throw SharedMemoryExhausted(
        "a dot of " + a.str() + " by " + b.str() + " needs " +
        std::to_string(bytes) +
        " bytes of shared memory for its inputs, more than the " +
        std::to_string(k_.arch.max_shared_bytes()) + " bytes " +
        k_.arch.name() +
        " allows a CTA; use smaller blocks (a smaller BLOCK_K)");
  }

  llvm::Value *convert(llvm::Value *v, Scalar from, Scalar to) {
    return from == to ? v : llb::emit_cast(b_, from, to, v);
  }

  llvm::Value *i32(int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }

  llvm::Value *add(llvm::Value *x, llvm::Value *y) {
    return b_.CreateAdd(x, y, "", /*HasNUW=*/true, /*HasNSW=*/true);
  }
  llvm::Value *mul(llvm::Value *x, int64_t y) {
    return b_.CreateMul(x, i32(y), "", /*HasNUW=*/true, /*HasNSW=*/true);
  }

  // Addresses in shared memory are a per-thread base (from the thread's
  // first batch, row/column and k) plus a constant per register, so that
  // every access is [base + immediate]: one address per thread and input
  // stays live across the loops instead of one per register.

  /// The constant part of an element's index in an input's array.
  static int64_t shared_offset(const Staging &s, int64_t batch, int64_t mn,
                               int64_t k) {
    return batch * s.batch_stride +
           (s.k_fastest ? mn * s.pitch + k : k * s.pitch + mn);
  }

  /// Address of an input's element at the thread's base (batch, mn, k),
  /// in elements of `type`.
  llvm::Value *shared_base(const Staging &s, llvm::Type *type,
                           llvm::Value *batch, llvm::Value *mn,
                           llvm::Value *k) {
    llvm::Value *row = s.k_fastest ? mn : k, *column = s.k_fastest ? k : mn;
    llvm::Value *index =
        add(mul(batch, s.batch_stride), add(mul(row, s.pitch), column));
    return k_.shared_element(s.offset, s.count, type, index);
  }

  /// Writes the elements of operand `operand` this thread holds.
  void write(int operand, const Staging &s) {
    const ir::Value *x = op_.operand(operand);
    const Layout &layout = k_.layouts().layouts_of(x).front();
    const int fast = s.k_fastest ? k_dim(operand) : mn_dim(operand);
    // Registers r .. r + run - 1 hold consecutive elements along the row,
    // as long as the row pitch keeps the run's alignment.
    int64_t run =
        vector_run(k_.parent(layout), layout, fast, s.element_bytes());
    while (run > 1 && (s.pitch % run != 0 || s.batch_stride % run != 0))
      run /= 2;
    llvm::Type *type = k_.storage_type(s.element);
    auto first = [&](int dim) { return k_.first_index(layout, dim); };
    auto offset_in = [&](int64_t r, int dim) {
      return k_.register_offset_along(layout, r, dim);
    };
    llvm::Value *base =
        shared_base(s, type, rank_ == 3 ? first(0) : i32(0),
                    first(mn_dim(operand)), first(k_dim(operand)));
    k_.store_register_runs(
        layout, k_.registers(x, layout), run, type, s.element_bytes(),
        [&](int64_t r) {
          return b_.CreateConstGEP1_64(
              type, base,
              shared_offset(s, rank_ == 3 ? offset_in(r, 0) : 0,
                            offset_in(r, mn_dim(operand)),
                            offset_in(r, k_dim(operand))));
        },
        [&](llvm::Value *v) { return convert(v, s.input, s.element); });
  }

  /// `width` consecutive elements of an input's shared array at `offset`
  /// elements from `base`.
  std::vector<llvm::Value *> read(const Staging &s, llvm::Value *base,
                                  int64_t offset, int64_t width) {
    llvm::Type *type = k_.storage_type(s.element);
    llvm::Value *address = b_.CreateConstGEP1_64(type, base, offset);
    if (width == 1)
      return {b_.CreateLoad(type, address)};
    auto *vector_type =
        llvm::FixedVectorType::get(type, static_cast<unsigned>(width));
    llvm::Value *vector = b_.CreateAlignedLoad(
        vector_type, address, llvm::Align(width * s.element_bytes()));
    std::vector<llvm::Value *> out;
    for (int64_t i = 0; i < width; ++i)
      out.push_back(b_.CreateExtractElement(vector, i));
    return out;
  }

  /// The lines of a side, grouped into what one read moves.
  std::vector<Unit> units(int side) const {
    const Staging &s = staging_[side];
    const std::vector<Line> &lines = lines_[side];
    int64_t width = s.k_fastest ? 1 : s.vector;
    std::vector<Unit> out;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].index % width != 0)
        continue;
      Unit unit{lines[i], width, {}};
      for (int64_t w = 0; w < width; ++w) {
        Line next{lines[i].batch, lines[i].index + w};
        auto it = std::find(lines.begin(), lines.end(), next);
        if (it == lines.end())
          throw Error("internal: dot lines of a thread are not in runs of " +
                      std::to_string(width));
        unit.lines.push_back(static_cast<size_t>(it - lines.begin()));
      }
      out.push_back(unit);
    }
    return out;
  }

  /// The thread's base address in an input for the group at k0 (for dp4a
  /// in bytes, else in elements of the shared type).
  llvm::Value *group_base(int side, llvm::Value *k0) {
    const Staging &s = staging_[side];
    llvm::Type *type = dp4a_ ? b_.getInt8Ty() : k_.storage_type(s.element);
    return shared_base(s, type, batch_base_, base_[side], k0);
  }

  /// The group's values of each line of `unit` (values[w][kk], converted
  /// to the accumulator's type; for dp4a one word of four bytes).
  std::vector<std::vector<llvm::Value *>> read_unit(int side, const Unit &unit,
                                                    llvm::Value *base) {
    const Staging &s = staging_[side];
    auto offset = [&](int64_t kk) {
      return shared_offset(s, unit.first.batch, unit.first.index, kk);
    };
    std::vector<std::vector<llvm::Value *>> values(unit.width);
    if (dp4a_) {
      values[0].push_back(b_.CreateAlignedLoad(
          b_.getInt32Ty(),
          b_.CreateConstGEP1_64(b_.getInt8Ty(), base, offset(0)),
          llvm::Align(4)));
      return values;
    }
    if (s.k_fastest) {
      for (int64_t kk = 0; kk < group_; kk += s.vector)
        for (llvm::Value *v : read(s, base, offset(kk), s.vector))
          values[0].push_back(v);
    } else {
      for (int64_t kk = 0; kk < group_; ++kk) {
        std::vector<llvm::Value *> row = read(s, base, offset(kk), unit.width);
        for (int64_t w = 0; w < unit.width; ++w)
          values[w].push_back(row[w]);
      }
    }
    for (auto &line : values)
      for (llvm::Value *&v : line)
        v = convert(v, s.element, acc_);
    return values;
  }

  /// a * b + c rounded once. f16: the hardware's fma.rn.f16, which rounds
  /// like the interpreter's exact emulation (backends/llvm's, some twenty
  /// instructions in f64); only the bits of a NaN result may differ.
  llvm::Value *fma(llvm::Value *a, llvm::Value *b, llvm::Value *c) {
    if (acc_ != Scalar::F16)
      return llb::emit_fma(b_, acc_, a, b, c);
    auto half = [&](llvm::Value *bits) {
      return b_.CreateBitCast(bits, b_.getHalfTy());
    };
    llvm::Value *r = b_.CreateIntrinsic(llvm::Intrinsic::fma, {b_.getHalfTy()},
                                        {half(a), half(b), half(c)});
    return b_.CreateBitCast(r, b_.getInt16Ty());
  }

  llvm::Value *dp4a(llvm::Value *a, llvm::Value *b, llvm::Value *c) {
    auto kind = [&](int operand) {
      return ir::is_signed(op_.operand(operand)->type().element()) ? "s32"
                                                                   : "u32";
    };
    llvm::Type *i32_type = b_.getInt32Ty();
    auto *type = llvm::FunctionType::get(i32_type,
                                         {i32_type, i32_type, i32_type}, false);
    std::string text =
        std::string("dp4a.") + kind(0) + "." + kind(1) + " $0, $1, $2, $3;";
    return b_.CreateCall(llvm::InlineAsm::get(type, text, "=r,r,r,r", false),
                         {a, b, c});
  }

  /// Accumulates the group of k starting at k0 into `acc` (one per cell).
  void step(llvm::Value *k0, std::vector<llvm::Value *> &acc) {
    // The side with fewer lines is read whole first; the other is streamed.
    int first = lines_[0].size() <= lines_[1].size() ? 0 : 1;
    int streamed = 1 - first;
    llvm::Value *bases[2] = {group_base(0, k0), group_base(1, k0)};
    std::vector<std::vector<llvm::Value *>> held(lines_[first].size());
    for (const Unit &unit : units(first)) {
      auto values = read_unit(first, unit, bases[first]);
      for (int64_t w = 0; w < unit.width; ++w)
        held[unit.lines[w]] = values[w];
    }
    for (const Unit &unit : units(streamed)) {
      auto values = read_unit(streamed, unit, bases[streamed]);
      for (int64_t w = 0; w < unit.width; ++w)
        for (size_t c = 0; c < cells_.size(); ++c) {
          const Cell &cell = cells_[c];
          size_t line = streamed == 0 ? cell.row : cell.col;
          if (line != unit.lines[w])
            continue;
          const auto &other = held[streamed == 0 ? cell.col : cell.row];
          const auto &a = streamed == 0 ? values[w] : other;
          const auto &b = streamed == 0 ? other : values[w];
          if (dp4a_) {
            acc[c] = dp4a(a[0], b[0], acc[c]);
            continue;
          }
          for (int64_t kk = 0; kk < group_; ++kk)
            acc[c] = fma(a[kk], b[kk], acc[c]);
        }
    }
  }

  using Step =
      std::function<void(llvm::Value *k0, std::vector<llvm::Value *> &acc)>;

  /// The K loop: `steps` groups of `group` values of k, the accumulator
  /// carried in phis (no loop for one step).
  void loop(int64_t steps, int64_t group, std::vector<llvm::Value *> &acc,
            const Step &step) {
    if (steps == 1) {
      step(b_.getInt32(0), acc);
      return;
    }
    llvm::Function *f = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock *before = b_.GetInsertBlock();
    auto *body = llvm::BasicBlock::Create(k_.context, "dot.k", f);
    auto *done = llvm::BasicBlock::Create(k_.context, "dot.done", f);
    b_.CreateBr(body);
    b_.SetInsertPoint(body);
    llvm::PHINode *g = b_.CreatePHI(b_.getInt32Ty(), 2, "dot.group");
    g->addIncoming(b_.getInt32(0), before);
    std::vector<llvm::PHINode *> phis;
    for (llvm::Value *&v : acc) {
      llvm::PHINode *phi = b_.CreatePHI(v->getType(), 2);
      phi->addIncoming(v, before);
      phis.push_back(phi);
      v = phi;
    }
    step(mul(g, group), acc);
    llvm::Value *next = b_.CreateAdd(g, b_.getInt32(1));
    llvm::BasicBlock *latch = b_.GetInsertBlock();
    g->addIncoming(next, latch);
    for (size_t i = 0; i < phis.size(); ++i)
      phis[i]->addIncoming(acc[i], latch);
    b_.CreateCondBr(b_.CreateICmpULT(next, i32(steps)), body, done);
    b_.SetInsertPoint(done);
  }

  // ---- Tensor cores. ---------------------------------------------------

  bool on_tensor_cores() const { return k_.layouts().on_tensor_cores(op_); }

  /// The tiles of shared memory A and B are read from (the GPU IR's
  /// swizzled layouts: written by a convert_layout, or copied by a
  /// pipelined loop), but for A held as its fragments in registers.
  void find_tiles() {
    for (int side = 0; side < 2; ++side) {
      if (side == 0 && a_registers_)
        continue;
      const ir::Value *x = op_.operand(side);
      const SharedLayout *shared = k_.layouts().shared_layout(x);
      std::optional<FragmentTile> tile =
          shared ? fragment_tile_of(*shared, side,
                                    llb::storage_bytes(x->type().element()))
                 : std::nullopt;
      staged_[side] = k_.staged_operand(x);
      if (!tile || !staged_[side])
        throw Error("internal: " + op_.describe() + ": operand " +
                    std::to_string(side) +
                    " is in no tile of shared memory that ldmatrix reads "
                    "(gpu-stage-dot-operands puts it there)");
      staging_[side].k_fastest = tile->k_fastest;
      staging_[side].tile = *tile;
      staging_[side].element = x->type().element();
    }
    k_.fence_tile_writes();
  }

  void lower_on_tensor_cores() {
    mma_ = *mma_instruction(op_, k_.arch);
    find_tiles();
    for (int side = 0; side < 2; ++side)
      if (!(side == 0 && a_registers_) && !staging_[side].k_fastest &&
          staging_[side].element_bytes() != 2)
        throw Error("internal: a tile of " +
                    std::to_string(8 * staging_[side].element_bytes()) +
                    "-bit elements with K slowest, which ldmatrix cannot "
                    "transpose");
    m_tiles_ = m_ / (2 * parent_.tile(0));
    n_tiles_ = n_ / parent_.tile(1);
    const KernelLowering::Registers &init = k_.registers(op_.operand(2), home_);
    std::vector<llvm::Value *> acc(
        static_cast<size_t>(4 * m_tiles_ * n_tiles_));
    for (int64_t r = 0; r < parent_.num_registers(); ++r)
      acc[fragment_slot(mma_fragment_element(parent_, r))] = init[r];
    find_row_addresses();
    // Straight-line steps (up to 256 bytes of K) let ptxas read the
    // fragments of the next step while the tensor cores multiply this
    // one's.
    const int64_t steps = depth_ / mma_.k;
    if (steps <= kUnrolledMmaSteps) {
      for (int64_t step = 0; step < steps; ++step)
        mma_step(i32(mma_.k * step), acc, step);
    } else {
      loop(steps, mma_.k, acc,
           [&](llvm::Value *k0, std::vector<llvm::Value *> &a) {
             mma_step(k0, a, -1);
           });
    }
    std::vector<llvm::Value *> by_register(parent_.num_registers());
    for (int64_t r = 0; r < parent_.num_registers(); ++r)
      by_register[r] = acc[fragment_slot(mma_fragment_element(parent_, r))];
    k_.define_block(op_.result(), home_, k_.per_register(home_, [&](int64_t r) {
      return by_register[r];
    }));
  }

  size_t fragment_slot(const MmaFragmentElement &f) const {
    return static_cast<size_t>((f.m_tile * n_tiles_ + f.n_tile) * 4 +
                               f.element);
  }

  /// The address of element `index` of a side's tile in shared memory.
  llvm::Value *tile_element(int side, llvm::Value *index) {
    llvm::Type *type = k_.storage_type(staging_[side].element);
    return k_.reserved_shared_element(type,
                                      add(staged_[side]->first_element, index));
  }

  /// The rows each lane hands ldmatrix (mma_layouts.h: ldmatrix_rows),
  /// for the warp's first fragments at k = 0; the steps along K and the
  /// tiles along M or N are added to them as constants.
  void find_row_addresses() {
    for (int side = 0; side < 2; ++side) {
      if (side == 0 && a_registers_)
        continue;
      const FragmentTile &tile = *staging_[side].tile;
      ThreadPart lanes = emit_thread_part(
          b_, ldmatrix_rows(tile, side, parent_, mma_.input_bytes), k_.lane,
          k_.warp);
      row_addresses_[side].emplace(b_, tile, lanes,
                                   k_.storage_type(staging_[side].element),
                                   [this, side](llvm::Value *index) {
                                     return tile_element(side, index);
                                   });
    }
  }

  /// ldmatrix of four (or, for an odd last tile of B, two) 8 x 8
  /// matrices at the lane's row address `at`.
  std::vector<llvm::Value *> load_matrices(llvm::Value *at, bool transposed,
                                           bool four) {
    using I = llvm::Intrinsic::ID;
    I id =
        four ? (transposed
                    ? llvm::Intrinsic::
                          nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                    : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16)
             : (transposed
                    ? llvm::Intrinsic::
                          nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16
                    : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16);
    llvm::Value *loaded = b_.CreateCall(
        llvm::Intrinsic::getDeclaration(&k_.module, id, {at->getType()}), {at});
    std::vector<llvm::Value *> words;
    for (unsigned i = 0; i < (four ? 4u : 2u); ++i)
      words.push_back(b_.CreateExtractValue(loaded, i));
    return words;
  }

  /// A side's row address `mn` elements along M or N and `k` (a constant
  /// where `step` is known, else `k0`) along K from the lane's first.
  llvm::Value *tile_step(int side, llvm::Value *k0, int64_t step, int64_t mn) {
    TileAddresses &at = *row_addresses_[side];
    const bool k_fastest = staging_[side].k_fastest;
    if (step >= 0) {
      int64_t k = mma_.k * step;
      return k_fastest ? at.at(mn, k) : at.at(k, mn);
    }
    return k_fastest ? at.at(i32(mn), k0) : at.at(k0, i32(mn));
  }

  /// A side's fragment words at `at` (ldmatrix).
  std::vector<llvm::Value *> load_fragments(int side, llvm::Value *at,
                                            bool four) {
    return load_matrices(at, !staging_[side].k_fastest, four);
  }

  /// tf32 rounding (to nearest, ties away) of the f32 in a word.
  llvm::Value *to_tf32(llvm::Value *word) {
    llvm::Type *i32 = b_.getInt32Ty();
    auto *type = llvm::FunctionType::get(i32, {i32}, false);
    return b_.CreateCall(
        llvm::InlineAsm::get(type, "cvt.rna.tf32.f32 $0, $1;", "=r,r", false),
        {word});
  }

  /// The fragment words an MMA multiplies: f32 rounded to tf32, and for
  /// tf32x3 the rounded remainders (small) too; other types as read.
  template <size_t N> struct Words {
    std::array<llvm::Value *, N> big{}, small{};
  };
  template <size_t N>
  Words<N> as_mma_inputs(const std::array<llvm::Value *, N> &words) {
    Words<N> out;
    out.big = words;
    if (mma_.a != "tf32")
      return out;
    for (size_t i = 0; i < N; ++i) {
      out.big[i] = to_tf32(words[i]);
      if (!mma_.split_tf32)
        continue;
      llvm::Type *f32 = b_.getFloatTy();
      llvm::Value *rest = b_.CreateFSub(b_.CreateBitCast(words[i], f32),
                                        b_.CreateBitCast(out.big[i], f32));
      out.small[i] = to_tf32(b_.CreateBitCast(rest, b_.getInt32Ty()));
    }
    return out;
  }

  /// One step of 32 bytes along K from k0 (the `step`th, where known):
  /// every fragment of A and B the warp needs (ldmatrix, plain loads, or
  /// A's registers), then the MMAs of each 16 x 8 tile.
  void mma_step(llvm::Value *k0, std::vector<llvm::Value *> &acc,
                int64_t step) {
    std::vector<Words<4>> a(m_tiles_);
    for (int64_t t = 0; t < m_tiles_; ++t) {
      if (a_registers_) {
        a[t].big = a_registers_.fragment(2 * a_registers_.tile_rows() * t,
                                         a_registers_.tile_rows(), 16 * step);
        continue;
      }
      std::vector<llvm::Value *> words = load_fragments(
          0, tile_step(0, k0, step, 2 * parent_.tile(0) * t), true);
      std::array<llvm::Value *, 4> read;
      std::copy(words.begin(), words.end(), read.begin());
      a[t] = as_mma_inputs(read);
    }
    std::vector<Words<2>> b(n_tiles_);
    for (int64_t t = 0; t < n_tiles_; t += 2) {
      bool pair = t + 1 < n_tiles_;
      std::vector<llvm::Value *> words =
          load_fragments(1, tile_step(1, k0, step, parent_.tile(1) * t), pair);
      b[t] = as_mma_inputs(std::array<llvm::Value *, 2>{words[0], words[1]});
      if (pair)
        b[t + 1] =
            as_mma_inputs(std::array<llvm::Value *, 2>{words[2], words[3]});
    }
    for (int64_t tm = 0; tm < m_tiles_; ++tm)
      for (int64_t tn = 0; tn < n_tiles_; ++tn) {
        llvm::Value **c = &acc[fragment_slot({tm, tn, 0})];
        // tf32x3: the small products first, so that they are not lost
        // below the big product's rounding.
        if (mma_.split_tf32) {
          mma(a[tm].small, b[tn].big, c);
          mma(a[tm].big, b[tn].small, c);
        }
        mma(a[tm].big, b[tn].big, c);
      }
  }

  /// c[0..3] += A x B for one 16 x 8 tile: f32 and s32 accumulators in
  /// four registers, f16 in two (c0 c1 and c2 c3, the first in the low
  /// half).
  void mma(const std::array<llvm::Value *, 4> &a,
           const std::array<llvm::Value *, 2> &b, llvm::Value **c) {
    llvm::Type *i32 = b_.getInt32Ty();
    const bool f16 = mma_.accumulator == Scalar::F16;
    const char *acc_type = f16                               ? "f16"
                           : mma_.accumulator == Scalar::I32 ? "s32"
                                                             : "f32";
    llvm::Type *acc = mma_.accumulator == Scalar::F32 ? b_.getFloatTy() : i32;
    const char *letter = mma_.accumulator == Scalar::F32 ? "f" : "r";
    std::vector<llvm::Value *> in;
    if (f16) {
      for (int i = 0; i < 4; i += 2)
        in.push_back(
            b_.CreateOr(b_.CreateZExt(c[i], i32),
                        b_.CreateShl(b_.CreateZExt(c[i + 1], i32), 16)));
    } else {
      in.assign(c, c + 4);
    }
    const size_t regs = in.size();
    std::vector<llvm::Type *> outputs(regs, acc);
    auto *result = llvm::StructType::get(k_.context, outputs);
    std::vector<llvm::Type *> params(6, i32);
    params.insert(params.end(), regs, acc);
    auto *signature = llvm::FunctionType::get(result, params, false);
    std::string d, cs, constraints;
    for (size_t i = 0; i < regs; ++i) {
      d += (i ? ", $" : "$") + std::to_string(i);
      cs += (i ? ", $" : "$") + std::to_string(regs + 6 + i);
      constraints += std::string(i ? "," : "") + "=" + letter;
    }
    constraints += ",r,r,r,r,r,r";
    for (size_t i = 0; i < regs; ++i)
      constraints += "," + std::to_string(i);
    auto operand = [&](size_t i) { return "$" + std::to_string(regs + i); };
    std::string text = "mma.sync.aligned.m16n8k" + std::to_string(mma_.k) +
                       ".row.col." + acc_type + "." + mma_.a + "." + mma_.b +
                       "." + acc_type + " {" + d + "}, {" + operand(0) + ", " +
                       operand(1) + ", " + operand(2) + ", " + operand(3) +
                       "}, {" + operand(4) + ", " + operand(5) + "}, {" + cs +
                       "};";
    std::vector<llvm::Value *> args = {a[0], a[1], a[2], a[3], b[0], b[1]};
    args.insert(args.end(), in.begin(), in.end());
    llvm::Value *out = b_.CreateCall(
        llvm::InlineAsm::get(signature, text, constraints, false), args);
    if (!f16) {
      for (unsigned i = 0; i < 4; ++i)
        c[i] = b_.CreateExtractValue(out, i);
      return;
    }
    for (unsigned i = 0; i < 2; ++i) {
      llvm::Value *word = b_.CreateExtractValue(out, i);
      c[2 * i] = b_.CreateTrunc(word, b_.getInt16Ty());
      c[2 * i + 1] = b_.CreateTrunc(b_.CreateLShr(word, 16), b_.getInt16Ty());
    }
  }

  KernelLowering &k_;
  llvm::IRBuilder<> &b_;
  const ir::Operation &op_;
  const Layout &home_;
  const BlockedLayout &parent_;
  int rank_ = 2;
  int64_t batch_ = 1, m_ = 0, n_ = 0, depth_ = 0, group_ = 1;
  Scalar acc_ = Scalar::F32;
  bool dp4a_ = false;
  Staging staging_[2];
  std::vector<Line> lines_[2]; // rows of A, columns of B
  std::vector<Cell> cells_;
  llvm::Value *base_[2] = {nullptr, nullptr}; // thread's first row, column
  llvm::Value *batch_base_ = nullptr;
  // Tensor cores: 16-row fragments and 8-column tiles per warp, and the
  // row addresses the thread hands ldmatrix for A and for B.
  int64_t m_tiles_ = 0, n_tiles_ = 0;
  std::optional<TileAddresses> row_addresses_[2];
  MmaInstruction mma_;
  // Inputs a pipelined loop copied into shared memory (else nullptr).
  const KernelLowering::StagedOperand *staged_[2] = {nullptr, nullptr};
  // A held as its fragments (mma_operand_a_layout), else empty.
  AFragmentRegisters a_registers_;
};

} // namespace

void KernelLowering::lower_dot(const ir::Operation &op) {
  if (runs_on_warpgroups(op)) {
    lower_warpgroup_dot(op);
    return;
  }
  DotLowering(*this, op).lower();
}

} // namespace blocc::nvptx
