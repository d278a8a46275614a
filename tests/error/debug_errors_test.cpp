// Assertions written by the kernel author: bl::static_assert_ fails the
// trace, bl::device_assert fails the run. Misused debug ops and hints
// (bl::device_print, bl::device_assert, bl::multiple_of, bl::max_contiguous,
// bl::max_constancy) fail the trace, naming the line.
#include "error/support.h"

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

// Each kernel takes (x, out, n) and makes one mistake.

TEST(DebugErrors, StaticAssertFails) {
  static int line;
  auto k = bl::kernel("needs_big_block", [](bl::Ptr<float> out,
                                            bl::Const<int> BLOCK) {
    (line = __LINE__, bl::static_assert_(BLOCK >= 32, "BLOCK must be >= 32"));
    bl::store(out + bl::arange(0, BLOCK), 1.f);
  });
  auto out = poisoned<float>(16);
  std::string msg = error_of([&] { k[{1}](out, 16); });
  EXPECT_THAT(msg, HasSubstr(at(line) + "static assertion failed: BLOCK must "
                                        "be >= 32"));
  EXPECT_TRUE(untouched(out));
}

TEST(DebugErrors, StaticAssertPassesForOtherSpecialization) {
  auto k = bl::kernel("needs_big_block_ok",
                      [](bl::Ptr<float> out, bl::Const<int> BLOCK) {
                        bl::static_assert_(BLOCK >= 32, "BLOCK must be >= 32");
                        bl::store(out + bl::arange(0, BLOCK), 1.f);
                      });
  std::vector<float> out(32);
  EXPECT_NO_THROW(k[{1}](out, 32));
  // A failed specialization is not cached: it fails again, with the message.
  std::vector<float> small(16);
  std::string msg = error_of([&] { k[{1}](small, 16); });
  EXPECT_THAT(msg, HasSubstr("static assertion failed"));
  msg = error_of([&] { k[{1}](small, 16); });
  EXPECT_THAT(msg, HasSubstr("static assertion failed"));
}

TEST(DebugErrors, DeviceAssertOnNonBoolean) {
  static int line;
  auto k = bl::kernel(
      "assert_float", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto v = bl::load(x + bl::arange(0, 16));
        (line = __LINE__, bl::device_assert(v, "v must be nonzero"));
        bl::store(out + bl::arange(0, 16), v);
      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::device_assert: the condition "
                                        "must be boolean (i1), got "
                                        "tensor<16xf32>; compare it, e.g. x "
                                        "!= 0 or offsets < n"));
}

TEST(DebugErrors, DeviceAssertFailsAtRunTime) {
  static int line;
  auto k = bl::kernel("assert_in_bounds", [](bl::Ptr<float> x,
                                             bl::Ptr<float> out, bl::i32 n) {
    auto offs = bl::arange(0, 32);
    (line = __LINE__, bl::device_assert(offs < n, "offsets must be below n"));
    bl::store(out + offs, 1.f);
  });
  std::string msg =
      run_x_out(k, 64, 16); // n = 16: lane 16 is the first false one
  EXPECT_THAT(msg, HasSubstr("kernel 'assert_in_bounds', program (0, 0, 0), "
                             "assert at " +
                             where(line) +
                             ": assertion failed: offsets must be below n "
                             "(lane 16 is false)"));
}

TEST(DebugErrors, DevicePrintPrefixOnTwoLines) {
  static int line;
  auto k = bl::kernel("print_newline",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto v = bl::load(x + bl::arange(0, 16));
                        (line = __LINE__, bl::device_print("v\nw", {v}));
                        bl::store(out + bl::arange(0, 16), v);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::device_print: the prefix"));
  EXPECT_THAT(msg, HasSubstr("is not printable ASCII (code 10); use letters, "
                             "digits, punctuation and spaces on one line"));
}

TEST(DebugErrors, DevicePrintOfUnassignedVariable) {
  static int line;
  auto k = bl::kernel("print_unbound",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        bl::Tensor later;
                        (line = __LINE__, bl::device_print("later", {later}));
                        bl::store(out + bl::arange(0, 16), 0.f);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "this Tensor variable has no value "
                                        "yet; assign one before reading it"));
}

TEST(DebugErrors, HintWithOneValuePerWrongDimension) {
  static int line;
  auto k = bl::kernel(
      "hint_count", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto offs = bl::arange(0, 16);
        auto hinted = (line = __LINE__, bl::multiple_of(offs, {16, 16}));
        bl::store(out + hinted, 0.f);
      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::multiple_of{16, 16}: "
                                        "tensor<16xi32> has 1 dimension; give "
                                        "one value per dimension, or a single "
                                        "value for all of them"));
}

TEST(DebugErrors, HintValueNotPositive) {
  static int line;
  auto k = bl::kernel(
      "hint_zero", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto offs = bl::arange(0, 16);
        auto hinted = (line = __LINE__, bl::max_constancy(offs, 0));
        bl::store(out + hinted, 0.f);
      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::max_constancy{0}: hint values "
                                        "must be positive, got 0"));
}

TEST(DebugErrors, ContiguityHintOnFloats) {
  static int line;
  auto k = bl::kernel(
      "hint_float", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto v = bl::load(x + bl::arange(0, 16));
        auto hinted = (line = __LINE__, bl::max_contiguous(v, 16));
        bl::store(out + bl::arange(0, 16), hinted);
      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::max_contiguous describes "
                                        "integer offsets or pointers, got "
                                        "tensor<16xf32>"));
  EXPECT_THAT(msg, HasSubstr("(bl::max_constancy fits any type)"));
}

TEST(DebugErrors, HintOnANumber) {
  static int line;
  auto k = bl::kernel(
      "hint_number", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto hinted = (line = __LINE__, bl::multiple_of(64, 16));
        bl::store(out + hinted, 0.f);
      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::multiple_of needs a tensor, got "
                                        "integer constant 64"));
}

} // namespace
