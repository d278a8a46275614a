// Loads and stores through pointers and blocks of pointers, with masks.
#include "semantics.h"

namespace blocc {

using detail::user_error;
using ir::OpCode;
using ir::Scalar;
using ir::Type;

namespace {

const char *cache_name(Cache c) {
  switch (c) {
  case Cache::Default:
    return "";
  case Cache::CacheAll:
    return "ca";
  case Cache::CacheGlobal:
    return "cg";
  case Cache::Streaming:
    return "cs";
  }
  return "";
}

const char *eviction_name(Eviction e) {
  switch (e) {
  case Eviction::Default:
    return "";
  case Eviction::EvictFirst:
    return "evict_first";
  case Eviction::EvictLast:
    return "evict_last";
  }
  return "";
}

void add_hints(ir::Attributes &attrs, Cache cache, Eviction eviction) {
  if (cache != Cache::Default)
    attrs["cache"] = std::string(cache_name(cache));
  if (eviction != Eviction::Default)
    attrs["eviction"] = std::string(eviction_name(eviction));
}

const Type &pointer_type(const Operand &ptr, const char *what) {
  if (!ptr.is_value() || !ptr.value()->type().is_pointer())
    user_error(ptr.loc(), std::string(what) +
                              " needs a pointer or a block of pointers as its "
                              "first argument, got " +
                              ptr.describe());
  return ptr.value()->type();
}

void check_mask(const Operand &mask, const char *what) {
  if (detail::natural_dtype(mask) != Scalar::I1)
    user_error(mask.loc(),
               std::string(what) + ": the mask must be boolean (i1), got " +
                   mask.describe() +
                   "; build it with a comparison such as offsets < n");
}

/// The shape an access has: the pointer's, which the mask (and the value
/// or `other`) must broadcast to. A mask larger than the pointer block would
/// silently duplicate accesses, so it is an error, as it is in Triton.
Shape access_shape(const Operand &ptr,
                   const std::vector<const Operand *> &others,
                   const char *what) {
  Shape shape = ptr.value()->type().shape();
  for (const Operand *o : others) {
    if (!o->is_value())
      continue;
    Shape s = o->value()->type().shape();
    Shape joint = detail::broadcast_shapes(shape, s, o->loc(), what);
    if (joint != shape)
      user_error(o->loc(), std::string(what) + ": " + o->describe() +
                               " does not fit the pointer block " +
                               ptr.value()->type().str() +
                               "; masks and values must have the pointer's "
                               "shape (or broadcast to it)");
  }
  return shape;
}

Tensor load_impl(const Operand &ptr, const Operand *mask, const Operand *other,
                 const LoadOptions &options) {
  detail::reject_in_combine("bl::load", ptr.loc(),
                            "load the values before the reduction or scan "
                            "and pass them in as operands");
  const Type &pt = pointer_type(ptr, "bl::load");
  if (mask)
    check_mask(*mask, "bl::load");
  std::vector<const Operand *> extra;
  if (mask)
    extra.push_back(mask);
  if (other)
    extra.push_back(other);
  Shape shape = access_shape(ptr, extra, "bl::load");
  std::vector<ir::Value *> operands{ptr.value()};
  if (mask)
    operands.push_back(detail::broadcast_value(
        detail::as_dtype(*mask, Scalar::I1), shape, ptr.loc()));
  if (other)
    operands.push_back(detail::broadcast_value(
        detail::as_dtype(*other, pt.pointee()), shape, ptr.loc()));
  ir::Attributes attrs;
  add_hints(attrs, options.cache, options.eviction);
  if (options.is_volatile)
    attrs["volatile"] = int64_t{1};
  auto &b = detail::TraceContext::current(ptr.loc()).at(ptr.loc());
  Type result = Type::block(Type::scalar(pt.pointee()), shape);
  return Tensor(b.create_value(OpCode::Load, operands, result, attrs));
}

void store_impl(const Operand &ptr, const Operand &value, const Operand *mask,
                const StoreOptions &options) {
  detail::reject_in_combine("bl::store", ptr.loc());
  const Type &pt = pointer_type(ptr, "bl::store");
  detail::reject_stored_pointers(value);
  if (mask)
    check_mask(*mask, "bl::store");
  std::vector<const Operand *> extra{&value};
  if (mask)
    extra.push_back(mask);
  Shape shape = access_shape(ptr, extra, "bl::store");
  std::vector<ir::Value *> operands{
      ptr.value(),
      detail::broadcast_value(detail::as_dtype(value, pt.pointee()), shape,
                              ptr.loc())};
  if (mask)
    operands.push_back(detail::broadcast_value(
        detail::as_dtype(*mask, Scalar::I1), shape, ptr.loc()));
  ir::Attributes attrs;
  add_hints(attrs, options.cache, options.eviction);
  auto &b = detail::TraceContext::current(ptr.loc()).at(ptr.loc());
  b.create(OpCode::Store, operands, {}, attrs);
}

} // namespace

void detail::reject_stored_pointers(const Operand &value) {
  if (value.is_value() && value.value()->type().is_pointer())
    user_error(value.loc(), "bl::store: storing pointers is not supported; "
                            "store bl::cast(pointer, bl::int64) instead");
}

Tensor load(Operand pointer, LoadOptions options) {
  return load_impl(pointer, nullptr, nullptr, options);
}
Tensor load(Operand pointer, Operand mask, LoadOptions options) {
  return load_impl(pointer, &mask, nullptr, options);
}
Tensor load(Operand pointer, Operand mask, Operand other, LoadOptions options) {
  return load_impl(pointer, &mask, &other, options);
}
void store(Operand pointer, Operand value, StoreOptions options) {
  store_impl(pointer, value, nullptr, options);
}
void store(Operand pointer, Operand value, Operand mask, StoreOptions options) {
  store_impl(pointer, value, &mask, options);
}

} // namespace blocc
