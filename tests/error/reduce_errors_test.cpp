// Mistakes in reductions and scans: axes out of range, combine functions
// that return the wrong number, shape or type of values, operations that
// need integers or blocks, values that leak out of a combine function, and
// combine functions that touch memory, print or assert.
#include "error/support.h"

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

// Each kernel takes (x, out) and makes one mistake.

TEST(ReduceErrors, SumAxisOutOfRange) {
  static int line;
  auto k = bl::kernel("sum_axis", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto tile = bl::zeros({4, 8}, bl::float32);
    auto s = (line = __LINE__, bl::sum(tile, 2));
    bl::store(out + bl::arange(0, 4), s);
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::sum: axis 2 is out of range for "
                             "tensor<4x8xf32> of rank 2; use an axis from -2 "
                             "to 1, or none to reduce the whole block"));
}

TEST(ReduceErrors, NegativeAxisOutOfRange) {
  static int line;
  auto k = bl::kernel("max_axis", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto v = bl::load(x + bl::arange(0, 16));
    auto m = (line = __LINE__, bl::max(v, -2));
    bl::store(out, m);
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::max: axis -2 is out of range for "
                             "tensor<16xf32> of rank 1"));
}

TEST(ReduceErrors, AxisOfAScalar) {
  static int line;
  auto k = bl::kernel("scalar_axis", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto s = bl::load(x);
    auto m = (line = __LINE__, bl::min(s, 0));
    bl::store(out, m);
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::min: axis 0 is out of range for the scalar "
                             "f32, which has no axes; leave the axis out"));
}

TEST(ReduceErrors, ScanAxisOutOfRange) {
  static int line;
  auto k = bl::kernel("cumsum_axis", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto v = bl::load(x + bl::arange(0, 16));
    auto c = (line = __LINE__, bl::cumsum(v, 1));
    bl::store(out + bl::arange(0, 16), c);
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::cumsum: axis 1 is out of range for "
                             "tensor<16xf32> of rank 1; use an axis from -1 "
                             "to 0"));
}

TEST(ReduceErrors, ScanOfAScalar) {
  static int line;
  auto k =
      bl::kernel("cumprod_scalar", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto s = bl::load(x);
        auto c = (line = __LINE__, bl::cumprod(s));
        bl::store(out, c);
      });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::cumprod needs a block, got the scalar f32"));
}

TEST(ReduceErrors, XorSumOfFloats) {
  static int line;
  auto k = bl::kernel("xor_floats", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto v = bl::load(x + bl::arange(0, 16));
    auto r = (line = __LINE__, bl::xor_sum(v));
    bl::store(out, r);
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::xor_sum needs integer elements, got "
                             "tensor<16xf32>; to xor the bits of floats, "
                             "bl::bitcast them to an integer type of the same "
                             "width first"));
}

TEST(ReduceErrors, ArgmaxOfAScalar) {
  static int line;
  auto k =
      bl::kernel("argmax_scalar", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto s = bl::load(x);
        auto i = (line = __LINE__, bl::argmax(s, 0));
        bl::store(out, i);
      });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::argmax needs a block, got the scalar f32; a "
                             "scalar has no index to return"));
}

TEST(ReduceErrors, SumOfPointers) {
  static int line;
  auto k = bl::kernel("sum_pointers", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto ptrs = x + bl::arange(0, 16);
    auto s = (line = __LINE__, bl::sum(ptrs));
    (void)s;
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::sum is not defined for pointers "
                             "(tensor<16xptr<f32>>)"));
}

TEST(ReduceErrors, CombineReturnsTheWrongType) {
  static int line;
  auto k =
      bl::kernel("combine_dtype", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto v = bl::arange(0, 16);
        auto to_float = [](bl::Tensor a, bl::Tensor b) {
          return bl::fdiv(a + b, 2);
        };
        auto r = (line = __LINE__, bl::reduce(v, 0, to_float));
        bl::store(out, r);
      });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::reduce: the combine function returns f32"));
  EXPECT_THAT(msg, HasSubstr("but the elements are i32; convert it with "
                             ".to(bl::int32) so that both match"));
}

TEST(ReduceErrors, CombineReturnsABlock) {
  static int line;
  auto k =
      bl::kernel("combine_block", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto v = bl::load(x + bl::arange(0, 16));
        auto widen = [](bl::Tensor a, bl::Tensor b) {
          return bl::broadcast_to(a + b, {2});
        };
        auto r = (line = __LINE__, bl::associative_scan(v, 0, widen));
        bl::store(out + bl::arange(0, 16), r);
      });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::associative_scan: the combine function "
                             "returns the block tensor<2xf32>"));
  EXPECT_THAT(msg, HasSubstr("it combines two elements, so it must return a "
                             "scalar"));
}

TEST(ReduceErrors, CombineReturnsTooFewValues) {
  static int line;
  auto k =
      bl::kernel("combine_count", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto v = bl::load(x + bl::arange(0, 16));
        auto i = bl::arange(0, 16);
        auto only_value = [](const std::vector<bl::Tensor> &l,
                             const std::vector<bl::Tensor> &r) {
          return std::vector<bl::Tensor>{bl::maximum(l[0], r[0])};
        };
        auto pair = (line = __LINE__, bl::reduce({v, i}, 0, only_value));
        bl::store(out, pair[0]);
      });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::reduce: the combine function returns 1 "
                             "value for 2 operands; it must return one scalar "
                             "per operand, in the operands' order"));
}

TEST(ReduceErrors, ReduceOfOperandsOfDifferentShapes) {
  static int line;
  auto k =
      bl::kernel("reduce_shapes", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto v = bl::load(x + bl::arange(0, 16));
        auto i = bl::arange(0, 8);
        auto keep = [](const std::vector<bl::Tensor> &l,
                       const std::vector<bl::Tensor> &) { return l; };
        auto pair = (line = __LINE__, bl::reduce({v, i}, 0, keep));
        bl::store(out, pair[0]);
      });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::reduce: operand 1 (tensor<8xi32>) does not "
                             "have the shape of operand 0 (tensor<16xf32>)"));
}

TEST(ReduceErrors, VariableAssignedInsideACombineFunction) {
  // The combine function runs once, inside the reduce's region; a kernel
  // variable it assigns would name a value that exists only there.
  static int reduce_line, use_line;
  auto k = bl::kernel("combine_leak", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto v = bl::load(x + bl::arange(0, 16));
    bl::Tensor last = bl::load(x);
    auto remember = [&](bl::Tensor a, bl::Tensor b) {
      last = a + b;
      return last;
    };
    auto s = (reduce_line = __LINE__, bl::reduce(v, 0, remember));
    bl::store(out, s);
    (use_line = __LINE__, bl::store(out + 1, last));
  });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(use_line)));
  EXPECT_THAT(msg, HasSubstr("this variable was assigned inside the combine "
                             "function of bl::reduce at " +
                             where(reduce_line)));
  EXPECT_THAT(msg, HasSubstr("return the value from the combine function "
                             "instead"));
}

// A combine function is a pure function of the elements it combines: each
// op with an effect names its own line and the reduction's, at trace time,
// so that every executor (interpreter, CPU, GPU) stops there alike.
TEST(ReduceErrors, LoadInsideACombineFunction) {
  static int reduce_line, load_line;
  auto k = bl::kernel("combine_load", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto v = bl::load(x + bl::arange(0, 16));
    auto weighted = [&](bl::Tensor a, bl::Tensor b) {
      return a + b * (load_line = __LINE__, bl::load(x));
    };
    auto s = (reduce_line = __LINE__, bl::reduce(v, 0, weighted));
    bl::store(out, s);
  });
  for (bl::Backend backend : {bl::Backend::Interpreter, bl::Backend::Cpu}) {
    bl::LaunchOptions options;
    options.backend = backend;
    std::vector<float> x(64, 1.f);
    auto out = poisoned<float>(64);
    std::string msg = error_of([&] { k[{1}].with(options)(x, out); });
    EXPECT_TRUE(untouched(out));
    EXPECT_THAT(msg, HasSubstr(at(load_line)));
    EXPECT_THAT(msg, HasSubstr("bl::load cannot be used in the combine "
                               "function of the reduce at " +
                               where(reduce_line) +
                               ": a combine function is a pure function of "
                               "the elements it combines"));
    EXPECT_THAT(msg, HasSubstr("load the values before the reduction or scan "
                               "and pass them in as operands"));
  }
}

TEST(ReduceErrors, StoreInABranchOfAScanCombine) {
  static int scan_line, store_line;
  auto k =
      bl::kernel("combine_store", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto v = bl::load(x + bl::arange(0, 16));
        auto noisy = [&](bl::Tensor a, bl::Tensor b) {
          bl::if_(a > b, [&] { (store_line = __LINE__, bl::store(out, a)); });
          return a + b;
        };
        auto s = (scan_line = __LINE__, bl::associative_scan(v, 0, noisy));
        bl::store(out + bl::arange(0, 16), s);
      });
  std::string msg = run_x_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(store_line)));
  EXPECT_THAT(msg, HasSubstr("bl::store cannot be used in the combine "
                             "function of the scan at " +
                             where(scan_line)));
  EXPECT_THAT(msg, HasSubstr("do it with the result, after the reduction or "
                             "scan"));
}

TEST(ReduceErrors, AtomicPrintAndAssertInsideACombineFunction) {
  static int atomic_line, print_line, assert_line;
  auto atomic =
      bl::kernel("combine_atomic", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto v = bl::load(x + bl::arange(0, 16));
        bl::store(out, bl::reduce(v, 0, [&](bl::Tensor a, bl::Tensor b) {
                    return (atomic_line = __LINE__, bl::atomic_add(out, a)) + b;
                  }));
      });
  auto print =
      bl::kernel("combine_print", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto v = bl::load(x + bl::arange(0, 16));
        bl::store(out, bl::reduce(v, 0, [](bl::Tensor a, bl::Tensor b) {
                    (print_line = __LINE__, bl::device_print("a", {a}));
                    return a + b;
                  }));
      });
  auto check =
      bl::kernel("combine_assert", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto v = bl::load(x + bl::arange(0, 16));
        bl::store(out, bl::reduce(v, 0, [](bl::Tensor a, bl::Tensor b) {
                    (assert_line = __LINE__, bl::device_assert(a < b, "a < b"));
                    return a + b;
                  }));
      });
  std::string msg = run_x_out(atomic, 64);
  EXPECT_THAT(msg, HasSubstr(at(atomic_line)));
  EXPECT_THAT(msg, HasSubstr("bl::atomic_add cannot be used in the combine "
                             "function of the reduce at "));
  msg = run_x_out(print, 64);
  EXPECT_THAT(msg, HasSubstr(at(print_line)));
  EXPECT_THAT(msg, HasSubstr("bl::device_print cannot be used in the combine "
                             "function of the reduce at "));
  EXPECT_THAT(msg, HasSubstr("print the result after the reduction or scan"));
  msg = run_x_out(check, 64);
  EXPECT_THAT(msg, HasSubstr(at(assert_line)));
  EXPECT_THAT(msg, HasSubstr("bl::device_assert cannot be used in the "
                             "combine function of the reduce at "));
}

} // namespace
