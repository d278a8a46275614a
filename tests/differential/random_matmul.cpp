// The matmul loop (generation 4): a program's BM x BN tile of A [M, K]
// times B [K, N], accumulated over K in steps of BK by a `for` loop whose
// last step has a K tail. Each step loads a [BM, BK] tile of A and a
// [BK, BN] tile of B under masks from two sources (rows or columns in
// bounds, and k < K) with zeros in A's masked lanes, and adds their dot to
// the carried accumulator. A and B are row- or column-major, and the
// addresses are either recomputed from the induction variable or carried
// as blocks of pointers advanced by a step each iteration, as tutorial
// matmuls write them.
#include "generator_internal.h"

#include <algorithm>

namespace blocc::differential::detail {

namespace {

/// K for steps of `bk`: at most 64 steps (the facts' trip limit), with a
/// tail (not a multiple of bk) more often than not.
int64_t choose_k(Random &rng, int64_t bk) {
  int64_t steps = rng.pick(std::vector<int64_t>{1, 1, 2, 2, 3, 5});
  int64_t k = steps * bk;
  switch (rng.below(4)) {
  case 0:
    return k; // no tail
  case 1:
    return std::max<int64_t>(1, k - 1);
  case 2:
    return k + 1;
  default:
    return rng.between(1, k);
  }
}

} // namespace

Value *KernelGenerator::tile_offsets(Value *rows, Value *cols,
                                     Value *row_stride, Value *col_stride) {
  Shape shape = {rows->type().dim(0), cols->type().dim(0)};
  Type rows_type = rows->type(), cols_type = cols->type();
  Value *r =
      make(OpCode::Mul, {rows, make(OpCode::Splat, {row_stride}, rows_type)},
           rows_type);
  Value *c =
      make(OpCode::Mul, {cols, make(OpCode::Splat, {col_stride}, cols_type)},
           cols_type);
  if (!r || !c)
    return nullptr;
  Type tile = type_of(index_type_, shape);
  return make(OpCode::Add,
              {spread_along(r, 0, shape), spread_along(c, 1, shape)}, tile);
}

bool KernelGenerator::k_loop_dot_action() {
  if (layout_.rank != 2 || depth_ != 0)
    return false;
  static const std::vector<Scalar> dtypes = {
      Scalar::F16, Scalar::F16, Scalar::BF16, Scalar::BF16, Scalar::F32,
      Scalar::F32, Scalar::F64, Scalar::I8,   Scalar::I16,  Scalar::I32};
  int64_t bm = layout_.block[0], bn = layout_.block[1];
  // A tensor-core tile (generation 5) mostly multiplies halves in steps
  // the MMAs take whole.
  const bool mma_tile = options_.generation >= 5 && bm % 16 == 0 &&
                        bn % 8 == 0 && rng_.percent(70);
  // Generation 6 adds int8 tiles, which tensor cores take 32 along K.
  std::vector<Scalar> mma_dtypes = {Scalar::F16, Scalar::BF16};
  if (options_.generation >= 6)
    mma_dtypes.push_back(Scalar::I8);
  Scalar d = mma_tile ? rng_.pick(mma_dtypes) : rng_.pick(dtypes);
  Scalar acc_type = dot_accumulator(d);
  const bool bytes = d == Scalar::I8;
  int64_t bk =
      mma_tile ? rng_.pick(bytes ? std::vector<int64_t>{32, 64}
                                 : std::vector<int64_t>{16, 32})
               : rng_.pick(std::vector<int64_t>{1, 2, 4, 8, 16, 16, 32, 32});
  const int64_t most = mma_tile ? 1024 : 256;
  while (bk > 1 && (bm * bk > most || bk * bn > most))
    bk /= 2;
  int64_t k = choose_k(rng_, bk);
  Type index = Type::scalar(index_type_);
  Value *k_size =
      int_argument("K" + std::to_string(scalars_++), index_type_, k);
  Value *m_size = sizes_[0], *n_size = sizes_[1];
  Value *one = constant(index_type_, {}, 1);

  // A [M, K] and B [K, N], each row- or column-major; their values never
  // infinite, which a dot does not admit.
  auto matrix = [&](int64_t elements) {
    BufferSpec spec;
    spec.dtype = d;
    spec.elements = elements;
    spec.values = input_values(d);
    spec.values.special = false;
    return buffer_argument("x", spec);
  };
  Value *a_base = matrix(layout_.size[0] * k);
  Value *b_base = matrix(k * layout_.size[1]);
  bool a_rows = rng_.percent(60), b_rows = rng_.percent(60);
  Value *a_row_stride = a_rows ? k_size : one;
  Value *a_k_stride = a_rows ? one : m_size;
  Value *b_k_stride = b_rows ? n_size : one;
  Value *b_col_stride = b_rows ? one : k_size;

  Value *lanes = make(OpCode::Arange, {}, type_of(Scalar::I32, {bk}),
                      {{"start", int64_t{0}}, {"end", bk}});
  if (index_type_ != Scalar::I32)
    lanes = make(OpCode::Cast, {lanes}, type_of(index_type_, {bk}));
  Shape a_shape = {bm, bk}, b_shape = {bk, bn}, acc_shape = {bm, bn};
  Type a_pointers = Type::block(Type::pointer(d), a_shape);
  Type b_pointers = Type::block(Type::pointer(d), b_shape);
  auto addresses = [&](Value *base, Type pointers, Value *offsets) {
    return make(OpCode::AddPtr,
                {make(OpCode::Splat, {base}, pointers), offsets}, pointers);
  };
  // Carried pointers start at k = 0 and move by BK along k each step.
  bool carry_pointers = rng_.percent(50);
  std::vector<Value *> operands = {constant(index_type_, {}, 0), k_size,
                                   constant(index_type_, {}, double(bk))};
  Value *acc_init = rng_.percent(50) ? constant(acc_type, acc_shape, 0)
                                     : operand(acc_type, acc_shape, Need::Any);
  operands.push_back(acc_init);
  if (carry_pointers) {
    operands.push_back(
        addresses(a_base, a_pointers,
                  tile_offsets(rows_, lanes, a_row_stride, a_k_stride)));
    operands.push_back(
        addresses(b_base, b_pointers,
                  tile_offsets(lanes, cols_, b_k_stride, b_col_stride)));
  }
  for (Value *v : operands)
    if (!v || !lanes)
      return false;
  std::vector<Type> types;
  for (size_t i = 3; i < operands.size(); ++i)
    types.push_back(operands[i]->type());
  ir::Operation *op = b_.create(OpCode::For, operands, types);
  ir::Block *body = op->add_region();
  Value *iv = body->add_argument(index);
  facts_.set(iv, ValueFacts::range(0, double(std::max<int64_t>(0, k - 1))));
  std::vector<Value *> args;
  for (size_t i = 0; i < types.size(); ++i) {
    args.push_back(body->add_argument(types[i]));
    facts_.set(args.back(), facts(operands[3 + i]));
  }
  bool built = false;
  inside(body, [&] {
    Value *ks =
        make(OpCode::Add, {make(OpCode::Splat, {iv}, lanes->type()), lanes},
             lanes->type());
    Value *k_in = cmp("lt", ks, make(OpCode::Splat, {k_size}, lanes->type()));
    if (!ks || !k_in)
      return;
    Value *a_mask = make(
        OpCode::And,
        {spread_along(row_mask_, 0, a_shape), spread_along(k_in, 1, a_shape)},
        type_of(Scalar::I1, a_shape));
    Value *b_mask = make(
        OpCode::And,
        {spread_along(k_in, 0, b_shape), spread_along(col_mask_, 1, b_shape)},
        type_of(Scalar::I1, b_shape));
    Value *a_at, *b_at;
    if (carry_pointers) {
      a_at = args[1];
      b_at = args[2];
    } else {
      a_at = addresses(a_base, a_pointers,
                       tile_offsets(rows_, ks, a_row_stride, a_k_stride));
      b_at = addresses(b_base, b_pointers,
                       tile_offsets(ks, cols_, b_k_stride, b_col_stride));
    }
    // A's masked lanes read 0, so that the K tail adds nothing whatever
    // B's hold: B's read 0, 1 or nothing given (0 as well).
    Value *a = make(OpCode::Load, {a_at, a_mask, constant(d, a_shape, 0)},
                    type_of(d, a_shape));
    std::vector<Value *> b_operands = {b_at, b_mask};
    if (rng_.percent(60))
      b_operands.push_back(constant(d, b_shape, rng_.percent(50) ? 0 : 1));
    Value *b = make(OpCode::Load, b_operands, type_of(d, b_shape));
    Value *sum =
        make(OpCode::Dot, {a, b, args[0]}, type_of(acc_type, acc_shape),
             {{"input_precision", std::string("ieee")}});
    if (!sum)
      return;
    std::vector<Value *> next = {sum};
    if (carry_pointers) {
      auto step = [&](Value *at, Value *stride) {
        Value *by =
            make(OpCode::Mul, {stride, constant(index_type_, {}, double(bk))},
                 index);
        Type offsets = at->type().with_element(Type::scalar(index_type_));
        return make(OpCode::AddPtr, {at, make(OpCode::Splat, {by}, offsets)},
                    at->type());
      };
      next.push_back(step(args[1], a_k_stride));
      next.push_back(step(args[2], b_k_stride));
    }
    for (Value *v : next)
      if (!v)
        return;
    b_.create(OpCode::Yield, next, {});
    built = true;
  });
  if (!built) {
    op->parent_block()->erase(op);
    return false;
  }
  if (!admit(op))
    return false;
  add(op->result(0));
  return true;
}

} // namespace blocc::differential::detail
