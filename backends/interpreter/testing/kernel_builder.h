// Builds kernels by hand for the interpreter's tests (and for any test that
// wants IR without the frontend): thin helpers over ir::Builder that fill in
// result types the way the frontend would. Header-only; not part of the
// library's API.
#pragma once

#include "ir/builder.h"

#include <memory>
#include <string>
#include <vector>

namespace blocc::interp::testing {

using ir::OpCode;
using ir::Scalar;
using ir::Type;
using ir::Value;
using Shape = std::vector<int64_t>;

inline Type scalar_type(Scalar s) { return Type::scalar(s); }
inline Type block_type(Scalar s, const Shape &shape) {
  return Type::block(Type::scalar(s), shape);
}
inline Type pointer_type(Scalar pointee) { return Type::pointer(pointee); }

class KernelBuilder {
public:
  /// Ops get the location `file`:1 until at_line() moves it.
  explicit KernelBuilder(std::string name, std::string file = "kernel_test.cpp")
      : function_(std::make_unique<ir::Function>(std::move(name))),
        file_(std::move(file)) {
    builder_.set_insertion_point_to_end(&function_->body());
    at_line(1);
  }

  ir::Builder &builder() { return builder_; }
  ir::Function &function() { return *function_; }

  /// Ops built from now on carry this source line.
  KernelBuilder &at_line(int line) {
    builder_.set_location(ir::Location{file_, line});
    return *this;
  }

  Value *arg(Type t, const std::string &name) {
    return function_->add_argument(t, ir::ArgumentInfo{name, 1});
  }
  Value *ptr_arg(Scalar pointee, const std::string &name) {
    return arg(pointer_type(pointee), name);
  }

  // ------------------------------------------------------------ creation
  Value *int_const(int64_t v, Scalar s, const Shape &shape = {}) {
    return builder_.int_constant(v, Type::block(Type::scalar(s), shape));
  }
  Value *float_const(double v, Scalar s, const Shape &shape = {}) {
    return builder_.float_constant(v, Type::block(Type::scalar(s), shape));
  }
  Value *program_id(int axis) {
    return builder_.create_value(OpCode::ProgramId, {},
                                 scalar_type(Scalar::I32),
                                 {{"axis", int64_t{axis}}});
  }
  Value *num_programs(int axis) {
    return builder_.create_value(OpCode::NumPrograms, {},
                                 scalar_type(Scalar::I32),
                                 {{"axis", int64_t{axis}}});
  }
  Value *arange(int64_t start, int64_t end) {
    return builder_.create_value(OpCode::Arange, {},
                                 block_type(Scalar::I32, {end - start}),
                                 {{"start", start}, {"end", end}});
  }

  // --------------------------------------------------------------- shape
  Value *splat(Value *scalar, const Shape &shape) {
    return builder_.splat(scalar, shape);
  }
  Value *broadcast(Value *x, const Shape &shape) {
    return builder_.create_value(OpCode::Broadcast, {x},
                                 x->type().with_shape(shape));
  }
  Value *expand_dims(Value *x, int axis) {
    Shape s = x->type().shape();
    s.insert(s.begin() + axis, 1);
    return builder_.create_value(OpCode::ExpandDims, {x},
                                 x->type().with_shape(s),
                                 {{"axis", int64_t{axis}}});
  }
  Value *reshape(Value *x, const Shape &shape) {
    return builder_.create_value(OpCode::Reshape, {x},
                                 x->type().with_shape(shape));
  }
  Value *permute(Value *x, const std::vector<int64_t> &order) {
    Shape s;
    for (int64_t d : order)
      s.push_back(x->type().dim(static_cast<int>(d)));
    return builder_.create_value(OpCode::Permute, {x}, x->type().with_shape(s),
                                 {{"order", order}});
  }
  Value *join(Value *a, Value *b) {
    Shape s = a->type().shape();
    s.push_back(2);
    return builder_.create_value(OpCode::Join, {a, b}, a->type().with_shape(s));
  }
  std::pair<Value *, Value *> split(Value *x) {
    Shape s = x->type().shape();
    s.pop_back();
    Type t = x->type().with_shape(s);
    ir::Operation *op = builder_.create(OpCode::Split, {x}, {t, t});
    return {op->result(0), op->result(1)};
  }
  Value *cat(Value *a, Value *b, int axis = 0) {
    Shape s = a->type().shape();
    s[axis] += b->type().dim(axis);
    return builder_.create_value(OpCode::Cat, {a, b}, a->type().with_shape(s),
                                 {{"axis", int64_t{axis}}});
  }

  // ---------------------------------------------------------- arithmetic
  Value *binary(OpCode code, Value *a, Value *b) {
    return builder_.binary(code, a, b);
  }
  Value *unary(OpCode code, Value *a) { return builder_.unary(code, a); }
  Value *cmp(const std::string &predicate, Value *a, Value *b) {
    return builder_.cmp(predicate, a, b);
  }
  Value *select(Value *c, Value *a, Value *b) {
    return builder_.create_value(OpCode::Select, {c, a, b}, a->type());
  }
  Value *fma(Value *a, Value *b, Value *c) {
    return builder_.create_value(OpCode::Fma, {a, b, c}, a->type());
  }
  Value *cast(Value *x, Scalar to) {
    return builder_.create_value(OpCode::Cast, {x},
                                 x->type().with_element(scalar_type(to)));
  }
  Value *bitcast(Value *x, Scalar to) {
    return builder_.create_value(OpCode::Bitcast, {x},
                                 x->type().with_element(scalar_type(to)));
  }
  Value *ptr_to_int(Value *p) {
    return builder_.create_value(
        OpCode::PtrToInt, {p},
        p->type().with_element(scalar_type(Scalar::I64)));
  }
  Value *int_to_ptr(Value *x, Scalar pointee) {
    return builder_.create_value(OpCode::IntToPtr, {x},
                                 x->type().with_element(pointer_type(pointee)));
  }
  Value *addptr(Value *p, Value *offset) {
    Type t = p->type();
    if (offset->type().is_block() && !t.is_block())
      t = t.with_shape(offset->type().shape());
    return builder_.create_value(OpCode::AddPtr, {p, offset}, t);
  }
  /// base + offsets, with base splatted to the offsets' shape.
  Value *pointers(Value *base, Value *offsets) {
    return addptr(splat(base, offsets->type().shape()), offsets);
  }

  // -------------------------------------------------------------- memory
  Value *load(Value *p, Value *mask = nullptr, Value *other = nullptr) {
    std::vector<Value *> operands{p};
    if (mask)
      operands.push_back(mask);
    if (other)
      operands.push_back(other);
    Type t = p->type().with_element(scalar_type(p->type().pointee()));
    return builder_.create_value(OpCode::Load, operands, t);
  }
  void store(Value *p, Value *v, Value *mask = nullptr) {
    std::vector<Value *> operands{p, v};
    if (mask)
      operands.push_back(mask);
    builder_.create(OpCode::Store, operands, {});
  }
  Value *atomic_rmw(const std::string &kind, Value *p, Value *v,
                    Value *mask = nullptr) {
    std::vector<Value *> operands{p, v};
    if (mask)
      operands.push_back(mask);
    return builder_.create_value(OpCode::AtomicRmw, operands, v->type(),
                                 {{"kind", kind},
                                  {"sem", std::string("acq_rel")},
                                  {"scope", std::string("gpu")}});
  }
  Value *atomic_cas(Value *p, Value *compare, Value *v) {
    return builder_.create_value(OpCode::AtomicCas, {p, compare, v}, v->type());
  }

  // ------------------------------------------------------------ regions
  /// Runs `fill` with the builder inside `block`, then restores it.
  template <typename F> void inside(ir::Block *block, F fill) {
    ir::Block *saved_block = builder_.block();
    ir::Block::iterator saved_point = builder_.point();
    builder_.set_insertion_point_to_end(block);
    fill();
    builder_.restore(saved_block, saved_point);
  }
  void yield(const std::vector<Value *> &values) {
    builder_.create(OpCode::Yield, values, {});
  }

  /// A reduce (or scan, with `scan`) over `xs` along `axis` whose combine
  /// region `combine` builds from (lhs..., rhs...) scalars.
  template <typename F>
  std::vector<Value *> reduce(const std::vector<Value *> &xs, int axis,
                              F combine, bool scan = false,
                              bool reverse = false) {
    std::vector<Type> results;
    for (Value *x : xs) {
      Shape s = x->type().shape();
      if (!scan)
        s.erase(s.begin() + axis);
      results.push_back(x->type().with_shape(s));
    }
    ir::Attributes attrs{{"axis", int64_t{axis}}};
    if (scan)
      attrs["reverse"] = int64_t{reverse};
    ir::Operation *op = builder_.create(scan ? OpCode::Scan : OpCode::Reduce,
                                        xs, results, attrs);
    ir::Block *region = op->add_region();
    std::vector<Value *> lhs, rhs;
    for (Value *x : xs)
      lhs.push_back(region->add_argument(x->type().element_type()));
    for (Value *x : xs)
      rhs.push_back(region->add_argument(x->type().element_type()));
    inside(region, [&] { yield(combine(lhs, rhs)); });
    return op->results();
  }
  Value *sum(Value *x, int axis) {
    return reduce({x}, axis, [&](auto &l, auto &r) {
      return std::vector<Value *>{binary(OpCode::Add, l[0], r[0])};
    })[0];
  }

  Value *dot(Value *a, Value *b, Value *acc) {
    return builder_.create_value(OpCode::Dot, {a, b, acc}, acc->type(),
                                 {{"input_precision", std::string("ieee")}});
  }

  /// Ends the body with a return and hands the function over.
  const ir::Function &finish() {
    builder_.create(OpCode::Return, {}, {});
    return *function_;
  }

private:
  std::unique_ptr<ir::Function> function_;
  std::string file_;
  ir::Builder builder_;
};

} // namespace blocc::interp::testing
