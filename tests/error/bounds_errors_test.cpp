// Faults found while a kernel runs: accesses outside the buffer an argument
// points into, division by zero. They are found by every executor that
// checks accesses: the reference interpreter (always) and the default
// executor in checked mode (LaunchOptions::check, BLOCC_CHECK=1; the CPU
// backend where it is built), each test running on both with the same
// expectations. The message names the kernel, the program, the op with its
// line, the lane, the address and the buffer's bounds; a faulting access
// touches no memory.
#include "error/support.h"

#include <cstdio>

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

/// The executors under test: the interpreter, and whatever Auto picks for
/// host memory with bounds checks on.
class Bounds : public ::testing::TestWithParam<bl::LaunchOptions> {};

bl::LaunchOptions executor(bl::Backend backend, bl::Check check) {
  bl::LaunchOptions o;
  o.backend = backend;
  o.check = check;
  return o;
}

INSTANTIATE_TEST_SUITE_P(
    Executors, Bounds,
    ::testing::Values(executor(bl::Backend::Interpreter, bl::Check::Default),
                      executor(bl::Backend::Auto, bl::Check::Bounds)),
    [](const ::testing::TestParamInfo<bl::LaunchOptions> &info) {
      return std::string(info.param.backend == bl::Backend::Interpreter
                             ? "Interpreter"
                             : "DefaultChecked");
    });

std::string hex(const void *p) {
  char buffer[32];
  std::snprintf(
      buffer, sizeof buffer, "0x%016llx",
      static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buffer;
}

/// " [0x..., 0x...) of N bytes": how the message gives a buffer's bounds.
template <typename T> std::string bounds(const std::vector<T> &v) {
  return " [" + hex(v.data()) + ", " + hex(v.data() + v.size()) + ") of " +
         std::to_string(v.size() * sizeof(T)) + " bytes";
}

TEST_P(Bounds, LoadPastTheEnd) {
  static int line;
  // No mask: lanes 12..15 read past the 12-element input.
  auto k = bl::kernel("oob_load", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto v = (line = __LINE__, bl::load(x + offs));
    bl::store(out + offs, v);
  });
  std::vector<float> x(12, 1.f);
  auto out = poisoned<float>(16);
  std::string msg = error_of([&] { k[{1}].with(GetParam())(x, out); });
  EXPECT_THAT(msg, HasSubstr("kernel 'oob_load', program (0, 0, 0), load at " +
                             where(line) + ": "));
  EXPECT_THAT(msg, HasSubstr("out-of-bounds load: lane 12 reads 4 bytes at " +
                             hex(x.data() + 12)));
  EXPECT_THAT(msg, HasSubstr("outside argument 0"));
  EXPECT_THAT(msg, HasSubstr(bounds(x)));
  EXPECT_THAT(msg, HasSubstr("(element offset 12 of 12)"));
  EXPECT_TRUE(untouched(out));
}

TEST_P(Bounds, StorePastTheEnd) {
  static int line;
  // The mask is computed against the wrong bound (n + 4).
  auto k = bl::kernel("oob_store", [](bl::Ptr<float> out, bl::i32 n) {
    auto offs = bl::arange(0, 16);
    (line = __LINE__, bl::store(out + offs, 2.f, offs < n + 4));
  });
  auto out = poisoned<float>(10);
  std::string msg = error_of([&] { k[{1}].with(GetParam())(out, 10); });
  EXPECT_THAT(msg, HasSubstr("kernel 'oob_store', program (0, 0, 0), store "
                             "at " +
                             where(line) + ": "));
  EXPECT_THAT(msg, HasSubstr("out-of-bounds store: lane 10 writes 4 bytes at " +
                             hex(out.data() + 10)));
  EXPECT_THAT(msg, HasSubstr("outside argument 0"));
  EXPECT_THAT(msg, HasSubstr(bounds(out)));
  EXPECT_THAT(msg, HasSubstr("(element offset 10 of 10)"));
  // The access is checked before any lane writes: lanes 0..9 are untouched.
  EXPECT_TRUE(untouched(out));
}

TEST_P(Bounds, StoreBeforeTheStart) {
  static int line;
  auto k = bl::kernel("negative_offset", [](bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16) - 1;
    (line = __LINE__, bl::store(out + offs, 3.f));
  });
  auto out = poisoned<float>(16);
  std::string msg = error_of([&] { k[{1}].with(GetParam())(out); });
  EXPECT_THAT(msg, HasSubstr("store at " + where(line)));
  EXPECT_THAT(msg, HasSubstr("out-of-bounds store: lane 0 writes 4 bytes at " +
                             hex(out.data() - 1)));
  EXPECT_THAT(msg, HasSubstr(bounds(out)));
  EXPECT_TRUE(untouched(out));
}

TEST_P(Bounds, NamesTheFaultingProgram) {
  static int line;
  // 4 programs of 16 over 60 elements, no mask: program 3 runs off the end.
  auto k =
      bl::kernel("unmasked_tail", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto offs = bl::program_id(0) * 16 + bl::arange(0, 16);
        auto v = (line = __LINE__, bl::load(x + offs));
        bl::store(out + offs, v);
      });
  std::vector<float> x(60, 1.f);
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { k[{4}].with(GetParam())(x, out); });
  EXPECT_THAT(msg, HasSubstr("kernel 'unmasked_tail', program (3, 0, 0), load "
                             "at " +
                             where(line)));
  EXPECT_THAT(msg, HasSubstr("lane 12 reads 4 bytes at " + hex(x.data() + 60)));
  EXPECT_THAT(msg, HasSubstr("(element offset 60 of 60)"));
  // Program 3 wrote nothing; earlier programs ran to completion.
  std::vector<float> tail(out.begin() + 48, out.end());
  EXPECT_TRUE(untouched(tail));
}

TEST_P(Bounds, TwoDimensionalLaneIndex) {
  static int line;
  auto k = bl::kernel("oob_2d", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    // offs[i][j] = 2 j: up to 14 in a buffer of 8; lane (0, 4) is first out.
    auto offs = bl::zeros({4, 8}, bl::int32) + bl::arange(0, 8) * 2;
    auto v = (line = __LINE__, bl::load(x + offs));
    bl::store(out + offs / 2, v); // in bounds: 2 j / 2 = j < 8
  });
  std::vector<float> x(8, 1.f);
  auto out = poisoned<float>(8);
  std::string msg = error_of([&] { k[{1}].with(GetParam())(x, out); });
  EXPECT_THAT(msg, HasSubstr("load at " + where(line)));
  EXPECT_THAT(msg,
              HasSubstr("out-of-bounds load: lane 4 (index (0, 4)) reads"));
  EXPECT_TRUE(untouched(out));
}

TEST_P(Bounds, DivisionByZero) {
  static int line;
  auto k = bl::kernel("div_zero", [](bl::Ptr<int> x, bl::Ptr<int> out) {
    auto offs = bl::arange(0, 16);
    auto v = bl::load(x + offs);
    auto q = (line = __LINE__, 100 / v);
    bl::store(out + offs, q);
  });
  std::vector<int> x(16, 1);
  x[5] = 0;
  auto out = poisoned<int>(16);
  std::string msg = error_of([&] { k[{1}].with(GetParam())(x, out); });
  EXPECT_THAT(msg, HasSubstr("kernel 'div_zero', program (0, 0, 0), div at " +
                             where(line)));
  EXPECT_THAT(msg, HasSubstr("lane 5"));
  EXPECT_THAT(msg, HasSubstr("by zero"));
  EXPECT_TRUE(untouched(out));
}

} // namespace
