// blocc::HostBuffer (runtime/host_buffer.h) as a container, and launches on
// every kind of host memory a kernel accepts: HostBuffer, raw pointers,
// std::span (mutable and const, dynamic and static extent), std::vector.
// Sized containers carry their extent, which checked mode checks against.
#include "cpu/support.h"

#include <cstdint>
#include <span>
#include <type_traits>

namespace bl = blocc;
using namespace blocc::cpu_testing;
using ::testing::HasSubstr;

namespace {

static_assert(!std::is_copy_constructible_v<bl::HostBuffer<float>>);
static_assert(!std::is_copy_assignable_v<bl::HostBuffer<float>>);
static_assert(std::is_nothrow_move_constructible_v<bl::HostBuffer<float>>);
static_assert(std::is_nothrow_move_assignable_v<bl::HostBuffer<float>>);
static_assert(std::is_convertible_v<bl::HostBuffer<float> &, std::span<float>>);
static_assert(std::is_convertible_v<const bl::HostBuffer<float> &,
                                    std::span<const float>>);
static_assert(
    !std::is_convertible_v<const bl::HostBuffer<float> &, std::span<float>>);

template <typename T> bool aligned(const T *p) {
  return reinterpret_cast<uintptr_t>(p) % 64 == 0;
}

// -------------------------------------------------------------- container
TEST(HostBuffer, DataIsAlignedForEverySizeAndType) {
  for (size_t n : {1, 3, 17, 64, 1000, 100003}) {
    SCOPED_TRACE(n);
    bl::HostBuffer<float> f(n);
    bl::HostBuffer<int8_t> b(n);
    bl::HostBuffer<double> d(n);
    bl::HostBuffer<bl::half> h(n);
    EXPECT_TRUE(aligned(f.data()) && aligned(b.data()) && aligned(d.data()) &&
                aligned(h.data()));
    EXPECT_EQ(f.size(), n);
    EXPECT_EQ(d.size_bytes(), n * sizeof(double));
  }
}

TEST(HostBuffer, ElementsStartAsAskedAndCanBeAccessed) {
  bl::HostBuffer<int32_t> zeros(37);
  for (int32_t v : zeros)
    EXPECT_EQ(v, 0);
  bl::HostBuffer<float> sevens(5, 7.5f);
  for (size_t i = 0; i < sevens.size(); ++i)
    EXPECT_EQ(sevens[i], 7.5f);
  auto values = random_values<float>(11, -1, 1);
  bl::HostBuffer<float> copy(values);
  EXPECT_TRUE(same(std::vector<float>(copy.begin(), copy.end()), values));
  copy[3] = 42.f;
  copy.at(4) = 43.f;
  EXPECT_EQ(copy.data()[3], 42.f);
  EXPECT_EQ(std::as_const(copy).at(4), 43.f);
  EXPECT_THROW(copy.at(11), std::out_of_range);
  copy.fill(-1.f);
  EXPECT_EQ(copy[10], -1.f);

  bl::HostBuffer<float> empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_TRUE(bl::HostBuffer<float>(0).empty());
}

TEST(HostBuffer, MovesTransferOwnership) {
  bl::HostBuffer<float> a(100, 2.f);
  float *data = a.data();
  bl::HostBuffer<float> b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.size(), 100u);
  EXPECT_EQ(a.data(), nullptr); // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(a.size(), 0u);      // NOLINT(bugprone-use-after-move)
  bl::HostBuffer<float> c(3);
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(c[99], 2.f);
  EXPECT_TRUE(b.empty()); // NOLINT(bugprone-use-after-move)
}

TEST(HostBuffer, SpansSeeTheSameElements) {
  bl::HostBuffer<int16_t> buffer(9, 3);
  std::span<int16_t> view = buffer;
  view[2] = 5;
  EXPECT_EQ(buffer[2], 5);
  const bl::HostBuffer<int16_t> &constant = buffer;
  std::span<const int16_t> read = constant;
  EXPECT_EQ(read.data(), buffer.data());
  EXPECT_EQ(read.size(), 9u);
  EXPECT_EQ(buffer.span().size(), 9u);
}

TEST(HostBuffer, TooManyElementsIsAnError) {
  EXPECT_THROW(bl::HostBuffer<double>(~size_t{0} / 4), std::length_error);
}

// -------------------------------------------------- launches on host memory
auto saxpy =
    bl::kernel("host_saxpy", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                bl::Ptr<float> out, bl::i32 n, bl::f32 a) {
      auto offs = bl::program_id(0) * 64 + bl::arange(0, 64);
      auto mask = offs < n;
      bl::store(out + offs,
                bl::load(x + offs, mask) * a + bl::load(y + offs, mask), mask);
    });

template <typename Out>
void expect_saxpy(const Out &out, const std::vector<float> &x,
                  const std::vector<float> &y, float a) {
  std::vector<double> want(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    want[i] = double(x[i]) * a + double(y[i]);
  EXPECT_TRUE(
      close(std::vector<float>(out.begin(), out.end()), want, 1e-6, 1e-6));
}

class HostMemoryLaunch : public ::testing::TestWithParam<bl::Backend> {
protected:
  bl::LaunchOptions options() const {
    return {.backend = GetParam(), .check = bl::Check::Bounds};
  }
};

TEST_P(HostMemoryLaunch, HostBuffers) {
  BLOCC_SEED_TRACE();
  const int n = 1009;
  auto x = random_values<float>(n, -2, 2), y = random_values<float>(n, -2, 2);
  const bl::HostBuffer<float> hx(x), hy(y);
  bl::HostBuffer<float> out(n, std::numeric_limits<float>::quiet_NaN());
  saxpy[{bl::cdiv(n, 64)}].with(options())(hx, hy, out, n, 0.5f);
  expect_saxpy(out, x, y, 0.5f);
}

TEST_P(HostMemoryLaunch, RawPointers) {
  BLOCC_SEED_TRACE();
  const int n = 1;
  auto x = random_values<float>(n, -2, 2), y = random_values<float>(n, -2, 2);
  auto out = poisoned<float>(n);
  const float *px = x.data();
  saxpy[{1}].with(options())(px, y.data(), out.data(), n, 3.f);
  expect_saxpy(out, x, y, 3.f);
}

TEST_P(HostMemoryLaunch, Spans) {
  BLOCC_SEED_TRACE();
  const int n = 131;
  auto x = random_values<float>(n, -2, 2), y = random_values<float>(n, -2, 2);
  auto out = poisoned<float>(n);
  saxpy[{bl::cdiv(n, 64)}].with(options())(std::span<const float>(x),
                                           std::span<float>(y),
                                           std::span<float>(out), n, -1.f);
  expect_saxpy(out, x, y, -1.f);
}

TEST_P(HostMemoryLaunch, SpansOfStaticExtent) {
  BLOCC_SEED_TRACE();
  constexpr size_t n = 67;
  auto x = random_values<float>(n, -2, 2), y = random_values<float>(n, -2, 2);
  auto out = poisoned<float>(n);
  std::span<const float, n> sx(x.data(), n);
  std::span<float, n> sy(y.data(), n), so(out.data(), n);
  saxpy[{2}].with(options())(sx, sy, so, static_cast<int>(n), 2.f);
  expect_saxpy(out, x, y, 2.f);
}

TEST_P(HostMemoryLaunch, Vectors) {
  BLOCC_SEED_TRACE();
  const int n = 64;
  const auto x = random_values<float>(n, -2, 2);
  auto y = random_values<float>(n, -2, 2);
  auto out = poisoned<float>(n);
  saxpy[{1}].with(options())(x, y, out, n, 0.25f);
  expect_saxpy(out, x, y, 0.25f);
}

// The extent travels with every sized container: one element too many is
// caught, and the message names the argument's buffer.
TEST_P(HostMemoryLaunch, SizedContainersCarryTheirExtent) {
  const int n = 100;
  std::vector<float> x(n, 1.f), y(n - 1, 1.f), out(n);
  bl::HostBuffer<float> hy(n - 1);
  std::span<const float, 99> sy(y.data(), 99);
  auto launch = [&](auto &&second) {
    return error_of([&] {
      saxpy[{bl::cdiv(n, 64)}].with(options())(x, second, out, n, 1.f);
    });
  };
  for (const std::string &message :
       {launch(y), launch(hy), launch(std::span<const float>(y)), launch(sy)}) {
    EXPECT_THAT(message, HasSubstr("out-of-bounds load"));
    EXPECT_THAT(message, HasSubstr("host_saxpy"));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, HostMemoryLaunch,
                         ::testing::Values(bl::Backend::Cpu,
                                           bl::Backend::Interpreter),
                         [](const auto &info) {
                           return info.param == bl::Backend::Cpu
                                      ? std::string("Cpu")
                                      : std::string("Interpreter");
                         });

} // namespace
