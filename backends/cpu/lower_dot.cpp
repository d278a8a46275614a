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

namespace {

/// The lowering of one dot: its operands converted, the accumulator's
/// slot, then the register tiles over C (MR x NR, VL lanes a vector).
class DotLowering {
public:
  DotLowering(KernelLowering &k, const ir::Operation &op)
      : k_(k), b_(k.builder), op_(op), t_(op.result()->type().element()) {
    const ir::Type &a_type = op.operand(0)->type();
    const ir::Type &c_type = op.result()->type();
    if (ir::is_fp8(t_) || t_ == Scalar::I1)
      k.unsupported(op, "a dot needs an accumulator with arithmetic (not " +
                            std::string(ir::scalar_name(t_)) + ")");
    const int rank = c_type.rank();
    batch_ = rank == 3 ? c_type.dim(0) : 1;
    m_ = a_type.dim(rank - 2);
    k_dim_ = a_type.dim(rank - 1);
    n_ = op.operand(1)->type().dim(rank - 1);
  }

  void lower() {
    a_ = converted(op_.operand(0));
    b_slot_ = converted(op_.operand(1));
    c_ = accumulator_slot();
    choose_tile();
    const int64_t tiles_m = m_ / mr_, tiles_n = n_ / nr_;
    k_.counted_loop(k_.i64(batch_ * tiles_m * tiles_n), [&](llvm::Value *job) {
      lower_tile(job, tiles_m, tiles_n);
    });
    k_.set_materialized(op_.result(), c_);
  }

private:
  /// `x` in the accumulator's type, in a slot of scratch.
  llvm::Value *converted(const ir::Value *x) {
    const ir::Type &type = x->type();
    llvm::Value *slot =
        k_.allocate_slot(type.num_elements() * llvm_backend::storage_bytes(t_));
    int vl = k_.vector_width(type.with_element(ir::Type::scalar(t_)));
    k_.chunk_loop(type.num_elements(), vl, [&](llvm::Value *base) {
      Chunk chunk{vl, {}};
      llvm::Value *v = k_.evaluate(chunk, x, Lanes::contiguous(base));
      if (type.element() != t_)
        v = llvm_backend::emit_cast(b_, type.element(), t_, v);
      k_.write_slot(slot, t_, base, v);
    });
    return slot;
  }

  /// C starts as acc. When acc is in a slot that only this dot reads (a
  /// loop-carried accumulator, acc = dot(a, b, acc)), C is accumulated in
  /// that slot: no copy in, and the loop's yield finds the result in its
  /// carried slot already. Each element is read before it is written, by
  /// the same tile, so the order of every sum is unchanged.
  llvm::Value *accumulator_slot() {
    const ir::Value *acc = op_.operand(2);
    const auto &acc_users = k_.liveness.users(acc);
    if (k_.is_materialized(acc) && acc_users.size() == 1 &&
        acc_users[0] == &op_ &&
        k_.liveness.last_use(acc) == k_.current_position)
      return k_.state(acc).slot;
    llvm::Value *c = k_.allocate_slot_for(op_.result()->type());
    k_.evaluate_into(acc, c);
    return c;
  }

  /// The register tile: MR rows of NR columns, NR / VL vectors each, in
  /// variables of the function's entry.
  void choose_tile() {
    storage_ = k_.storage_type(t_);
    vl_ = static_cast<int>(std::min<int64_t>(
        k_.vector_width(ir::Type::block(ir::Type::scalar(t_), {n_})), n_));
    nr_ = std::min<int64_t>(n_, 2 * int64_t{vl_}); // columns per tile
    mr_ = std::min<int64_t>(m_, k_.target.vector_bits >= 512 ? 8 : 4);
    vectors_ = static_cast<int>(nr_ / vl_);
    vector_ = k_.vector_of(storage_, vl_);
    vector_align_ = llvm::Align(
        std::min<int64_t>(64, int64_t{vl_} * llvm_backend::storage_bytes(t_)));
    element_align_ = llvm::Align(llvm_backend::storage_bytes(t_));
    for (int64_t i = 0; i < mr_ * vectors_; ++i)
      tile_.push_back(k_.entry_variable(vector_));
  }

  /// Tile `job` of C: loaded into the tile's variables, accumulated over K,
  /// stored back.
  void lower_tile(llvm::Value *job, int64_t tiles_m, int64_t tiles_n) {
    p_ = b_.CreateUDiv(job, k_.i64(tiles_m * tiles_n));
    llvm::Value *rest = b_.CreateURem(job, k_.i64(tiles_m * tiles_n));
    i0_ = b_.CreateMul(b_.CreateUDiv(rest, k_.i64(tiles_n)), k_.i64(mr_));
    j0_ = b_.CreateMul(b_.CreateURem(rest, k_.i64(tiles_n)), k_.i64(nr_));
    for (int64_t r = 0; r < mr_; ++r)
      for (int v = 0; v < vectors_; ++v)
        b_.CreateStore(
            b_.CreateAlignedLoad(vector_, c_address(r, v), vector_align_),
            tile_[r * vectors_ + v]);
    k_.counted_loop(k_.i64(k_dim_), [&](llvm::Value *q) { accumulate(q); });
    for (int64_t r = 0; r < mr_; ++r)
      for (int v = 0; v < vectors_; ++v)
        b_.CreateAlignedStore(b_.CreateLoad(vector_, tile_[r * vectors_ + v]),
                              c_address(r, v), vector_align_);
  }

  /// Step q of K: row q of B's columns, times each row's A[i][q].
  void accumulate(llvm::Value *q) {
    std::vector<llvm::Value *> b_row;
    llvm::Value *b_start = b_.CreateAdd(
        b_.CreateMul(b_.CreateAdd(b_.CreateMul(p_, k_.i64(k_dim_)), q),
                     k_.i64(n_)),
        j0_);
    for (int v = 0; v < vectors_; ++v)
      b_row.push_back(b_.CreateAlignedLoad(
          vector_,
          b_.CreateGEP(storage_, b_slot_,
                       b_.CreateAdd(b_start, k_.i64(int64_t{v} * vl_))),
          vector_align_));
    for (int64_t r = 0; r < mr_; ++r) {
      llvm::Value *a_index =
          b_.CreateAdd(b_.CreateMul(b_.CreateAdd(b_.CreateMul(p_, k_.i64(m_)),
                                                 b_.CreateAdd(i0_, k_.i64(r))),
                                    k_.i64(k_dim_)),
                       q);
      llvm::Value *a_value = k_.splat(
          vl_,
          b_.CreateAlignedLoad(storage_, b_.CreateGEP(storage_, a_, a_index),
                               element_align_));
      for (int v = 0; v < vectors_; ++v) {
        llvm::AllocaInst *cell = tile_[r * vectors_ + v];
        llvm::Value *sum = llvm_backend::emit_fma(b_, t_, a_value, b_row[v],
                                                  b_.CreateLoad(vector_, cell));
        b_.CreateStore(sum, cell);
      }
    }
  }

  /// The address of vector v of row r of the current tile of C.
  llvm::Value *c_address(int64_t r, int v) {
    llvm::Value *row = b_.CreateAdd(b_.CreateMul(p_, k_.i64(m_)),
                                    b_.CreateAdd(i0_, k_.i64(r)));
    llvm::Value *index =
        b_.CreateAdd(b_.CreateMul(row, k_.i64(n_)),
                     b_.CreateAdd(j0_, k_.i64(int64_t{v} * vl_)));
    return b_.CreateGEP(storage_, c_, index);
  }

  KernelLowering &k_;
  llvm::IRBuilderBase &b_;
  const ir::Operation &op_;
  const Scalar t_;
  int64_t batch_ = 1, m_ = 0, k_dim_ = 0, n_ = 0;
  llvm::Value *a_ = nullptr, *b_slot_ = nullptr, *c_ = nullptr;
  llvm::Type *storage_ = nullptr, *vector_ = nullptr;
  int vl_ = 1, vectors_ = 1;
  int64_t nr_ = 1, mr_ = 1;
  llvm::Align vector_align_, element_align_;
  std::vector<llvm::AllocaInst *> tile_;
  // The current tile: its batch, first row and first column.
  llvm::Value *p_ = nullptr, *i0_ = nullptr, *j0_ = nullptr;
};

} // namespace

void KernelLowering::lower_dot(const ir::Operation &op) {
  DotLowering(*this, op).lower();
}

} // namespace blocc::cpu
