// Tensor descriptors: checked here, traced into descriptor_load /
// descriptor_store (see blocc/tensor_descriptor.h for the design).
#include "blocc/tensor_descriptor.h"

#include "index_operands.h"
#include "semantics.h"

#include <utility>

namespace blocc {

using detail::user_error;
using ir::OpCode;
using ir::Scalar;
using ir::Type;

/// The one place that fills a TensorDescriptor's private parts.
struct TensorDescriptorAccess {
  static void set_static(TensorDescriptor &d, Shape block_shape,
                         Type pointer_type, const SourceLoc &loc) {
    d.block_shape_ = std::move(block_shape);
    d.pointer_type_ = pointer_type;
    d.loc_ = loc;
  }
  static Tensor &base(TensorDescriptor &d) { return d.base_; }
  static Tensor &shape(TensorDescriptor &d, int i) { return d.shape_[i]; }
  static Tensor &stride(TensorDescriptor &d, int i) { return d.strides_[i]; }
};

namespace {

const char *const kMake = "bl::make_tensor_descriptor";

std::string layout_str(const TensorDescriptor &d) {
  return "block " + detail::shape_str(d.block_shape()) + " of " +
         detail::dtype_name(d.dtype());
}

/// The value of one of a descriptor's tensors, with the scope and
/// "assigned only inside a loop" checks every Tensor read gets.
ir::Value *read(const Tensor &t, const SourceLoc &loc) {
  return Operand(t, loc).value();
}

void check_base(const Operand &base) {
  if (!base.is_value() || !base.value()->type().is_pointer() ||
      base.value()->type().is_block())
    user_error(base.loc(), std::string(kMake) +
                               ": base must be a pointer (such as a "
                               "bl::Ptr<T> kernel argument), got " +
                               base.describe() +
                               "; a tensor descriptor names an array by its "
                               "first element");
}

void check_ranks(const std::vector<Operand> &shape,
                 const std::vector<Operand> &strides, const Shape &block_shape,
                 const SourceLoc &loc) {
  if (block_shape.empty() || block_shape.size() > ir::kMaxRank)
    user_error(loc, std::string(kMake) + ": block_shape " +
                        detail::shape_str(block_shape) + " has " +
                        std::to_string(block_shape.size()) +
                        " dimensions; a tensor descriptor has 1 to " +
                        std::to_string(ir::kMaxRank));
  if (shape.size() != block_shape.size() ||
      strides.size() != block_shape.size())
    user_error(loc, std::string(kMake) + ": rank mismatch: shape has " +
                        std::to_string(shape.size()) + " entries, strides " +
                        std::to_string(strides.size()) + " and block_shape " +
                        std::to_string(block_shape.size()) +
                        "; give each one entry per dimension of the array");
}

/// Power-of-two dimensions, and a last one of at least 16 bytes (Triton's
/// rule, the TMA's smallest row).
void check_block_shape(const Shape &block_shape, Scalar element,
                       const SourceLoc &loc) {
  for (size_t i = 0; i < block_shape.size(); ++i)
    if (!ir::is_power_of_two(block_shape[i]))
      user_error(loc, std::string(kMake) + ": block_shape " +
                          detail::shape_str(block_shape) + " has dimension " +
                          std::to_string(i) + " of size " +
                          std::to_string(block_shape[i]) +
                          ", which is not a power of two; round it up (the "
                          "elements past the array's end read zero)");
  int64_t bytes = (ir::scalar_bits(element) + 7) / 8;
  int64_t row = block_shape.back() * bytes;
  if (row < 16)
    user_error(loc, std::string(kMake) + ": block_shape " +
                        detail::shape_str(block_shape) +
                        " has a last dimension of " +
                        std::to_string(block_shape.back()) + " " +
                        detail::dtype_name(element) + " elements (" +
                        std::to_string(row) +
                        " bytes); a tensor descriptor's rows are at least "
                        "16 bytes, as in Triton (the TMA's smallest): use " +
                        std::to_string(16 / bytes) + " or more");
}

/// True when `x` is the integer 1 when tracing: a literal, or a constant
/// (an integer argument equal to 1 is traced as one), read where it stands
/// or, in a bl::range body, as the loop's tentative argument of a variable
/// that held it before the loop (value_before_loops).
bool is_known_one(const Operand &x, const SourceLoc &loc) {
  if (!x.is_value())
    return x.kind() == Operand::Kind::Int && !x.is_bool() && x.int_value() == 1;
  ir::Value *v =
      detail::TraceContext::current(loc).value_before_loops(x.value());
  const ir::Operation *def = v->defining_op();
  if (!def || def->code() != OpCode::Constant || v->type().is_block())
    return false;
  auto it = def->attributes().find("value");
  return it != def->attributes().end() &&
         std::holds_alternative<int64_t>(it->second) &&
         std::get<int64_t>(it->second) == 1;
}

/// Reported at the make_tensor_descriptor call, as Triton does.
void check_last_stride(const Operand &stride, size_t dim,
                       const SourceLoc &loc) {
  const std::string last = std::string(kMake) + ": strides[" +
                           std::to_string(dim) + "], the last stride";
  if (is_known_one(stride, loc)) {
    // Read in a loop body: 1 on every iteration only if the loop leaves it.
    if (stride.is_value())
      detail::TraceContext::current(loc).require_loop_invariant(
          stride.value(), detail::where(loc) + ": error: " + last +
                              ", is 1 before the bl::range loop around it, "
                              "which changes it; a tensor descriptor's last "
                              "stride must be 1 on every iteration");
    return;
  }
  user_error(
      loc, last + ", must be 1, got " + stride.describe() +
               (stride.is_value() ? " (not known to be 1 when tracing)" : "") +
               "; a tensor descriptor's last dimension is contiguous, as "
               "in Triton (an integer argument equal to 1 counts as 1); "
               "for other layouts use bl::make_block_ptr");
}

void check_valid(const TensorDescriptor &d, const char *what,
                 const SourceLoc &loc) {
  if (!d.valid())
    user_error(loc, std::string(what) +
                        ": this tensor descriptor is empty; assign it from "
                        "bl::make_tensor_descriptor first");
}

/// The operands every access shares: base, extents, strides, and the
/// offsets (as int32), in ir/tensor_descriptor.h's order.
struct AccessOperands {
  ir::Value *base;
  std::vector<ir::Value *> shape, strides, offsets;
};

AccessOperands access_operands(const TensorDescriptor &d,
                               const std::vector<Operand> &offsets,
                               const char *what, const SourceLoc &loc) {
  check_valid(d, what, loc);
  if (offsets.size() != static_cast<size_t>(d.rank()))
    user_error(loc, std::string(what) + ": " + std::to_string(offsets.size()) +
                        " offsets for a tensor descriptor of rank " +
                        std::to_string(d.rank()) +
                        "; give one offset per dimension");
  AccessOperands a{read(d.base(), loc), {}, {}, {}};
  for (int i = 0; i < d.rank(); ++i) {
    a.shape.push_back(read(d.shape(i), loc));
    a.strides.push_back(read(d.stride(i), loc));
    a.offsets.push_back(
        detail::offset_as_int32(offsets[i], {what, "tensor descriptor"},
                                "offsets[" + std::to_string(i) + "]"));
  }
  return a;
}

ir::Builder &builder_at(const SourceLoc &loc) {
  return detail::TraceContext::current(loc).at(loc);
}

} // namespace

TensorDescriptor &TensorDescriptor::operator=(const TensorDescriptor &other) {
  if (this == &other)
    return *this;
  if (valid() && other.valid() &&
      (block_shape_ != other.block_shape_ ||
       pointer_type_ != other.pointer_type_))
    user_error(other.loc_,
               "cannot assign a tensor descriptor of a " + layout_str(other) +
                   " to a variable that holds one of a " + layout_str(*this) +
                   "; a descriptor variable keeps its element type and block "
                   "shape (which is what lets bl::range and bl::if_ carry "
                   "it), so declare a new variable for another tile");
  // Element-wise Tensor assignment rebinds these variables: that is what
  // makes a reassigned descriptor loop-carried.
  base_ = other.base_;
  for (int i = 0; i < ir::kMaxRank; ++i) {
    shape_[i] = other.shape_[i];
    strides_[i] = other.strides_[i];
  }
  block_shape_ = other.block_shape_;
  pointer_type_ = other.pointer_type_;
  loc_ = other.loc_;
  return *this;
}

TensorDescriptor make_tensor_descriptor(Operand base,
                                        const std::vector<Operand> &shape,
                                        const std::vector<Operand> &strides,
                                        const Shape &block_shape) {
  const SourceLoc &loc = base.loc();
  check_base(base);
  check_ranks(shape, strides, block_shape, loc);
  Type pointer_type = base.value()->type();
  check_block_shape(block_shape, pointer_type.pointee(), loc);
  TensorDescriptor d;
  TensorDescriptorAccess::base(d) = Tensor(base.value());
  detail::IndexUse use{kMake, "tensor descriptor"};
  for (size_t i = 0; i < block_shape.size(); ++i) {
    std::string dim = "[" + std::to_string(i) + "]";
    int di = static_cast<int>(i);
    TensorDescriptorAccess::shape(d, di) =
        Tensor(detail::index_as_int64(shape[i], use, "shape" + dim));
    TensorDescriptorAccess::stride(d, di) =
        Tensor(detail::index_as_int64(strides[i], use, "strides" + dim));
  }
  check_last_stride(strides.back(), strides.size() - 1, loc);
  TensorDescriptorAccess::set_static(d, block_shape, pointer_type, loc);
  return d;
}

Tensor load(const TensorDescriptor &desc, const std::vector<Operand> &offsets,
            SourceLoc loc) {
  detail::reject_in_combine("bl::load", loc,
                            "load the values before the reduction or scan "
                            "and pass them in as operands");
  AccessOperands a = access_operands(desc, offsets, "bl::load", loc);
  return Tensor(builder_at(loc).descriptor_load(a.base, a.shape, a.strides,
                                                a.offsets, desc.block_shape()));
}

void store(const TensorDescriptor &desc, const std::vector<Operand> &offsets,
           Operand value, SourceLoc loc) {
  detail::reject_in_combine("bl::store", loc);
  check_valid(desc, "bl::store", loc);
  bool block = value.is_value() && value.value()->type().is_block();
  if (!block || value.value()->type().shape() != desc.block_shape())
    user_error(value.loc(),
               "bl::store: the value is " + value.describe() +
                   " but the tensor descriptor's block is " +
                   detail::shape_str(desc.block_shape()) +
                   "; store a block of exactly that shape (as Triton does; "
                   "bl::full makes one from a scalar)");
  detail::reject_stored_pointers(value);
  AccessOperands a = access_operands(desc, offsets, "bl::store", loc);
  ir::Value *converted =
      detail::convert(value.value(), desc.dtype(), value.loc());
  builder_at(loc).descriptor_store(a.base, a.shape, a.strides, a.offsets,
                                   converted);
}

} // namespace blocc
