// Launch mistakes with each kind of host memory a kernel accepts
// (blocc::HostBuffer, raw pointers, std::span of static and dynamic extent,
// std::vector): the wrong element type, and a read-only buffer the kernel
// writes. Each message names the launch's line, the argument, what was
// passed and what to pass instead, and nothing runs.
#include "error/support.h"

#include <span>

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

auto scale =
    bl::kernel("scale", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
      auto offs = bl::arange(0, 64);
      auto mask = offs < n;
      bl::store(out + offs, bl::load(x + offs, mask) * 2, mask);
    });

/// The launch scale[{1}](x, out, n) with `x` of the wrong element type:
/// checks the message and that `out` was not written.
template <typename X>
void expect_wrong_elements(X &&x, const std::string &passed) {
  auto out = poisoned<float>(64);
  static int line;
  std::string msg = error_of(
      [&] { (line = __LINE__, scale[{1}](std::forward<X>(x), out, 64)); });
  EXPECT_THAT(msg, HasSubstr(where(line) + ": error: "));
  EXPECT_THAT(msg, HasSubstr("kernel 'scale', argument 1 (bl::Ptr<f32>): "
                             "expected f32 elements, got " +
                             passed));
  EXPECT_THAT(msg, HasSubstr("pass a buffer of f32, or declare the "
                             "parameter bl::Ptr<"));
  EXPECT_TRUE(untouched(out));
}

TEST(HostMemoryErrors, HostBufferOfTheWrongElementType) {
  bl::HostBuffer<int32_t> x(64);
  expect_wrong_elements(x, "blocc::HostBuffer<i32>");
  const bl::HostBuffer<double> y(64);
  expect_wrong_elements(y, "const blocc::HostBuffer<f64>");
}

TEST(HostMemoryErrors, RawPointerOfTheWrongElementType) {
  std::vector<int16_t> x(64);
  expect_wrong_elements(x.data(), "i16*");
  const uint8_t *bytes = reinterpret_cast<const uint8_t *>(x.data());
  expect_wrong_elements(bytes, "const u8*");
}

TEST(HostMemoryErrors, SpanOfTheWrongElementType) {
  std::vector<double> x(64);
  expect_wrong_elements(std::span<double>(x), "std::span<f64>");
  expect_wrong_elements(std::span<const double>(x), "std::span<const f64>");
  expect_wrong_elements(std::span<double, 64>(x.data(), 64),
                        "std::span<f64, 64>");
}

TEST(HostMemoryErrors, VectorOfTheWrongElementType) {
  const std::vector<int64_t> x(64);
  expect_wrong_elements(x, "const std::vector<i64>");
}

TEST(HostMemoryErrors, ScalarForAPointerNamesEveryBufferKind) {
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { scale[{1}](1.f, out, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'scale', argument 1 (bl::Ptr<f32>): "
                             "expected a pointer to f32"));
  EXPECT_THAT(msg, HasSubstr("blocc::HostBuffer<T>"));
  EXPECT_TRUE(untouched(out));
}

TEST(HostMemoryErrors, ConstHostBufferWrittenByTheKernel) {
  std::vector<float> x(64, 1.f);
  const bl::HostBuffer<float> out(64, 5.f);
  std::string msg = error_of([&] { scale[{1}](x, out, 64); });
  EXPECT_THAT(msg, HasSubstr("kernel 'scale', argument 2 (bl::Ptr<f32>): "
                             "const blocc::HostBuffer<f32> is read-only, but "
                             "the kernel writes through it; pass a mutable "
                             "buffer"));
  for (float v : out)
    ASSERT_EQ(v, 5.f);
}

TEST(HostMemoryErrors, ConstSpanWrittenByTheKernel) {
  std::vector<float> x(64, 1.f), out(64, 5.f);
  std::string msg = error_of(
      [&] { scale[{1}](x, std::span<const float, 64>(out.data(), 64), 64); });
  EXPECT_THAT(msg, HasSubstr("argument 2 (bl::Ptr<f32>): std::span<const "
                             "f32, 64> is read-only"));
  EXPECT_EQ(out[0], 5.f);
}

} // namespace
