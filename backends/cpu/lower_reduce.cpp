// reduce: folds operands along an axis with the op's combine region, run
// on vectors.
//
// Along an axis that is not the innermost (elements after it > 1), the
// lanes of a vector are neighbouring positions of the dimensions after the
// axis, and each is folded sequentially along the axis: the interpreter's
// order exactly. Along the innermost axis, a row is folded chunk by chunk
// into up to four vector accumulators in turn (accumulator a, lane j sees
// elements a * VL + j, (a + 4) * VL + j, ...: independent chains, so that
// the combine's latency does not bound the loop), then the accumulators
// are combined in a tree and the result's halves until one lane remains.
// That order differs from a sequential fold: results are identical for
// associative and commutative combines (integer sums, min/max, and/or/xor,
// argmax with an index tie-break) and differ by rounding for float sums, as
// they do on GPUs.
//
// A reduced value that is needed again (softmax's row: max(x), then
// exp(x - max)) would be materialized where it is defined and read back by
// the fold; when the reduce comes right after its definition, the fold
// writes the value's slot instead, so that the row is computed and read
// once.
#include "backends/cpu/kernel_lowering.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <algorithm>

namespace blocc::cpu {

using ir::OpCode;

namespace {

struct AxisSplit {
  int64_t outer = 1, length = 1, inner = 1;
};

AxisSplit split_at(const ir::Type &type, const ir::Operation &op) {
  AxisSplit s;
  if (!op.has_attr("axis")) {
    s.length = type.num_elements();
    return s;
  }
  int64_t axis = op.int_attr("axis");
  for (int d = 0; d < type.rank(); ++d) {
    if (d < axis)
      s.outer *= type.dim(d);
    else if (d == axis)
      s.length = type.dim(d);
    else
      s.inner *= type.dim(d);
  }
  return s;
}

} // namespace

bool KernelLowering::materialized_by_next_reduce(const ir::Value *v) const {
  const ir::Operation *definition = v->defining_op();
  const auto &users = liveness.users(v);
  if (!definition || users.empty())
    return false;
  const ir::Operation &reduce = *users.front();
  return reduce.code() == OpCode::Reduce && reduce.num_operands() == 1 &&
         reduce.parent_block() == definition->parent_block() &&
         liveness.position(&reduce) == liveness.position(definition) + 1 &&
         split_at(v->type(), reduce).inner == 1;
}

std::vector<llvm::Value *> KernelLowering::evaluate_all(Chunk &chunk,
                                                        const ir::Operation &op,
                                                        const Lanes &lanes) {
  std::vector<llvm::Value *> values;
  for (const ir::Value *x : op.operands())
    values.push_back(evaluate(chunk, x, lanes));
  return values;
}

namespace {

/// One reduce op's lowering: its results' slots (block results) or
/// scalars, and the fold along an innermost or an outer axis.
class ReduceLowering {
public:
  ReduceLowering(KernelLowering &k, const ir::Operation &op)
      : k_(k), b_(k.builder), op_(op), n_(op.num_operands()),
        split_(split_at(op.operand(0)->type(), op)) {
    for (size_t i = 0; i < n_; ++i)
      slots_.push_back(op.result(i)->type().is_block()
                           ? k.allocate_slot_for(op.result(i)->type())
                           : nullptr);
  }

  void lower() {
    if (split_.inner == 1)
      along_innermost();
    else
      along_outer();
    for (size_t i = 0; i < n_; ++i)
      if (slots_[i])
        k_.set_materialized(op_.result(i), slots_[i]);
  }

private:
  using Values = std::vector<llvm::Value *>;

  /// Innermost axis: four vector accumulators per row (chunk c folds into
  /// accumulator c % 4), then a tree over them and over their lanes.
  void along_innermost() {
    const ir::Type &type = op_.operand(0)->type();
    vl_ =
        k_.vector_width(ir::Type::block(type.element_type(), {split_.length}));
    const int64_t chunks = split_.length / vl_;
    // Chunks is a power of two, so the accumulators divide it.
    accumulators_ = static_cast<int>(std::min<int64_t>(chunks, 4));
    rounds_ = chunks / accumulators_;
    // The operand's slot, when this fold materializes it (see
    // materialized_by_next_reduce): one pass over the elements, not two.
    const ir::Value *operand = op_.operand(0);
    if (n_ == 1 && !k_.is_materialized(operand) &&
        k_.should_materialize(operand) &&
        k_.materialized_by_next_reduce(operand))
      operand_slot_ = k_.allocate_slot_for(operand->type());
    if (split_.outer == 1) {
      store_results(fold_row(k_.i32(0)), k_.i64(0));
    } else {
      k_.counted_loop(k_.i64(split_.outer), [&](llvm::Value *row) {
        llvm::Value *start = b_.CreateTrunc(
            b_.CreateMul(row, k_.i64(split_.length)), b_.getInt32Ty());
        store_results(fold_row(start), row);
      });
    }
    if (operand_slot_)
      k_.set_materialized(operand, operand_slot_);
  }

  /// The operands' chunk of vl_ elements `offset` (i32) into the row at
  /// `row_start`, written to the operand's slot where this fold
  /// materializes it.
  Values chunk_at(llvm::Value *row_start, llvm::Value *offset) {
    Chunk chunk{vl_, {}};
    llvm::Value *start = b_.CreateAdd(row_start, offset);
    Values values = k_.evaluate_all(chunk, op_, Lanes::contiguous(start));
    if (operand_slot_)
      k_.write_slot(operand_slot_, op_.operand(0)->type().element(), start,
                    values[0]);
    return values;
  }

  /// The row at `row_start` (i32) folded to one value per operand.
  Values fold_row(llvm::Value *row_start) {
    std::vector<Values> partial;
    for (int a = 0; a < accumulators_; ++a)
      partial.push_back(chunk_at(row_start, k_.i32(int64_t{a} * vl_)));
    if (rounds_ > 1)
      fold_rounds(row_start, partial);
    // Accumulators in a tree, then halve the vector until one lane is
    // left.
    for (int live = accumulators_; live > 1; live /= 2)
      for (int a = 0; a < live / 2; ++a)
        partial[a] = k_.combine(op_, partial[a], partial[a + live / 2]);
    return first_lane(fold_lanes(partial[0]));
  }

  /// The chunks after the first of each accumulator, round by round, in a
  /// loop (the accumulators live in variables across it).
  void fold_rounds(llvm::Value *row_start, std::vector<Values> &partial) {
    std::vector<std::vector<llvm::AllocaInst *>> variables(accumulators_);
    for (int a = 0; a < accumulators_; ++a)
      variables[a] = variables_holding(partial[a]);
    k_.counted_loop(k_.i64(rounds_ - 1), [&](llvm::Value *round) {
      llvm::Value *first =
          b_.CreateTrunc(b_.CreateMul(b_.CreateAdd(round, k_.i64(1)),
                                      k_.i64(int64_t{accumulators_} * vl_)),
                         b_.getInt32Ty());
      for (int a = 0; a < accumulators_; ++a)
        fold_into(
            variables[a],
            chunk_at(row_start, b_.CreateAdd(first, k_.i32(int64_t{a} * vl_))));
    });
    for (int a = 0; a < accumulators_; ++a)
      partial[a] = loaded(variables[a], partial[a]);
  }

  /// The vectors' halves combined until one lane holds the fold.
  Values fold_lanes(Values values) {
    for (int width = vl_; width > 1; width /= 2) {
      std::vector<int> low, high;
      for (int l = 0; l < width / 2; ++l) {
        low.push_back(l);
        high.push_back(l + width / 2);
      }
      Values lo, hi;
      for (llvm::Value *v : values) {
        lo.push_back(b_.CreateShuffleVector(v, low));
        hi.push_back(b_.CreateShuffleVector(v, high));
      }
      values = k_.combine(op_, lo, hi);
    }
    return values;
  }

  Values first_lane(Values values) {
    for (llvm::Value *&v : values)
      v = b_.CreateExtractElement(v, uint64_t{0});
    return values;
  }

  /// An outer axis: lanes across the dimensions after it, folded in order.
  void along_outer() {
    const ir::Type &type = op_.operand(0)->type();
    vl_ = k_.vector_width(ir::Type::block(type.element_type(), {split_.inner}));
    const int64_t runs = split_.inner / vl_;
    k_.counted_loop(k_.i64(split_.outer * runs), [&](llvm::Value *job) {
      llvm::Value *o = b_.CreateUDiv(job, k_.i64(runs));
      llvm::Value *in_row =
          b_.CreateMul(b_.CreateURem(job, k_.i64(runs)), k_.i64(vl_));
      auto lanes_at = [&](llvm::Value *k) {
        llvm::Value *flat = b_.CreateAdd(
            b_.CreateMul(
                b_.CreateAdd(b_.CreateMul(o, k_.i64(split_.length)), k),
                k_.i64(split_.inner)),
            in_row);
        return Lanes::contiguous(b_.CreateTrunc(flat, b_.getInt32Ty()));
      };
      Chunk first{vl_, {}};
      Values values = k_.evaluate_all(first, op_, lanes_at(k_.i64(0)));
      if (split_.length > 1) {
        if (outer_variables_.empty())
          outer_variables_ = variables_holding(values);
        else
          store(outer_variables_, values);
        k_.counted_loop(k_.i64(split_.length - 1), [&](llvm::Value *k) {
          Chunk chunk{vl_, {}};
          fold_into(outer_variables_,
                    k_.evaluate_all(chunk, op_,
                                    lanes_at(b_.CreateAdd(k, k_.i64(1)))));
        });
        values = loaded(outer_variables_, values);
      }
      llvm::Value *out = b_.CreateTrunc(
          b_.CreateAdd(b_.CreateMul(o, k_.i64(split_.inner)), in_row),
          b_.getInt32Ty());
      for (size_t i = 0; i < n_; ++i)
        k_.write_slot(slots_[i], op_.result(i)->type().element(), out,
                      values[i]);
    });
  }

  /// Variables of the entry block holding `values` from here on.
  std::vector<llvm::AllocaInst *> variables_holding(const Values &values) {
    std::vector<llvm::AllocaInst *> variables;
    for (llvm::Value *v : values)
      variables.push_back(k_.entry_variable(v->getType()));
    store(variables, values);
    return variables;
  }

  void store(const std::vector<llvm::AllocaInst *> &variables,
             const Values &values) {
    for (size_t i = 0; i < n_; ++i)
      b_.CreateStore(values[i], variables[i]);
  }

  /// The variables' values (of the types of `like`).
  Values loaded(const std::vector<llvm::AllocaInst *> &variables,
                const Values &like) {
    Values values;
    for (size_t i = 0; i < n_; ++i)
      values.push_back(b_.CreateLoad(like[i]->getType(), variables[i]));
    return values;
  }

  /// variables = combine(variables, next).
  void fold_into(const std::vector<llvm::AllocaInst *> &variables,
                 const Values &next) {
    store(variables, k_.combine(op_, loaded(variables, next), next));
  }

  /// The fold's values as the results: scalars, or element `index` of the
  /// results' slots.
  void store_results(const Values &values, llvm::Value *index) {
    for (size_t i = 0; i < n_; ++i) {
      if (!slots_[i]) {
        k_.set_scalar(op_.result(i), values[i]);
        continue;
      }
      ir::Scalar element = op_.result(i)->type().element();
      llvm::Value *v = values[i];
      if (element == ir::Scalar::I1)
        v = b_.CreateZExt(v, k_.storage_type(element));
      b_.CreateStore(v,
                     b_.CreateGEP(k_.storage_type(element), slots_[i], index));
    }
  }

  KernelLowering &k_;
  llvm::IRBuilder<> &b_;
  const ir::Operation &op_;
  const size_t n_;
  const AxisSplit split_;
  std::vector<llvm::Value *> slots_;
  int vl_ = 1;
  int accumulators_ = 1;
  int64_t rounds_ = 1;
  llvm::Value *operand_slot_ = nullptr;
  std::vector<llvm::AllocaInst *> outer_variables_; // one per operand
};

} // namespace

void KernelLowering::lower_reduce(const ir::Operation &op) {
  ReduceLowering(*this, op).lower();
}

} // namespace blocc::cpu
