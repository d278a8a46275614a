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

void KernelLowering::lower_reduce(const ir::Operation &op) {
  const ir::Type &type = op.operand(0)->type();
  AxisSplit split = split_at(type, op);
  size_t n = op.num_operands();
  std::vector<llvm::Value *> slots(n, nullptr);
  for (size_t i = 0; i < n; ++i)
    if (op.result(i)->type().is_block())
      slots[i] = allocate_slot_for(op.result(i)->type());
  std::vector<llvm::AllocaInst *> acc(n, nullptr);

  auto store_results = [&](const std::vector<llvm::Value *> &values,
                           llvm::Value *index) {
    for (size_t i = 0; i < n; ++i) {
      if (!slots[i]) {
        set_scalar(op.result(i), values[i]);
        continue;
      }
      ir::Scalar element = op.result(i)->type().element();
      llvm::Value *v = values[i];
      if (element == ir::Scalar::I1)
        v = builder.CreateZExt(v, storage_type(element));
      builder.CreateStore(
          v, builder.CreateGEP(storage_type(element), slots[i], index));
    }
  };

  if (split.inner == 1) {
    // Innermost axis: four vector accumulators per row (chunk c folds into
    // accumulator c % 4), then a tree over them and over their lanes.
    int vl = vector_width(ir::Type::block(type.element_type(), {split.length}));
    int64_t chunks = split.length / vl;
    // Chunks is a power of two, so the accumulators divide it.
    int accumulators = static_cast<int>(std::min<int64_t>(chunks, 4));
    int64_t rounds = chunks / accumulators;
    // The operand's slot, when this fold materializes it (see
    // materialized_by_next_reduce): one pass over the elements, not two.
    const ir::Value *operand = op.operand(0);
    llvm::Value *operand_slot = nullptr;
    if (n == 1 && !is_materialized(operand) && should_materialize(operand) &&
        materialized_by_next_reduce(operand))
      operand_slot = allocate_slot_for(operand->type());
    auto fold_row = [&](llvm::Value *row_start) {
      auto chunk_at = [&](llvm::Value *offset) {
        Chunk chunk{vl, {}};
        llvm::Value *start = builder.CreateAdd(row_start, offset);
        std::vector<llvm::Value *> values =
            evaluate_all(chunk, op, Lanes::contiguous(start));
        if (operand_slot)
          write_slot(operand_slot, operand->type().element(), start, values[0]);
        return values;
      };
      std::vector<std::vector<llvm::Value *>> partial;
      for (int a = 0; a < accumulators; ++a)
        partial.push_back(chunk_at(i32(int64_t{a} * vl)));
      if (rounds > 1) {
        std::vector<std::vector<llvm::AllocaInst *>> slots_of(accumulators);
        for (int a = 0; a < accumulators; ++a)
          for (size_t i = 0; i < n; ++i) {
            slots_of[a].push_back(entry_variable(partial[a][i]->getType()));
            builder.CreateStore(partial[a][i], slots_of[a][i]);
          }
        counted_loop(i64(rounds - 1), [&](llvm::Value *round) {
          llvm::Value *first = builder.CreateTrunc(
              builder.CreateMul(builder.CreateAdd(round, i64(1)),
                                i64(int64_t{accumulators} * vl)),
              builder.getInt32Ty());
          for (int a = 0; a < accumulators; ++a) {
            std::vector<llvm::Value *> next =
                chunk_at(builder.CreateAdd(first, i32(int64_t{a} * vl)));
            std::vector<llvm::Value *> current;
            for (size_t i = 0; i < n; ++i)
              current.push_back(
                  builder.CreateLoad(next[i]->getType(), slots_of[a][i]));
            std::vector<llvm::Value *> combined = combine(op, current, next);
            for (size_t i = 0; i < n; ++i)
              builder.CreateStore(combined[i], slots_of[a][i]);
          }
        });
        for (int a = 0; a < accumulators; ++a)
          for (size_t i = 0; i < n; ++i)
            partial[a][i] =
                builder.CreateLoad(partial[a][i]->getType(), slots_of[a][i]);
      }
      // Accumulators in a tree, then halve the vector until one lane is
      // left.
      for (int live = accumulators; live > 1; live /= 2)
        for (int a = 0; a < live / 2; ++a)
          partial[a] = combine(op, partial[a], partial[a + live / 2]);
      std::vector<llvm::Value *> values = partial[0];
      for (int width = vl; width > 1; width /= 2) {
        std::vector<int> low, high;
        for (int l = 0; l < width / 2; ++l) {
          low.push_back(l);
          high.push_back(l + width / 2);
        }
        std::vector<llvm::Value *> lo, hi;
        for (llvm::Value *v : values) {
          lo.push_back(builder.CreateShuffleVector(v, low));
          hi.push_back(builder.CreateShuffleVector(v, high));
        }
        values = combine(op, lo, hi);
      }
      for (llvm::Value *&v : values)
        v = builder.CreateExtractElement(v, uint64_t{0});
      return values;
    };
    if (split.outer == 1) {
      store_results(fold_row(i32(0)), i64(0));
    } else {
      counted_loop(i64(split.outer), [&](llvm::Value *row) {
        llvm::Value *start = builder.CreateTrunc(
            builder.CreateMul(row, i64(split.length)), builder.getInt32Ty());
        store_results(fold_row(start), row);
      });
    }
    for (size_t i = 0; i < n; ++i)
      if (slots[i])
        set_materialized(op.result(i), slots[i]);
    if (operand_slot)
      set_materialized(operand, operand_slot);
    return;
  }

  // An outer axis: lanes across the dimensions after it, folded in order.
  int vl = vector_width(ir::Type::block(type.element_type(), {split.inner}));
  std::vector<llvm::Value *> result_slots = slots;
  counted_loop(i64(split.outer * (split.inner / vl)), [&](llvm::Value *job) {
    llvm::Value *o = builder.CreateUDiv(job, i64(split.inner / vl));
    llvm::Value *c = builder.CreateURem(job, i64(split.inner / vl));
    llvm::Value *in_row = builder.CreateMul(c, i64(vl));
    auto lanes_at = [&](llvm::Value *k) {
      llvm::Value *flat = builder.CreateAdd(
          builder.CreateMul(
              builder.CreateAdd(builder.CreateMul(o, i64(split.length)), k),
              i64(split.inner)),
          in_row);
      return Lanes::contiguous(builder.CreateTrunc(flat, builder.getInt32Ty()));
    };
    Chunk first{vl, {}};
    std::vector<llvm::Value *> values =
        evaluate_all(first, op, lanes_at(i64(0)));
    if (split.length > 1) {
      for (size_t i = 0; i < n; ++i) {
        if (!acc[i])
          acc[i] = entry_variable(values[i]->getType());
        builder.CreateStore(values[i], acc[i]);
      }
      counted_loop(i64(split.length - 1), [&](llvm::Value *k) {
        Chunk chunk{vl, {}};
        std::vector<llvm::Value *> next =
            evaluate_all(chunk, op, lanes_at(builder.CreateAdd(k, i64(1))));
        std::vector<llvm::Value *> current;
        for (size_t i = 0; i < n; ++i)
          current.push_back(builder.CreateLoad(values[i]->getType(), acc[i]));
        std::vector<llvm::Value *> combined = combine(op, current, next);
        for (size_t i = 0; i < n; ++i)
          builder.CreateStore(combined[i], acc[i]);
      });
      for (size_t i = 0; i < n; ++i)
        values[i] = builder.CreateLoad(values[i]->getType(), acc[i]);
    }
    llvm::Value *out = builder.CreateTrunc(
        builder.CreateAdd(builder.CreateMul(o, i64(split.inner)), in_row),
        builder.getInt32Ty());
    for (size_t i = 0; i < n; ++i)
      write_slot(result_slots[i], op.result(i)->type().element(), out,
                 values[i]);
  });
  for (size_t i = 0; i < n; ++i)
    if (slots[i])
      set_materialized(op.result(i), slots[i]);
}

} // namespace blocc::cpu
