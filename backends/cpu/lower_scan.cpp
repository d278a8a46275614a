// scan: inclusive prefix combination along an axis (from the end when
// `reverse`), in the interpreter's sequential order exactly: each lane of a
// vector carries one independent scan, so no combine is reassociated.
// Along an axis that is not the innermost, vectors run across the
// dimensions after it (contiguous lanes). Along the innermost axis of a
// block with several rows, vectors run across rows (lane r reads element k
// of row r: a gather with the row length as stride), which turns the
// sequential dependence on the combine's latency into one step per vector.
// A single row is scanned element by element.
#include "backends/cpu/kernel_lowering.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

namespace blocc::cpu {

namespace {

/// One scan op: its results' slots, the running values of its steps, and
/// the three walks (vectors across the dimensions after the axis, across
/// rows, or one element at a time).
class ScanLowering {
public:
  ScanLowering(KernelLowering &k, const ir::Operation &op)
      : k_(k), b_(k.builder), op_(op), n_(op.num_operands()),
        type_(op.operand(0)->type()),
        reverse_(op.has_attr("reverse") && op.int_attr("reverse") != 0) {
    const int64_t axis = op.int_attr("axis");
    length_ = type_.dim(static_cast<int>(axis));
    for (int d = 0; d < type_.rank(); ++d) {
      if (d < axis)
        outer_ *= type_.dim(d);
      else if (d > axis)
        inner_ *= type_.dim(d);
    }
    for (size_t i = 0; i < n_; ++i)
      slots_.push_back(k.allocate_slot_for(op.result(i)->type()));
  }

  void lower() {
    if (inner_ > 1)
      across_inner_dimensions();
    else if (outer_ > 1)
      across_rows();
    else
      element_by_element();
    for (size_t i = 0; i < n_; ++i)
      k_.set_materialized(op_.result(i), slots_[i]);
  }

private:
  using Values = std::vector<llvm::Value *>;

  /// Position k of the scan order along the axis.
  llvm::Value *position(llvm::Value *k) {
    return reverse_ ? b_.CreateSub(k_.i64(length_ - 1), k) : k;
  }

  /// Step k of the scan: the running values after combining `next` (the
  /// first step starts them), kept in entry-block variables across steps.
  /// The first step branches around the combine, which must not run on
  /// running values that do not exist yet: it may divide by one of them.
  Values step(llvm::Value *k, const Values &next) {
    for (size_t i = 0; i < n_; ++i)
      if (running_.size() <= i)
        running_.push_back(k_.entry_variable(next[i]->getType()));
    llvm::BasicBlock *start = b_.GetInsertBlock();
    auto *later =
        llvm::BasicBlock::Create(k_.context, "scan.combine", k_.function);
    auto *join = llvm::BasicBlock::Create(k_.context, "scan.step", k_.function);
    b_.CreateCondBr(b_.CreateICmpEQ(k, k_.i64(0)), join, later);
    b_.SetInsertPoint(later);
    Values current;
    for (size_t i = 0; i < n_; ++i)
      current.push_back(b_.CreateLoad(next[i]->getType(), running_[i]));
    Values combined = k_.combine(op_, current, next);
    llvm::BasicBlock *combined_at = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    Values sums;
    for (size_t i = 0; i < n_; ++i) {
      llvm::PHINode *sum = b_.CreatePHI(next[i]->getType(), 2);
      sum->addIncoming(next[i], start);
      sum->addIncoming(combined[i], combined_at);
      sums.push_back(sum);
    }
    for (size_t i = 0; i < n_; ++i)
      b_.CreateStore(sums[i], running_[i]);
    return sums;
  }

  /// Vectors across the dimensions after the axis (contiguous lanes).
  void across_inner_dimensions() {
    const int vl =
        k_.vector_width(ir::Type::block(type_.element_type(), {inner_}));
    const int64_t runs = inner_ / vl;
    k_.counted_loop(k_.i64(outer_ * runs), [&](llvm::Value *job) {
      llvm::Value *o = b_.CreateUDiv(job, k_.i64(runs));
      llvm::Value *in_row =
          b_.CreateMul(b_.CreateURem(job, k_.i64(runs)), k_.i64(vl));
      k_.counted_loop(k_.i64(length_), [&](llvm::Value *k) {
        llvm::Value *base = b_.CreateTrunc(
            b_.CreateAdd(
                b_.CreateMul(
                    b_.CreateAdd(b_.CreateMul(o, k_.i64(length_)), position(k)),
                    k_.i64(inner_)),
                in_row),
            b_.getInt32Ty());
        Chunk chunk{vl, {}};
        Values sums =
            step(k, k_.evaluate_all(chunk, op_, Lanes::contiguous(base)));
        for (size_t i = 0; i < n_; ++i)
          k_.write_slot(slots_[i], op_.result(i)->type().element(), base,
                        sums[i]);
      });
    });
  }

  /// Along the innermost axis of several rows: lane r scans row r (a
  /// gather with the row length as stride, and a scatter back).
  void across_rows() {
    const int vl =
        k_.vector_width(ir::Type::block(type_.element_type(), {outer_}));
    k_.counted_loop(k_.i64(outer_ / vl), [&](llvm::Value *job) {
      // Element 0 of each of the vl rows this job scans.
      llvm::Value *row_starts = b_.CreateMul(
          b_.CreateAdd(
              k_.splat(vl, b_.CreateTrunc(b_.CreateMul(job, k_.i64(vl)),
                                          b_.getInt32Ty())),
              k_.iota(vl)),
          k_.splat(vl, k_.i32(length_)));
      k_.counted_loop(k_.i64(length_), [&](llvm::Value *k) {
        llvm::Value *index = b_.CreateAdd(
            row_starts,
            k_.splat(vl, b_.CreateTrunc(position(k), b_.getInt32Ty())));
        Chunk chunk{vl, {}};
        Values sums =
            step(k, k_.evaluate_all(chunk, op_, Lanes::general(index)));
        for (size_t i = 0; i < n_; ++i)
          scatter(slots_[i], op_.result(i)->type().element(), index, sums[i],
                  vl);
      });
    });
  }

  /// Lane r of `vector` to element index[r] of `slot` (storage form).
  void scatter(llvm::Value *slot, ir::Scalar element, llvm::Value *index,
               llvm::Value *vector, int vl) {
    llvm::Type *storage = k_.storage_type(element);
    if (element == ir::Scalar::I1)
      vector = b_.CreateZExt(vector, k_.vector_of(storage, vl));
    b_.CreateMaskedScatter(vector, b_.CreateGEP(storage, slot, index),
                           llvm::Align(llvm_backend::storage_bytes(element)));
  }

  /// A single row, element by element.
  void element_by_element() {
    Values sources;
    for (size_t i = 0; i < n_; ++i)
      sources.push_back(k_.materialized_slot(op_.operand(i)));
    k_.counted_loop(k_.i64(outer_), [&](llvm::Value *o) {
      k_.counted_loop(k_.i64(length_), [&](llvm::Value *k) {
        llvm::Value *index = b_.CreateTrunc(
            b_.CreateAdd(b_.CreateMul(o, k_.i64(length_)), position(k)),
            b_.getInt32Ty());
        Values next;
        for (size_t i = 0; i < n_; ++i) {
          llvm::Value *lane =
              k_.read_slot(sources[i], op_.operand(i)->type().element(),
                           Lanes::uniform(index), 1);
          next.push_back(b_.CreateExtractElement(lane, uint64_t{0}));
        }
        Values sums = step(k, next);
        for (size_t i = 0; i < n_; ++i) {
          llvm::Value *v = sums[i];
          ir::Scalar element = op_.result(i)->type().element();
          if (element == ir::Scalar::I1)
            v = b_.CreateZExt(v, k_.storage_type(element));
          b_.CreateStore(
              v, b_.CreateGEP(k_.storage_type(element), slots_[i], index));
        }
      });
    });
  }

  KernelLowering &k_;
  llvm::IRBuilder<> &b_;
  const ir::Operation &op_;
  const size_t n_;
  const ir::Type &type_;
  const bool reverse_;
  int64_t outer_ = 1, length_ = 1, inner_ = 1;
  Values slots_;
  std::vector<llvm::AllocaInst *> running_; // one per operand, made lazily
};

} // namespace

void KernelLowering::lower_scan(const ir::Operation &op) {
  ScanLowering(*this, op).lower();
}

} // namespace blocc::cpu
