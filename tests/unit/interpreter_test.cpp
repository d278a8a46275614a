// The reference interpreter end to end: kernels built by hand with
// ir::Builder, run over a grid on host buffers. Outputs are poisoned before
// each run and inputs are fresh random numbers from a fixed seed.
#include "backends/interpreter/interpreter.h"
#include "backends/interpreter/testing/kernel_builder.h"
#include "ir/error.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

namespace blocc::interp {
namespace {

using namespace testing;

template <typename T> KernelArg buffer_arg(std::vector<T> &v) {
  return KernelArg::of_pointer(v.data(), v.size() * sizeof(T));
}

#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "missing '" << (part) << "' in: " << (text)

/// Messages must contain every one of `parts`.
void expect_error(const std::function<void()> &f,
                  const std::vector<std::string> &parts) {
  try {
    f();
    ADD_FAILURE() << "expected blocc::Error";
  } catch (const Error &e) {
    std::string message = e.what();
    for (const std::string &p : parts)
      EXPECT_NE(message.find(p), std::string::npos)
          << "missing '" << p << "' in: " << message;
  }
}

// ----------------------------------------------------------- vector add

/// out[i] = x[i] + y[i] for i < n, BLOCK lanes per program.
const ir::Function &vector_add(KernelBuilder &k, int64_t block) {
  Value *x = k.ptr_arg(Scalar::F32, "x");
  Value *y = k.ptr_arg(Scalar::F32, "y");
  Value *out = k.ptr_arg(Scalar::F32, "out");
  Value *n = k.arg(scalar_type(Scalar::I32), "n");
  Value *pid = k.program_id(0);
  Value *start = k.binary(OpCode::Mul, pid, k.int_const(block, Scalar::I32));
  Value *offsets =
      k.binary(OpCode::Add, k.splat(start, {block}), k.arange(0, block));
  Value *mask = k.cmp("lt", offsets, k.splat(n, {block}));
  Value *sum = k.binary(OpCode::Add, k.load(k.pointers(x, offsets), mask),
                        k.load(k.pointers(y, offsets), mask));
  k.at_line(20);
  k.store(k.pointers(out, offsets), sum, mask);
  return k.finish();
}

class VectorAdd : public ::testing::TestWithParam<int64_t> {};

TEST_P(VectorAdd, MatchesHostWithExactBuffers) {
  const int64_t n = GetParam(), block = 128;
  KernelBuilder k("add");
  const ir::Function &f = vector_add(k, block);
  std::mt19937 rng(1234 + static_cast<unsigned>(n));
  std::uniform_real_distribution<float> dist(-10, 10);
  std::vector<float> x(n), y(n),
      out(n + 8, std::numeric_limits<float>::quiet_NaN());
  for (auto &v : x)
    v = dist(rng);
  for (auto &v : y)
    v = dist(rng);
  // The buffers are exactly n elements long (the tail of `out` is not
  // passed), so any lane that escaped its mask would be reported.
  interpret(f, Grid((n + block - 1) / block),
            {buffer_arg(x), buffer_arg(y),
             KernelArg::of_pointer(out.data(), n * 4), KernelArg::of_int(n)});
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], x[i] + y[i]) << "i = " << i;
  for (int64_t i = n; i < n + 8; ++i)
    EXPECT_TRUE(std::isnan(out[i])) << "tail written at " << i;
}

INSTANTIATE_TEST_SUITE_P(Sizes, VectorAdd, ::testing::Values(1, 7, 1000, 1024));

TEST(Interpreter, VectorAddOutOfBoundsWithoutMaskNamesEverything) {
  KernelBuilder k("add_nomask");
  Value *x = k.ptr_arg(Scalar::F32, "x");
  Value *out = k.ptr_arg(Scalar::F32, "out");
  Value *offsets = k.binary(OpCode::Add,
                            k.splat(k.binary(OpCode::Mul, k.program_id(0),
                                             k.int_const(8, Scalar::I32)),
                                    {8}),
                            k.arange(0, 8));
  Value *v = k.load(k.pointers(x, offsets));
  k.at_line(33);
  k.store(k.pointers(out, offsets), v);
  const ir::Function &f = k.finish();
  std::vector<float> xs(12, 1.0f), result(12, 0.0f);
  // Program 1 reads lanes 8..15 of a 12-element x: lane 4 is the first out.
  std::vector<float> big(16, 1.0f);
  expect_error(
      [&] {
        interpret(f, Grid(2), {buffer_arg(xs), buffer_arg(result)});
      },
      {"kernel 'add_nomask'", "program (1, 0, 0)", "load at kernel_test.cpp:1",
       "out-of-bounds load", "lane 4", "argument 0 'x'", "48 bytes",
       "element offset 12 of 12"});
  // Program 0 ran to completion before program 1 failed.
  EXPECT_EQ(result[7], 1.0f);
  EXPECT_EQ(result[8], 0.0f);
  expect_error(
      [&] {
        interpret(f, Grid(2), {buffer_arg(big), buffer_arg(result)});
      },
      {"store at kernel_test.cpp:33", "out-of-bounds store", "lane 4",
       "argument 1 'out'", "program (1, 0, 0)"});
  // Nothing of program 1's store was written, not even its in-bounds lanes.
  for (int i = 8; i < 12; ++i)
    EXPECT_EQ(result[i], 0.0f) << i;
}

// ---------------------------------------------------- argument binding

TEST(Interpreter, ArgumentsMustMatchTheSignature) {
  KernelBuilder k("sig");
  k.ptr_arg(Scalar::F32, "p");
  k.arg(scalar_type(Scalar::I32), "n");
  k.arg(scalar_type(Scalar::F32), "alpha");
  const ir::Function &f = k.finish();
  float buffer[4];
  expect_error([&] { interpret(f, Grid(1), {KernelArg::of_pointer(buffer)}); },
               {"kernel 'sig' takes 3 arguments, got 1"});
  expect_error(
      [&] {
        interpret(f, Grid(1),
                  {KernelArg::of_int(3), KernelArg::of_int(1),
                   KernelArg::of_float(1)});
      },
      {"kernel 'sig'",
       "argument 0 'p' (ptr<f32>) takes a pointer, got an integer"});
  expect_error(
      [&] {
        interpret(f, Grid(1),
                  {KernelArg::of_pointer(buffer), KernelArg::of_float(1),
                   KernelArg::of_float(1)});
      },
      {"argument 1 'n' (i32) takes an integer, got a float"});
  expect_error(
      [&] {
        interpret(f, Grid(1),
                  {KernelArg::of_pointer(buffer), KernelArg::of_int(1),
                   KernelArg::of_int(1)});
      },
      {"argument 2 'alpha' (f32) takes a float, got an integer"});
  expect_error(
      [&] {
        interpret(f, Grid(-1),
                  {KernelArg::of_pointer(buffer), KernelArg::of_int(1),
                   KernelArg::of_float(1)});
      },
      {"grid dimension 0 is negative"});
}

TEST(Interpreter, ScalarArgumentsAreConvertedToTheirTypes) {
  KernelBuilder k("scalars");
  Value *out8 = k.ptr_arg(Scalar::I8, "out8");
  Value *outu = k.ptr_arg(Scalar::U16, "outu");
  Value *outh = k.ptr_arg(Scalar::F16, "outh");
  Value *a = k.arg(scalar_type(Scalar::I8), "a");
  Value *b = k.arg(scalar_type(Scalar::U16), "b");
  Value *c = k.arg(scalar_type(Scalar::F16), "c");
  k.store(out8, a);
  k.store(outu, b);
  k.store(outh, c);
  const ir::Function &f = k.finish();
  int8_t o8 = 0;
  uint16_t ou = 0, oh = 0;
  interpret(f, Grid(1),
            {KernelArg::of_pointer(&o8, 1), KernelArg::of_pointer(&ou, 2),
             KernelArg::of_pointer(&oh, 2), KernelArg::of_int(0x17f),
             KernelArg::of_int(-1), KernelArg::of_float(1.0 + 1.0 / 2048)});
  EXPECT_EQ(o8, 0x7f);   // truncated to 8 bits
  EXPECT_EQ(ou, 0xffff); // -1 wraps
  EXPECT_EQ(oh, 0x3c00); // 1 + 2^-11 ties to even: 1.0
}

// ------------------------------------------------------ grid queries

TEST(Interpreter, ProgramIdsRunXFastest) {
  KernelBuilder k("ids");
  Value *out_arg = k.ptr_arg(Scalar::I32, "out");
  Value *px = k.program_id(0), *py = k.program_id(1), *pz = k.program_id(2);
  Value *nx = k.num_programs(0), *ny = k.num_programs(1),
        *nz = k.num_programs(2);
  // linear = (z * ny + y) * nx + x; out[linear] = linear * 1000 + nx*100 +
  // ny*10 + nz
  Value *linear = k.binary(
      OpCode::Add,
      k.binary(OpCode::Mul,
               k.binary(OpCode::Add, k.binary(OpCode::Mul, pz, ny), py), nx),
      px);
  Value *code = k.binary(
      OpCode::Add,
      k.binary(OpCode::Mul, linear, k.int_const(1000, Scalar::I32)),
      k.binary(
          OpCode::Add,
          k.binary(OpCode::Add,
                   k.binary(OpCode::Mul, nx, k.int_const(100, Scalar::I32)),
                   k.binary(OpCode::Mul, ny, k.int_const(10, Scalar::I32))),
          nz));
  // A counter records the order programs ran in.
  Value *counter = k.ptr_arg(Scalar::I32, "counter");
  Value *order_arg = k.ptr_arg(Scalar::I32, "order");
  Value *ticket = k.atomic_rmw("add", counter, k.int_const(1, Scalar::I32));
  k.store(k.addptr(order_arg, ticket), linear);
  k.store(k.addptr(out_arg, linear), code);
  const ir::Function &f = k.finish();
  std::vector<int32_t> out(24, -1), order(24, -1);
  int32_t counter_value = 0;
  interpret(f, Grid(4, 3, 2),
            {buffer_arg(out), KernelArg::of_pointer(&counter_value, 4),
             buffer_arg(order)});
  for (int i = 0; i < 24; ++i) {
    EXPECT_EQ(out[i], i * 1000 + 432);
    EXPECT_EQ(order[i], i); // x fastest, then y, then z
  }
  EXPECT_EQ(counter_value, 24);
}

TEST(Interpreter, EmptyGridRunsNothing) {
  KernelBuilder k("empty");
  Value *out = k.ptr_arg(Scalar::I32, "out");
  k.store(out, k.int_const(5, Scalar::I32));
  const ir::Function &f = k.finish();
  int32_t v = 0;
  interpret(f, Grid(0, 3), {KernelArg::of_pointer(&v, 4)});
  EXPECT_EQ(v, 0);
}

// ------------------------------------------------------- control flow

TEST(Interpreter, ForCarriesValuesAcrossIterations) {
  // acc (block of 4 i32) starts at [0,1,2,3]; each iteration adds iv; a
  // scalar float product is carried alongside.
  KernelBuilder k("loop");
  Value *out = k.ptr_arg(Scalar::I32, "out");
  Value *outf = k.ptr_arg(Scalar::F32, "outf");
  Value *lb = k.arg(scalar_type(Scalar::I32), "lb");
  Value *ub = k.arg(scalar_type(Scalar::I32), "ub");
  Value *step = k.arg(scalar_type(Scalar::I32), "step");
  Value *init = k.arange(0, 4);
  Value *initf = k.float_const(1.0, Scalar::F32);
  ir::Operation *loop = k.builder().create(
      OpCode::For, {lb, ub, step, init, initf}, {init->type(), initf->type()});
  ir::Block *body = loop->add_region();
  Value *iv = body->add_argument(scalar_type(Scalar::I32));
  Value *acc = body->add_argument(init->type());
  Value *accf = body->add_argument(initf->type());
  k.inside(body, [&] {
    Value *next = k.binary(OpCode::Add, acc, k.splat(iv, {4}));
    Value *nextf = k.binary(OpCode::Mul, accf, k.float_const(2.0, Scalar::F32));
    k.yield({next, nextf});
  });
  k.store(k.pointers(out, k.arange(0, 4)), loop->result(0));
  k.store(outf, loop->result(1));
  const ir::Function &f = k.finish();
  struct Case {
    int lb, ub, step;
  } cases[] = {{0, 10, 1},
               {0, 10, 3},
               {5, 5, 1},
               {7, 3, 1},
               {-4, 4, 5},
               {10, 0, -3},
               {2147483600, 2147483647, 20}};
  for (const Case &c : cases) {
    std::vector<int32_t> o(4, -7);
    float of = -1;
    interpret(f, Grid(1),
              {buffer_arg(o), KernelArg::of_pointer(&of, 4),
               KernelArg::of_int(c.lb), KernelArg::of_int(c.ub),
               KernelArg::of_int(c.step)});
    int64_t total = 0, trips = 0;
    for (int64_t iv = c.lb; c.step > 0 ? iv < c.ub : iv > c.ub; iv += c.step) {
      total += iv;
      ++trips;
    }
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(o[i], static_cast<int32_t>(static_cast<uint32_t>(i + total)))
          << c.lb << " " << c.ub << " " << c.step;
    EXPECT_EQ(of, std::ldexp(1.0f, static_cast<int>(trips)));
  }
  std::vector<int32_t> o(4);
  float of;
  expect_error(
      [&] {
        interpret(f, Grid(1),
                  {buffer_arg(o), KernelArg::of_pointer(&of, 4),
                   KernelArg::of_int(0), KernelArg::of_int(4),
                   KernelArg::of_int(0)});
      },
      {"kernel 'loop'", "program (0, 0, 0)", "for", "step is 0"});
}

TEST(Interpreter, IfYieldsTheTakenBranch) {
  KernelBuilder k("branch");
  Value *out = k.ptr_arg(Scalar::F32, "out");
  Value *pid = k.program_id(0);
  Value *odd =
      k.cmp("eq", k.binary(OpCode::And, pid, k.int_const(1, Scalar::I32)),
            k.int_const(1, Scalar::I32));
  ir::Operation *branch =
      k.builder().create(OpCode::If, {odd}, {scalar_type(Scalar::F32)});
  ir::Block *then_block = branch->add_region();
  ir::Block *else_block = branch->add_region();
  k.inside(then_block, [&] {
    // A side effect only in the taken branch.
    k.store(k.addptr(out, k.int_const(8, Scalar::I32)),
            k.float_const(-1, Scalar::F32));
    k.yield({k.cast(pid, Scalar::F32)});
  });
  k.inside(else_block, [&] { k.yield({k.float_const(100.0, Scalar::F32)}); });
  k.store(k.addptr(out, pid), branch->result(0));
  const ir::Function &f = k.finish();
  std::vector<float> o(9, std::numeric_limits<float>::quiet_NaN());
  interpret(f, Grid(8), {buffer_arg(o)});
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(o[i], i % 2 ? static_cast<float>(i) : 100.0f);
  EXPECT_EQ(o[8], -1.0f);

  // A branch never taken never runs.
  std::vector<float> o2(9, 0.0f);
  interpret(f, Grid(1), {buffer_arg(o2)});
  EXPECT_EQ(o2[8], 0.0f);
}

TEST(Interpreter, IfWithoutElseRunsOnlyWhenTaken) {
  KernelBuilder k("maybe");
  Value *out = k.ptr_arg(Scalar::I32, "out");
  Value *flag = k.arg(scalar_type(Scalar::I1), "flag");
  ir::Operation *branch = k.builder().create(OpCode::If, {flag}, {});
  k.inside(branch->add_region(), [&] {
    k.store(out, k.int_const(42, Scalar::I32));
    k.yield({});
  });
  const ir::Function &f = k.finish();
  int32_t v = 0;
  interpret(f, Grid(1), {KernelArg::of_pointer(&v, 4), KernelArg::of_int(0)});
  EXPECT_EQ(v, 0);
  interpret(f, Grid(1), {KernelArg::of_pointer(&v, 4), KernelArg::of_int(1)});
  EXPECT_EQ(v, 42);
}

TEST(Interpreter, ConstantsRoundToTheirElementType) {
  KernelBuilder k("constants");
  Value *h = k.ptr_arg(Scalar::F16, "h");
  Value *b = k.ptr_arg(Scalar::BF16, "b");
  Value *u = k.ptr_arg(Scalar::U8, "u");
  Value *i = k.ptr_arg(Scalar::I32, "i");
  Value *lanes = k.arange(0, 2);
  k.store(k.pointers(h, lanes), k.float_const(0.1, Scalar::F16, {2}));
  k.store(k.pointers(b, lanes), k.float_const(0.1, Scalar::BF16, {2}));
  k.store(k.pointers(u, lanes), k.int_const(-1, Scalar::U8, {2}));
  k.store(k.pointers(i, lanes), k.float_const(-2.9, Scalar::I32, {2}));
  const ir::Function &f = k.finish();
  std::vector<uint16_t> hs(2), bs(2);
  std::vector<uint8_t> us(2);
  std::vector<int32_t> is(2);
  interpret(f, Grid(1),
            {buffer_arg(hs), buffer_arg(bs), buffer_arg(us), buffer_arg(is)});
  EXPECT_EQ(hs, (std::vector<uint16_t>{0x2e66, 0x2e66})); // 0.1 in f16
  EXPECT_EQ(bs, (std::vector<uint16_t>{0x3dcd, 0x3dcd})); // 0.1 in bf16
  EXPECT_EQ(us, (std::vector<uint8_t>{255, 255}));
  EXPECT_EQ(is, (std::vector<int32_t>{-2, -2}));
}

// ------------------------------------------------------------- debug

TEST(Interpreter, PrintWritesEveryElementWithProgramAndIndex) {
  KernelBuilder k("printer");
  Value *ramp = k.reshape(k.arange(0, 4), {2, 2});
  Value *h = k.float_const(0.5, Scalar::F16);
  ir::Operation *p = k.builder().create(OpCode::Print, {ramp}, {},
                                        {{"prefix", std::string("r:")}});
  (void)p;
  k.builder().create(OpCode::Print, {h, k.int_const(-1, Scalar::I8)}, {},
                     {{"prefix", std::string("pair")}, {"hex", int64_t{1}}});
  const ir::Function &f = k.finish();
  std::ostringstream out;
  InterpretOptions options;
  options.print_stream = &out;
  interpret(f, Grid(1, 2), {}, options);
  std::string text = out.str();
  EXPECT_CONTAINS(text, ("pid (0, 0, 0) idx (0, 0) r: 0\n"));
  EXPECT_CONTAINS(text, ("pid (0, 0, 0) idx (1, 1) r: 3\n"));
  EXPECT_CONTAINS(text, ("pid (0, 1, 0) idx (0, 1) r: 1\n"));
  EXPECT_CONTAINS(text, ("pid (0, 0, 0) idx () pair (operand 0) 0x3800\n"));
  EXPECT_CONTAINS(text, ("pid (0, 1, 0) idx () pair (operand 1) 0xff\n"));
}

TEST(Interpreter, PrintFormatsFloatsShortest) {
  KernelBuilder k("printf");
  k.builder().create(OpCode::Print, {k.float_const(0.1, Scalar::F32)}, {},
                     {{"prefix", std::string("x")}});
  k.builder().create(OpCode::Print, {k.float_const(0.1, Scalar::F64)}, {},
                     {{"prefix", std::string("y")}});
  const ir::Function &f = k.finish();
  std::ostringstream out;
  InterpretOptions options;
  options.print_stream = &out;
  interpret(f, Grid(1), {}, options);
  EXPECT_EQ(out.str(),
            "pid (0, 0, 0) idx () x 0.1\npid (0, 0, 0) idx () y 0.1\n");
}

TEST(Interpreter, AssertFailsWithMessageLineAndProgram) {
  KernelBuilder k("checked");
  Value *n = k.arg(scalar_type(Scalar::I32), "n");
  Value *offsets = k.arange(0, 8);
  Value *ok = k.cmp("lt", offsets, k.splat(n, {8}));
  k.at_line(77);
  k.builder().create(OpCode::Assert, {ok}, {},
                     {{"message", std::string("offsets must stay below n")}});
  const ir::Function &f = k.finish();
  EXPECT_NO_THROW(interpret(f, Grid(3), {KernelArg::of_int(8)}));
  expect_error([&] { interpret(f, Grid(3), {KernelArg::of_int(5)}); },
               {"kernel 'checked'", "program (0, 0, 0)",
                "assert at kernel_test.cpp:77",
                "assertion failed: offsets must stay below n", "lane 5"});
}

TEST(Interpreter, IntegerDivisionByZeroIsAnErrorNotUB) {
  KernelBuilder k("divider");
  Value *out = k.ptr_arg(Scalar::I32, "out");
  Value *d = k.arg(scalar_type(Scalar::I32), "d");
  Value *offsets = k.arange(0, 4);
  Value *divisor = k.binary(OpCode::Sub, k.splat(d, {4}), offsets);
  k.at_line(12);
  Value *q = k.binary(OpCode::Div, k.int_const(100, Scalar::I32, {4}), divisor);
  k.store(k.pointers(out, offsets), q);
  const ir::Function &f = k.finish();
  std::vector<int32_t> o(4, 0);
  interpret(f, Grid(1), {buffer_arg(o), KernelArg::of_int(10)});
  EXPECT_EQ(o, (std::vector<int32_t>{10, 11, 12, 14}));
  expect_error(
      [&] {
        interpret(f, Grid(2), {buffer_arg(o), KernelArg::of_int(2)});
      },
      {"kernel 'divider'", "program (0, 0, 0)", "div at kernel_test.cpp:12",
       "lane 2", "integer division by zero"});
}

} // namespace
} // namespace blocc::interp
