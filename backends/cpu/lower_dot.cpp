// dot: C = A x B + acc, as a register-blocked micro-kernel.
//
// A and B are first converted to the accumulator's element type (the
// interpreter's rule) into scratch, fusing whatever computes them. The
// result starts as acc; then for each MR x NR tile of C, MR * NR / VL
// vector accumulators stay in registers while k runs over K, each step
// broadcasting A[i][k] and multiplying it with a vector of row k of B:
//   C[i][j..j+VL) = fma(A[i][k], B[k][j..j+VL), C[i][j..j+VL))
// Every element is thus accumulated with one fused multiply-add per k in
// increasing k, exactly the interpreter's order and rounding.
#include "backends/cpu/kernel_lowering.h"

#include "backends/llvm/element_ops.h"
#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <algorithm>

namespace blocc::cpu {

using ir::Scalar;

void KernelLowering::lower_dot(const ir::Operation &op) {
  const ir::Type &a_type = op.operand(0)->type();
  const ir::Type &b_type = op.operand(1)->type();
  const ir::Type &c_type = op.result()->type();
  Scalar t = c_type.element();
  if (ir::is_fp8(t) || t == Scalar::I1)
    unsupported(op, "a dot needs an accumulator with arithmetic (not " +
                        std::string(ir::scalar_name(t)) + ")");
  int rank = c_type.rank();
  int64_t batch = rank == 3 ? c_type.dim(0) : 1;
  int64_t m = a_type.dim(rank - 2), k = a_type.dim(rank - 1),
          n = b_type.dim(rank - 1);

  // A and B in the accumulator's type.
  auto converted = [&](const ir::Value *x) {
    const ir::Type &type = x->type();
    llvm::Value *slot =
        allocate_slot(type.num_elements() * llvm_backend::storage_bytes(t));
    int vl = vector_width(type.with_element(ir::Type::scalar(t)));
    chunk_loop(type.num_elements(), vl, [&](llvm::Value *base) {
      Chunk chunk{vl, {}};
      llvm::Value *v = evaluate(chunk, x, Lanes::contiguous(base));
      if (type.element() != t)
        v = llvm_backend::emit_cast(builder, type.element(), t, v);
      write_slot(slot, t, base, v);
    });
    return slot;
  };
  llvm::Value *a = converted(op.operand(0));
  llvm::Value *b = converted(op.operand(1));
  // C starts as acc. When acc is in a slot that only this dot reads (a
  // loop-carried accumulator, acc = dot(a, b, acc)), C is accumulated in
  // that slot: no copy in, and the loop's yield finds the result in its
  // carried slot already. Each element is read before it is written, by
  // the same tile, so the order of every sum is unchanged.
  const ir::Value *acc = op.operand(2);
  const auto &acc_users = liveness.users(acc);
  llvm::Value *c;
  if (is_materialized(acc) && acc_users.size() == 1 && acc_users[0] == &op &&
      liveness.last_use(acc) == current_position) {
    c = state(acc).slot;
  } else {
    c = allocate_slot_for(c_type);
    evaluate_into(acc, c);
  }

  llvm::Type *storage = storage_type(t);
  int vl = static_cast<int>(std::min<int64_t>(
      vector_width(ir::Type::block(ir::Type::scalar(t), {n})), n));
  int64_t nr = std::min<int64_t>(n, 2 * int64_t{vl}); // columns per tile
  int64_t mr = std::min<int64_t>(m, target.vector_bits >= 512 ? 8 : 4);
  int vectors = static_cast<int>(nr / vl);
  llvm::Type *vector = vector_of(storage, vl);
  llvm::Align vector_align(
      std::min<int64_t>(64, int64_t{vl} * llvm_backend::storage_bytes(t)));
  llvm::Align element_align(llvm_backend::storage_bytes(t));

  std::vector<llvm::AllocaInst *> tile;
  for (int64_t i = 0; i < mr * vectors; ++i)
    tile.push_back(entry_variable(vector));

  int64_t tiles_m = m / mr, tiles_n = n / nr;
  counted_loop(i64(batch * tiles_m * tiles_n), [&](llvm::Value *job) {
    llvm::Value *p = builder.CreateUDiv(job, i64(tiles_m * tiles_n));
    llvm::Value *rest = builder.CreateURem(job, i64(tiles_m * tiles_n));
    llvm::Value *i0 =
        builder.CreateMul(builder.CreateUDiv(rest, i64(tiles_n)), i64(mr));
    llvm::Value *j0 =
        builder.CreateMul(builder.CreateURem(rest, i64(tiles_n)), i64(nr));
    auto c_address = [&](int64_t r, int v) {
      llvm::Value *row = builder.CreateAdd(builder.CreateMul(p, i64(m)),
                                           builder.CreateAdd(i0, i64(r)));
      llvm::Value *index =
          builder.CreateAdd(builder.CreateMul(row, i64(n)),
                            builder.CreateAdd(j0, i64(int64_t{v} * vl)));
      return builder.CreateGEP(storage, c, index);
    };
    for (int64_t r = 0; r < mr; ++r)
      for (int v = 0; v < vectors; ++v)
        builder.CreateStore(
            builder.CreateAlignedLoad(vector, c_address(r, v), vector_align),
            tile[r * vectors + v]);
    counted_loop(i64(k), [&](llvm::Value *q) {
      std::vector<llvm::Value *> b_row;
      llvm::Value *b_start = builder.CreateAdd(
          builder.CreateMul(builder.CreateAdd(builder.CreateMul(p, i64(k)), q),
                            i64(n)),
          j0);
      for (int v = 0; v < vectors; ++v)
        b_row.push_back(builder.CreateAlignedLoad(
            vector,
            builder.CreateGEP(storage, b,
                              builder.CreateAdd(b_start, i64(int64_t{v} * vl))),
            vector_align));
      for (int64_t r = 0; r < mr; ++r) {
        llvm::Value *a_index = builder.CreateAdd(
            builder.CreateMul(builder.CreateAdd(builder.CreateMul(p, i64(m)),
                                                builder.CreateAdd(i0, i64(r))),
                              i64(k)),
            q);
        llvm::Value *a_value =
            splat(vl, builder.CreateAlignedLoad(
                          storage, builder.CreateGEP(storage, a, a_index),
                          element_align));
        for (int v = 0; v < vectors; ++v) {
          llvm::AllocaInst *cell = tile[r * vectors + v];
          llvm::Value *sum = llvm_backend::emit_fma(
              builder, t, a_value, b_row[v], builder.CreateLoad(vector, cell));
          builder.CreateStore(sum, cell);
        }
      }
    });
    for (int64_t r = 0; r < mr; ++r)
      for (int v = 0; v < vectors; ++v)
        builder.CreateAlignedStore(
            builder.CreateLoad(vector, tile[r * vectors + v]), c_address(r, v),
            vector_align);
  });
  set_materialized(op.result(), c);
}

} // namespace blocc::cpu
