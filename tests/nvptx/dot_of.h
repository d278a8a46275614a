// A function holding one dot of constant blocks, for the tests of which
// instruction and layouts a dot takes (mma_layouts_test, wgmma_layouts_test).
#pragma once

#include "ir/builder.h"

#include <string>

namespace blocc::gpu_testing {

/// A dot of an m x k block of `a` by a k x n block of `b` into `out`,
/// with input_precision `precision` where not empty.
struct DotOf {
  ir::Function f{"dot"};
  ir::Operation *dot = nullptr;
  DotOf(ir::Scalar a, ir::Scalar b, ir::Scalar out, int64_t m, int64_t n,
        int64_t k, const std::string &precision = "") {
    using namespace ir;
    Builder builder(&f.body());
    auto constant = [&](Scalar s, int64_t rows, int64_t cols) {
      Type type = Type::block(Type::scalar(s), {rows, cols});
      return is_integer(s) ? builder.int_constant(1, type)
                           : builder.float_constant(1.0, type);
    };
    Value *x = constant(a, m, k), *y = constant(b, k, n);
    Value *c = constant(out, m, n);
    Attributes attrs;
    if (!precision.empty())
      attrs["input_precision"] = precision;
    dot = builder.create_value(OpCode::Dot, {x, y, c}, c->type(), attrs)
              ->defining_op();
  }
};

} // namespace blocc::gpu_testing
