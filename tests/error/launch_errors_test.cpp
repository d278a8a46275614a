// Mistakes made when launching a kernel: arguments that do not match the
// parameters, buffers the kernel may not write, bad grids. Each must be a
// blocc::Error raised before the kernel runs, so no output is touched.
#include "error/support.h"

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

// Copies x to out; the launches below get its arguments wrong.
const int copy_defined_at = __LINE__ + 1; // the line of bl::kernel( below
auto copy = bl::kernel("copy", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                  bl::i32 n, bl::Const<int> BLOCK) {
  auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offsets < n;
  bl::store(out + offsets, bl::load(x + offsets, mask), mask);
});

TEST(LaunchErrors, TooFewArguments) {
  std::vector<float> x(64, 1.f);
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { copy[{1}](x, out, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy'"));
  EXPECT_THAT(msg, HasSubstr("defined at " + where(copy_defined_at)));
  EXPECT_THAT(msg, HasSubstr("takes 4 arguments, but the launch passed 3"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, TooManyArguments) {
  std::vector<float> x(64, 1.f);
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { copy[{1}](x, out, 64, 64, 7); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy'"));
  EXPECT_THAT(msg, HasSubstr("takes 4 arguments, but the launch passed 5"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, WrongPointerElementType) {
  std::vector<int> x(64, 1); // the kernel reads floats
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { copy[{1}](x, out, 64, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy', argument 1 (bl::Ptr<f32>)"));
  EXPECT_THAT(msg, HasSubstr("expected f32 elements, got std::vector<i32>"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, ScalarPassedForPointer) {
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { copy[{1}](3.f, out, 64, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy', argument 1 (bl::Ptr<f32>)"));
  EXPECT_THAT(msg, HasSubstr("expected a pointer to f32"));
  EXPECT_THAT(msg, HasSubstr("std::vector<T>"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, PointerPassedForScalar) {
  std::vector<float> x(64, 1.f);
  std::vector<int> n(1, 64);
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { copy[{1}](x, out, n, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy', argument 3 (bl::i32)"));
  EXPECT_THAT(msg, HasSubstr("expected a i32 value, got std::vector<i32>"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, FloatPassedForI32) {
  std::vector<float> x(64, 1.f);
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { copy[{1}](x, out, 63.5, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy', argument 3 (bl::i32)"));
  EXPECT_THAT(msg, HasSubstr("expected an integer, got the float 63.5"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, IntegerOutOfRangeForI32) {
  std::vector<float> x(64, 1.f);
  auto out = poisoned<float>(64);
  int64_t too_big = int64_t{1} << 32;
  std::string msg = error_of([&] { copy[{1}](x, out, too_big, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy', argument 3 (bl::i32)"));
  EXPECT_THAT(msg, HasSubstr("the value 4294967296 does not fit in i32"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, NegativeIntegerForUnsignedParameter) {
  auto k = bl::kernel("fill_u32", [](bl::Ptr<float> out, bl::u32 n) {
    bl::store(out + bl::arange(0, 16), 1.f, bl::arange(0, 16) < n);
  });
  auto out = poisoned<float>(16);
  std::string msg = error_of([&] { k[{1}](out, -1); });
  EXPECT_THAT(msg, HasSubstr("kernel 'fill_u32', argument 2 (bl::u32)"));
  EXPECT_THAT(msg, HasSubstr("the value -1 does not fit in u32"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, FloatPassedForIntegerConstant) {
  std::vector<float> x(64, 1.f);
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { copy[{1}](x, out, 64, 64.0); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy', argument 4 (bl::Const<i32>)"));
  EXPECT_THAT(msg, HasSubstr("expected an integer, got the float 64"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, ReadOnlyBufferWrittenByKernel) {
  std::vector<float> x(64, 1.f);
  const std::vector<float> out = poisoned<float>(64);
  std::string msg = error_of([&] { copy[{1}](x, out, 64, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy', argument 2 (bl::Ptr<f32>)"));
  EXPECT_THAT(msg, HasSubstr("const std::vector<f32> is read-only, but the "
                             "kernel writes through it"));
  EXPECT_THAT(msg, HasSubstr("pass a mutable buffer"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, ReadOnlyRawPointerWrittenByKernel) {
  std::vector<float> x(64, 1.f);
  auto out = poisoned<float>(64);
  const float *read_only = out.data();
  std::string msg = error_of([&] { copy[{1}](x, read_only, 64, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy', argument 2 (bl::Ptr<f32>)"));
  EXPECT_THAT(msg, HasSubstr("f32* is read-only"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, NegativeGrid) {
  std::vector<float> x(64, 1.f);
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { copy[{-1}](x, out, 64, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy'"));
  EXPECT_THAT(msg, HasSubstr("grid dimension 0 is negative (-1)"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, NegativeGridInSecondAxis) {
  std::vector<float> x(64, 1.f);
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { copy[{1, -2}](x, out, 64, 64); });
  EXPECT_THAT(msg, HasSubstr("grid dimension 1 is negative (-2)"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, NumWarpsNotPowerOfTwo) {
  std::vector<float> x(64, 1.f);
  auto out = poisoned<float>(64);
  std::string msg =
      error_of([&] { copy[{1}].with({.num_warps = 3})(x, out, 64, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy'"));
  EXPECT_THAT(msg, HasSubstr("num_warps must be a power of two, got 3"));
  EXPECT_TRUE(untouched(out));
}

TEST(LaunchErrors, IrForChecksArgumentsToo) {
  std::vector<int> x(64, 1);
  std::vector<float> out(64);
  std::string msg = error_of([&] { copy.ir_for(x, out, 64, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'copy', argument 1 (bl::Ptr<f32>)"));
  EXPECT_THAT(msg, HasSubstr("expected f32 elements"));
}

// A program that launches one kernel from several places needs the message
// to say which launch was wrong, as trace-time errors name the op's line.
TEST(LaunchErrors, ArgumentErrorsNameTheLaunchLine) {
  std::vector<int> x(64, 1);
  auto out = poisoned<float>(64);
  static int line;
  std::string msg =
      error_of([&] { (line = __LINE__, copy[{1}](x, out, 64, 64)); });
  EXPECT_THAT(msg, HasSubstr(where(line)));
  EXPECT_TRUE(untouched(out));
}

} // namespace
