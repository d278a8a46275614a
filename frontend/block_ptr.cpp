// Block pointers, desugared at trace time into blocks of pointers and masks
// (see blocc/block_ptr.h for the design).
#include "blocc/block_ptr.h"

#include "index_operands.h"
#include "semantics.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace blocc {

using detail::user_error;
using ir::OpCode;
using ir::Scalar;
using ir::Type;

/// The one place that fills a BlockPtr's private parts.
struct BlockPtrAccess {
  static BlockPtr &set_static(BlockPtr &p, Shape block_shape,
                              std::vector<int> order, Type pointer_type,
                              const SourceLoc &loc) {
    p.block_shape_ = std::move(block_shape);
    p.order_ = std::move(order);
    p.pointer_type_ = pointer_type;
    p.loc_ = loc;
    return p;
  }
  static Tensor &base(BlockPtr &p) { return p.base_; }
  static Tensor &shape(BlockPtr &p, int i) { return p.shape_[i]; }
  static Tensor &stride(BlockPtr &p, int i) { return p.strides_[i]; }
  static Tensor &offset(BlockPtr &p, int i) { return p.offsets_[i]; }
  static const Type &pointer_type(const BlockPtr &p) { return p.pointer_type_; }
};

namespace {

std::string order_str(const std::vector<int> &order) {
  std::string out = "[";
  for (size_t i = 0; i < order.size(); ++i)
    out += (i ? ", " : "") + std::to_string(order[i]);
  return out + "]";
}

std::string layout_str(const BlockPtr &p) {
  return "block " + detail::shape_str(p.block_shape()) + " of " +
         detail::dtype_name(p.dtype()) + " with order " + order_str(p.order());
}

ir::Value *splat(ir::Value *v, const Shape &shape, const SourceLoc &loc) {
  return detail::broadcast_value(v, shape, loc);
}

ir::Builder &builder_at(const SourceLoc &loc) {
  return detail::TraceContext::current(loc).at(loc);
}

/// Extents, strides and offsets follow index_operands.h's rules, named in
/// messages as a block pointer's.
ir::Value *as_int64(const Operand &x, const std::string &what,
                    const std::string &role) {
  return detail::index_as_int64(x, {what, "block pointer"}, role);
}

/// An offset or advance step: at most 32 bits, then sign-extended to the
/// int64 the address arithmetic uses (as Triton's RewriteTensorPointer
/// does, unsigned offsets included).
ir::Value *offset_as_int64(const Operand &x, const std::string &what,
                           const std::string &role) {
  return detail::convert(
      detail::offset_as_int32(x, {what, "block pointer"}, role), Scalar::I64,
      x.loc());
}

/// The value of one of a block pointer's tensors, with the scope and
/// "assigned only inside a loop" checks every Tensor read gets.
ir::Value *read(const Tensor &t, const SourceLoc &loc) {
  return Operand(t, loc).value();
}

void check_valid(const BlockPtr &p, const char *what, const SourceLoc &loc) {
  if (!p.valid())
    user_error(loc, std::string(what) +
                        ": this block pointer is empty; assign it from "
                        "bl::make_block_ptr first");
}

/// The dimensions to bounds-check, validated and sorted.
std::vector<int> canonical_boundary_check(const std::vector<int> &dims,
                                          int rank, const char *what,
                                          const SourceLoc &loc) {
  std::vector<int> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= rank)
      user_error(loc, std::string(what) + ": boundary_check dimension " +
                          std::to_string(sorted[i]) +
                          " is out of range for a block pointer of rank " +
                          std::to_string(rank) + "; list dimensions 0 to " +
                          std::to_string(rank - 1));
    if (i > 0 && sorted[i] == sorted[i - 1])
      user_error(loc, std::string(what) + ": boundary_check lists dimension " +
                          std::to_string(sorted[i]) +
                          " twice; list each dimension at most once");
  }
  return sorted;
}

struct Access {
  Tensor pointers;
  Tensor mask; // unbound when nothing is checked
};

/// The block of pointers and the bounds mask a load or store through `p`
/// uses: Triton's RewriteTensorPointer lowering, in int64. (Every helper
/// called here positions the one trace builder at `loc` too, so `b` stays
/// valid and located throughout.)
Access desugar(const BlockPtr &p, const std::vector<int> &checked,
               const SourceLoc &loc) {
  const Shape &block = p.block_shape();
  int rank = p.rank();
  ir::Value *base = read(p.base(), loc);
  ir::Builder &b = builder_at(loc);
  // Per dimension: offset_i + arange(0, block[i]) in int64, shaped
  // [1, .., block[i], .., 1] so that it broadcasts over the others.
  std::vector<ir::Value *> index(rank);
  ir::Value *linear = nullptr;
  for (int i = 0; i < rank; ++i) {
    ir::Value *range =
        detail::convert(arange(0, block[i], loc).value(loc), Scalar::I64, loc);
    ir::Value *start = splat(read(p.offset(i), loc), {block[i]}, loc);
    ir::Value *along = b.binary(OpCode::Add, start, range);
    if (rank > 1) {
      Shape expanded(rank, 1);
      expanded[i] = block[i];
      along = b.create_value(OpCode::Reshape, {along},
                             along->type().with_shape(expanded));
    }
    index[i] = along;
    ir::Value *stride =
        splat(read(p.stride(i), loc), along->type().shape(), loc);
    ir::Value *term = splat(b.binary(OpCode::Mul, along, stride), block, loc);
    linear = linear ? b.binary(OpCode::Add, linear, term) : term;
  }
  Access access{
      Tensor(b.create_value(OpCode::AddPtr, {splat(base, block, loc), linear},
                            Type::block(base->type(), block))),
      Tensor()};
  ir::Value *mask = nullptr;
  for (int d : checked) {
    const Shape &s = index[d]->type().shape();
    ir::Value *zero =
        splat(b.int_constant(0, Type::scalar(Scalar::I64)), s, loc);
    ir::Value *extent = splat(read(p.shape(d), loc), s, loc);
    ir::Value *inside = b.binary(OpCode::And, b.cmp("ge", index[d], zero),
                                 b.cmp("lt", index[d], extent));
    inside = splat(inside, block, loc);
    mask = mask ? b.binary(OpCode::And, mask, inside) : inside;
  }
  if (mask)
    access.mask = Tensor(mask);
  return access;
}

/// Whether an access through `p` checking `checked` is a descriptor access
/// (ir/tensor_descriptor.h): every dimension bounds-checked (its zero fill
/// is a checked load's zero padding), a rank descriptors take, numbers
/// (not pointers) for elements, and no cache or eviction hint (descriptor
/// accesses carry none). It stays one
/// in the IR, so that a GPU backend may copy its tile with the Tensor
/// Memory Accelerator; the rewrite every other backend runs builds what
/// desugar() does.
bool is_descriptor_access(const BlockPtr &p, const std::vector<int> &checked,
                          Cache cache, Eviction eviction) {
  return p.rank() <= 3 && checked.size() == static_cast<size_t>(p.rank()) &&
         p.dtype() != Scalar::Ptr && cache == Cache::Default &&
         eviction == Eviction::Default;
}

/// The operands of the descriptor access through `p`: base, extents,
/// strides and offsets (int64, as the block pointer keeps them).
struct DescriptorOperands {
  ir::Value *base;
  std::vector<ir::Value *> shape, strides, offsets;
};

DescriptorOperands descriptor_operands(const BlockPtr &p,
                                       const SourceLoc &loc) {
  DescriptorOperands d{read(p.base(), loc), {}, {}, {}};
  for (int i = 0; i < p.rank(); ++i) {
    d.shape.push_back(read(p.shape(i), loc));
    d.strides.push_back(read(p.stride(i), loc));
    d.offsets.push_back(read(p.offset(i), loc));
  }
  return d;
}

} // namespace

BlockPtr &BlockPtr::operator=(const BlockPtr &other) {
  if (this == &other)
    return *this;
  if (valid() && other.valid() &&
      (block_shape_ != other.block_shape_ || order_ != other.order_ ||
       pointer_type_ != other.pointer_type_))
    user_error(other.loc_,
               "cannot assign a block pointer to a " + layout_str(other) +
                   " to a variable that holds a " + layout_str(*this) +
                   "; a block pointer variable keeps its element type, block "
                   "shape and order (which is what lets bl::range and bl::if_ "
                   "carry it), so declare a new variable for another layout");
  // Element-wise Tensor assignment rebinds these variables: that is what
  // makes a reassigned block pointer loop-carried.
  base_ = other.base_;
  for (int i = 0; i < ir::kMaxRank; ++i) {
    shape_[i] = other.shape_[i];
    strides_[i] = other.strides_[i];
    offsets_[i] = other.offsets_[i];
  }
  block_shape_ = other.block_shape_;
  order_ = other.order_;
  pointer_type_ = other.pointer_type_;
  loc_ = other.loc_;
  return *this;
}

BlockPtr make_block_ptr(Operand base, const std::vector<Operand> &shape,
                        const std::vector<Operand> &strides,
                        const std::vector<Operand> &offsets,
                        const Shape &block_shape,
                        const std::vector<int> &order) {
  const std::string what = "bl::make_block_ptr";
  const SourceLoc &loc = base.loc();
  if (!base.is_value() || !base.value()->type().is_pointer() ||
      base.value()->type().is_block())
    user_error(loc, what +
                        ": base must be a pointer (such as a bl::Ptr<T> "
                        "kernel argument), got " +
                        base.describe() +
                        "; a block of pointers already addresses its "
                        "elements: load it with bl::load(pointers, mask)");
  if (block_shape.empty() || block_shape.size() > ir::kMaxRank)
    user_error(loc, what + ": block_shape " + detail::shape_str(block_shape) +
                        " has " + std::to_string(block_shape.size()) +
                        " dimensions; a block pointer has 1 to " +
                        std::to_string(ir::kMaxRank));
  size_t rank = block_shape.size();
  if (shape.size() != rank || strides.size() != rank ||
      offsets.size() != rank || order.size() != rank)
    user_error(loc, what + ": rank mismatch: shape has " +
                        std::to_string(shape.size()) + " entries, strides " +
                        std::to_string(strides.size()) + ", offsets " +
                        std::to_string(offsets.size()) + ", block_shape " +
                        std::to_string(rank) + " and order " +
                        std::to_string(order.size()) +
                        "; give each one entry per dimension of the block");
  for (size_t i = 0; i < rank; ++i)
    if (!ir::is_power_of_two(block_shape[i]))
      user_error(loc, what + ": block_shape " + detail::shape_str(block_shape) +
                          " has dimension " + std::to_string(i) + " of size " +
                          std::to_string(block_shape[i]) +
                          ", which is not a power of two; round it up and "
                          "let boundary_check mask the extra elements");
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < rank; ++i)
    if (sorted[i] != static_cast<int>(i))
      user_error(loc, what + ": order " + order_str(order) +
                          " is not a permutation of the dimensions 0 to " +
                          std::to_string(rank - 1) +
                          "; list each dimension once, fastest-varying "
                          "first ({1, 0} for a row-major matrix)");

  BlockPtr p;
  BlockPtrAccess::base(p) = Tensor(base.value());
  for (size_t i = 0; i < rank; ++i) {
    std::string dim = "[" + std::to_string(i) + "]";
    int d = static_cast<int>(i);
    BlockPtrAccess::shape(p, d) =
        Tensor(as_int64(shape[i], what, "shape" + dim));
    BlockPtrAccess::stride(p, d) =
        Tensor(as_int64(strides[i], what, "strides" + dim));
    BlockPtrAccess::offset(p, d) =
        Tensor(offset_as_int64(offsets[i], what, "offsets" + dim));
  }
  return BlockPtrAccess::set_static(p, block_shape, order, base.value()->type(),
                                    loc);
}

BlockPtr advance(const BlockPtr &ptr, const std::vector<Operand> &offsets,
                 SourceLoc loc) {
  const std::string what = "bl::advance";
  check_valid(ptr, "bl::advance", loc);
  if (offsets.size() != static_cast<size_t>(ptr.rank()))
    user_error(loc, what +
                        ": rank mismatch: " + std::to_string(offsets.size()) +
                        " offsets for a block pointer of rank " +
                        std::to_string(ptr.rank()) +
                        "; give one offset per dimension (0 to stay)");
  BlockPtr next(ptr);
  for (int i = 0; i < ptr.rank(); ++i) {
    // A literal 0 keeps the offset's value, so that a loop advancing along
    // one dimension carries only that dimension's offset.
    if (!offsets[i].is_value() && !offsets[i].is_bool() &&
        offsets[i].kind() == Operand::Kind::Int && offsets[i].int_value() == 0)
      continue;
    ir::Value *step =
        offset_as_int64(offsets[i], what, "offsets[" + std::to_string(i) + "]");
    ir::Value *now = read(ptr.offset(i), loc);
    BlockPtrAccess::offset(next, i) =
        Tensor(builder_at(loc).binary(OpCode::Add, now, step));
  }
  return BlockPtrAccess::set_static(next, ptr.block_shape(), ptr.order(),
                                    BlockPtrAccess::pointer_type(ptr), loc);
}

Tensor load(const BlockPtr &ptr, const std::vector<int> &boundary_check,
            Padding padding, LoadOptions options, SourceLoc loc) {
  check_valid(ptr, "bl::load", loc);
  if (padding == Padding::NaN && !ir::is_float(ptr.dtype()))
    user_error(loc, "bl::load: Padding::NaN needs a floating-point block "
                    "pointer, got one to " +
                        detail::dtype_name(ptr.dtype()) +
                        "; use Padding::Zero for integers");
  std::vector<int> checked =
      canonical_boundary_check(boundary_check, ptr.rank(), "bl::load", loc);
  if (padding == Padding::Zero && !options.is_volatile &&
      is_descriptor_access(ptr, checked, options.cache, options.eviction)) {
    detail::reject_in_combine("bl::load", loc,
                              "load the values before the reduction or scan "
                              "and pass them in as operands");
    DescriptorOperands d = descriptor_operands(ptr, loc);
    return Tensor(builder_at(loc).descriptor_load(
        d.base, d.shape, d.strides, d.offsets, ptr.block_shape()));
  }
  Access access = desugar(ptr, checked, loc);
  if (!access.mask.bound())
    return load(Operand(access.pointers, loc), options);
  if (padding == Padding::NaN)
    return load(Operand(access.pointers, loc), Operand(access.mask, loc),
                Operand(std::numeric_limits<double>::quiet_NaN(), loc),
                options);
  return load(Operand(access.pointers, loc), Operand(access.mask, loc),
              options);
}

void store(const BlockPtr &ptr, Operand value,
           const std::vector<int> &boundary_check, StoreOptions options,
           SourceLoc loc) {
  check_valid(ptr, "bl::store", loc);
  if (value.is_value() && value.value()->type().is_block() &&
      value.value()->type().shape() != ptr.block_shape())
    user_error(value.loc(),
               "bl::store: the value has shape " +
                   detail::shape_str(value.value()->type().shape()) +
                   " but the block pointer's block is " +
                   detail::shape_str(ptr.block_shape()) +
                   "; store a value of the block's shape (or a scalar)");
  std::vector<int> checked =
      canonical_boundary_check(boundary_check, ptr.rank(), "bl::store", loc);
  if (is_descriptor_access(ptr, checked, options.cache, options.eviction)) {
    detail::reject_in_combine("bl::store", loc);
    detail::reject_stored_pointers(value);
    DescriptorOperands d = descriptor_operands(ptr, loc);
    ir::Value *stored = detail::broadcast_value(
        detail::as_dtype(value, ptr.dtype()), ptr.block_shape(), value.loc());
    builder_at(loc).descriptor_store(d.base, d.shape, d.strides, d.offsets,
                                     stored);
    return;
  }
  Access access = desugar(ptr, checked, loc);
  if (!access.mask.bound())
    store(Operand(access.pointers, loc), value, options);
  else
    store(Operand(access.pointers, loc), value, Operand(access.mask, loc),
          options);
}

} // namespace blocc
