// Mistakes with bl::range and bl::if_: values that escape their loop or
// branch, variables without a value before the loop, carried variables
// that change type, break/return in a traced loop, bad conditions.
#include "error/support.h"

#include <vector>

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

// Every kernel here is (out, n).

TEST(ControlFlowErrors, ValueUsedAfterItsLoop) {
  static int line;
  auto k = bl::kernel("escapes_loop", [](bl::Ptr<float> out, bl::i32 n) {
    auto offs = bl::arange(0, 16);
    std::vector<bl::Tensor> per_iteration; // as if the loop were unrolled
    for (auto i : bl::range(0, n))
      per_iteration.push_back(bl::cast(offs + i, bl::float32));
    (line = __LINE__, bl::store(out + offs, per_iteration[0]));
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("this value was computed inside a bl::range loop "
                             "or bl::if_ branch that has ended"));
  EXPECT_THAT(msg, HasSubstr("declare the variable before the loop or branch "
                             "and assign it inside"));
}

TEST(ControlFlowErrors, InductionVariableUsedAfterItsLoop) {
  static int line;
  auto k = bl::kernel("iv_escapes", [](bl::Ptr<float> out, bl::i32 n) {
    std::vector<bl::Tensor> last;
    for (auto i : bl::range(0, n))
      last.assign(1, i);
    (line = __LINE__, bl::store(out + last[0], 1.f));
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("computed inside a bl::range loop or bl::if_ "
                             "branch that has ended"));
}

TEST(ControlFlowErrors, ValueUsedAfterItsBranch) {
  static int line;
  auto k = bl::kernel("escapes_if", [](bl::Ptr<float> out, bl::i32 n) {
    auto offs = bl::arange(0, 16);
    std::vector<bl::Tensor> saved;
    bl::if_(n > 2, [&] { saved.push_back(bl::cast(offs * 2, bl::float32)); });
    (line = __LINE__, bl::store(out + offs, saved[0]));
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("computed inside a bl::range loop or bl::if_ "
                             "branch that has ended"));
}

TEST(ControlFlowErrors, VariableFirstAssignedInLoop) {
  static int loop_line, line;
  auto k = bl::kernel("no_value_before", [](bl::Ptr<float> out, bl::i32 n) {
    auto offs = bl::arange(0, 16);
    bl::Tensor acc; // no value before the loop
    for (auto i : (loop_line = __LINE__, bl::range(0, n)))
      acc = bl::cast(offs * i, bl::float32);
    (line = __LINE__, bl::store(out + offs, acc));
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("this variable was assigned inside the bl::range "
                             "loop at " +
                             where(loop_line) + " but had no value before it"));
  EXPECT_THAT(msg, HasSubstr("assign it before the loop to carry it across "
                             "iterations"));
}

TEST(ControlFlowErrors, VariableFirstAssignedInForRange) {
  static int loop_line, line;
  auto k = bl::kernel("no_value_for_range", [](bl::Ptr<float> out, bl::i32 n) {
    auto offs = bl::arange(0, 16);
    bl::Tensor acc;
    (loop_line = __LINE__, bl::for_range(0, n, 1, [&](bl::Tensor i) {
       acc = bl::cast(offs + i, bl::float32);
     }));
    (line = __LINE__, bl::store(out + offs, acc));
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("assigned inside the bl::range loop at " +
                             where(loop_line)));
}

TEST(ControlFlowErrors, UnassignedVariableRead) {
  static int line;
  auto k = bl::kernel("never_assigned", [](bl::Ptr<float> out, bl::i32 n) {
    bl::Tensor v;
    (line = __LINE__, bl::store(out + bl::arange(0, 16), v));
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("this Tensor variable has no value yet; assign "
                             "one before reading it"));
}

TEST(ControlFlowErrors, CarriedVariableChangesDtype) {
  static int loop_line;
  auto k = bl::kernel("carried_dtype", [](bl::Ptr<float> out, bl::i32 n) {
    auto acc = bl::zeros({16}, bl::float32);
    for (auto i : (loop_line = __LINE__, bl::range(0, n)))
      acc = (acc + 1).to(bl::float16);
    bl::store(out + bl::arange(0, 16), acc);
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(loop_line)));
  EXPECT_THAT(msg, HasSubstr("a variable carried by this bl::range loop "
                             "changes type from tensor<16xf32> to "
                             "tensor<16xf16> in the loop body"));
  EXPECT_THAT(msg, HasSubstr("convert the new value"));
}

TEST(ControlFlowErrors, CarriedVariableChangesShape) {
  static int loop_line;
  auto k = bl::kernel("carried_shape", [](bl::Ptr<float> out, bl::i32 n) {
    auto acc = bl::zeros({1}, bl::float32);
    for (auto i : (loop_line = __LINE__, bl::range(0, n)))
      acc = acc + bl::zeros({16}, bl::float32);
    bl::store(out + bl::arange(0, 16), acc);
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(loop_line)));
  EXPECT_THAT(msg, HasSubstr("changes type from tensor<1xf32> to "
                             "tensor<16xf32>"));
  EXPECT_THAT(msg, HasSubstr("bl::broadcast_to"));
}

// In a long body the loop line alone does not say which assignment changed
// the type; the message should name it too (the value's op has a location).
TEST(ControlFlowErrors, CarriedTypeChangeNamesTheAssignment) {
  static int line;
  auto k = bl::kernel("carried_where", [](bl::Ptr<float> out, bl::i32 n) {
    auto acc = bl::zeros({16}, bl::float32);
    for (auto i : bl::range(0, n)) {
      acc = acc + 1;
      acc = (line = __LINE__, acc.to(bl::int32));
    }
    bl::store(out + bl::arange(0, 16), acc);
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(where(line)));
}

TEST(ControlFlowErrors, BreakInsideRange) {
  static int loop_line;
  auto k = bl::kernel("breaks", [](bl::Ptr<float> out, bl::i32 n) {
    auto offs = bl::arange(0, 16);
    auto acc = bl::zeros({16}, bl::float32);
    for (auto i : (loop_line = __LINE__, bl::range(0, n))) {
      acc += 1.f;
      break;
    }
    bl::store(out + offs, acc);
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(loop_line)));
  EXPECT_THAT(msg, HasSubstr("`break` or `return` inside a bl::range loop "
                             "body is not supported"));
  EXPECT_THAT(msg,
              HasSubstr("compute a mask instead, or use a plain C++ loop"));
}

TEST(ControlFlowErrors, ReturnInsideRange) {
  static int loop_line;
  auto k = bl::kernel("returns", [](bl::Ptr<float> out, bl::i32 n) {
    auto offs = bl::arange(0, 16);
    for (auto i : (loop_line = __LINE__, bl::range(0, n))) {
      bl::store(out + offs, 1.f);
      return;
    }
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(loop_line)));
  EXPECT_THAT(msg, HasSubstr("`break` or `return` inside a bl::range loop"));
}

TEST(ControlFlowErrors, RangeIteratedTwice) {
  static int line;
  auto k = bl::kernel("range_twice", [](bl::Ptr<float> out, bl::i32 n) {
    auto acc = bl::zeros({16}, bl::float32);
    auto r = (line = __LINE__, bl::range(0, n));
    for (auto i : r)
      acc += 1.f;
    for (auto i : r)
      acc += 2.f;
    bl::store(out + bl::arange(0, 16), acc);
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("a bl::range can be iterated only once"));
}

TEST(ControlFlowErrors, RangeWithFloatBound) {
  static int line;
  auto k = bl::kernel("range_float", [](bl::Ptr<float> out, bl::i32 n) {
    auto acc = bl::zeros({16}, bl::float32);
    for (auto i : (line = __LINE__, bl::range(0, 2.5)))
      acc += 1.f;
    bl::store(out + bl::arange(0, 16), acc);
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::range bounds must be integer scalars, got "
                             "float constant 2.5"));
}

TEST(ControlFlowErrors, RangeWithBlockBound) {
  static int line;
  auto k = bl::kernel("range_block", [](bl::Ptr<float> out, bl::i32 n) {
    auto acc = bl::zeros({16}, bl::float32);
    for (auto i : (line = __LINE__, bl::range(0, bl::arange(0, 16))))
      acc += 1.f;
    bl::store(out + bl::arange(0, 16), acc);
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::range bounds must be integer scalars, got "
                             "tensor<16xi32>"));
}

TEST(ControlFlowErrors, RangeWithZeroStep) {
  static int line;
  auto k = bl::kernel("range_step0", [](bl::Ptr<float> out, bl::i32 n) {
    auto acc = bl::zeros({16}, bl::float32);
    for (auto i : (line = __LINE__, bl::range(0, n, 0)))
      acc += 1.f;
    bl::store(out + bl::arange(0, 16), acc);
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::range: the step must be positive, got 0"));
}

TEST(ControlFlowErrors, IfWithBlockCondition) {
  static int line;
  auto k = bl::kernel("if_block", [](bl::Ptr<float> out, bl::i32 n) {
    auto offs = bl::arange(0, 16);
    auto body = [&] { bl::store(out + offs, 1.f); };
    (line = __LINE__, bl::if_(offs < n, body));
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::if_ needs a scalar condition, got "
                             "tensor<16xi1>"));
  EXPECT_THAT(msg, HasSubstr("for a block of conditions use bl::where(cond, "
                             "a, b)"));
}

TEST(ControlFlowErrors, IfWithIntegerCondition) {
  static int line;
  auto k = bl::kernel("if_int", [](bl::Ptr<float> out, bl::i32 n) {
    auto offs = bl::arange(0, 16);
    auto body = [&] { bl::store(out + offs, 1.f); };
    (line = __LINE__, bl::if_(n, body));
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::if_ needs a boolean condition, got i32"));
  EXPECT_THAT(msg, HasSubstr("compare it, e.g. x != 0"));
}

TEST(ControlFlowErrors, VariableAssignedInOneBranchThenUsed) {
  static int if_line, line;
  auto k = bl::kernel("one_branch", [](bl::Ptr<float> out, bl::i32 n) {
    auto offs = bl::arange(0, 16);
    bl::Tensor v;
    auto assign = [&] { v = bl::full({16}, 1.f, bl::float32); };
    (if_line = __LINE__, bl::if_(n > 2, assign)); // no else branch
    (line = __LINE__, bl::store(out + offs, v));
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("this variable is assigned in only one branch of "
                             "the bl::if_ at " +
                             where(if_line) + " and had no value before it"));
  EXPECT_THAT(msg, HasSubstr("assign it before the bl::if_ or in both "
                             "branches"));
}

TEST(ControlFlowErrors, BranchesLeaveVariableWithDifferentTypes) {
  static int line;
  auto k = bl::kernel("branch_types", [](bl::Ptr<float> out, bl::i32 n) {
    auto offs = bl::arange(0, 16);
    auto v = bl::zeros({16}, bl::float32);
    auto narrow = [&] { v = v.to(bl::float16); };
    auto increment = [&] { v = v + 1.f; };
    (line = __LINE__, bl::if_(n > 2, narrow, increment));
    bl::store(out + offs, v);
  });
  std::string msg = run_out(k, 64, 4);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("a variable assigned in this bl::if_ has type "
                             "tensor<16xf16> after the then-branch but "
                             "tensor<16xf32> after the else-branch"));
  EXPECT_THAT(msg, HasSubstr("convert one so both match"));
}

// An error thrown from inside a loop body or branch unwinds the trace; the
// next trace, of this kernel or another, starts clean.
TEST(ControlFlowErrors, TracingRecoversAfterAnErrorInsideALoop) {
  auto k = bl::kernel(
      "fails_inside", [](bl::Ptr<float> out, bl::i32 n, bl::Const<int> BLOCK) {
        auto acc = bl::zeros({16}, bl::float32);
        for (auto i : bl::range(0, n)) {
          bl::if_(i > 1, [&] { acc += bl::zeros({BLOCK}, bl::float32); });
        }
        bl::store(out + bl::arange(0, 16), acc);
      });
  auto out = poisoned<float>(16);
  std::string msg = error_of([&] { k[{1}](out, 4, 32); });
  EXPECT_THAT(msg, HasSubstr("cannot be broadcast together"));
  EXPECT_TRUE(untouched(out));
  k[{1}](out, 4, 16); // the specialization without the mistake
  for (float v : out)
    EXPECT_EQ(v, 0.f);
}

} // namespace
