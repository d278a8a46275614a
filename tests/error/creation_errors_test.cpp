// Mistakes in ops that make blocks from nothing (arange, zeros, full,
// program_id) and in using blocc ops where no kernel is being traced.
#include "error/support.h"

#include <algorithm>
#include <optional>

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

TEST(CreationErrors, ArangeLengthNotPowerOfTwo) {
  static int line;
  auto k = bl::kernel("arange_10", [](bl::Ptr<float> out) {
    auto offs = (line = __LINE__, bl::arange(0, 10));
    bl::store(out + offs, 1.f);
  });
  std::string msg = run_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::arange(0, 10): the length 10 is not a "
                             "power of two"));
  EXPECT_THAT(msg, HasSubstr("round the block size up to a power of two and "
                             "mask the extra lanes"));
}

TEST(CreationErrors, ArangeLengthFromConstNotPowerOfTwo) {
  static int line;
  auto k =
      bl::kernel("arange_const", [](bl::Ptr<float> out, bl::Const<int> BLOCK) {
        auto offs = (line = __LINE__, bl::arange(0, BLOCK));
        bl::store(out + offs, 1.f);
      });
  auto out = poisoned<float>(64);
  std::string msg = error_of([&] { k[{1}](out, 48); });
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("the length 48 is not a power of two"));
  EXPECT_TRUE(untouched(out));
}

TEST(CreationErrors, ArangeEndBeforeStart) {
  static int line;
  auto k = bl::kernel("arange_backwards", [](bl::Ptr<float> out) {
    auto offs = (line = __LINE__, bl::arange(16, 0));
    bl::store(out + offs, 1.f);
  });
  std::string msg = run_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::arange(16, 0): end must be greater than "
                             "start"));
}

TEST(CreationErrors, ArangeEmpty) {
  static int line;
  auto k = bl::kernel("arange_empty", [](bl::Ptr<float> out) {
    auto offs = (line = __LINE__, bl::arange(8, 8));
    bl::store(out + offs, 1.f);
  });
  std::string msg = run_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::arange(8, 8): end must be greater than "
                             "start"));
}

TEST(CreationErrors, ArangeBeyondInt32) {
  static int line;
  auto k = bl::kernel("arange_huge", [](bl::Ptr<float> out) {
    constexpr int64_t start = int64_t{1} << 31;
    auto offs = (line = __LINE__, bl::arange(start, start + 16));
    bl::store(out + offs, 1.f);
  });
  std::string msg = run_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::arange: the range must fit in int32"));
}

TEST(CreationErrors, FullShapeNotPowerOfTwo) {
  static int line;
  auto k = bl::kernel("full_12", [](bl::Ptr<float> out) {
    auto ones = (line = __LINE__, bl::full({4, 12}, 1.f, bl::float32));
    bl::store(out + bl::arange(0, 16), bl::load(out + bl::arange(0, 16)));
    (void)ones;
  });
  std::string msg = run_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::full: every dimension of a block must be a "
                             "power of two, got [4, 12]"));
  EXPECT_THAT(
      msg,
      HasSubstr(
          "round the size up to a power of two and mask the extra elements"));
}

TEST(CreationErrors, ZerosShapeNotPowerOfTwo) {
  static int line;
  auto k = bl::kernel("zeros_24", [](bl::Ptr<float> out) {
    auto z = (line = __LINE__, bl::zeros({24}, bl::float32));
    bl::store(out + bl::arange(0, 32), 0.f);
    (void)z;
  });
  std::string msg = run_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("every dimension of a block must be a power of "
                             "two, got [24]"));
}

TEST(CreationErrors, ZerosMessageNamesZeros) {
  static int line;
  auto k = bl::kernel("zeros_name", [](bl::Ptr<float> out) {
    auto z = (line = __LINE__, bl::zeros({24}, bl::float32));
    (void)z;
  });
  std::string msg = run_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::zeros: "));
}

TEST(CreationErrors, ZerosOfRankFour) {
  static int line;
  auto k = bl::kernel("zeros_rank4", [](bl::Ptr<float> out) {
    auto z = (line = __LINE__, bl::zeros({2, 2, 2, 2}, bl::float32));
    (void)z;
  });
  std::string msg = run_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg,
              HasSubstr("a block has 1 to 3 dimensions, got [2, 2, 2, 2]"));
}

TEST(CreationErrors, FullWithBlockValue) {
  static int line;
  auto k = bl::kernel("full_block", [](bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto filled = (line = __LINE__, bl::full({16}, offs, bl::float32));
    bl::store(out + offs, filled);
  });
  std::string msg = run_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::full: the fill value must be a scalar, got "
                             "tensor<16xi32>"));
}

TEST(CreationErrors, ProgramIdAxisThree) {
  static int line;
  auto k = bl::kernel("pid_3", [](bl::Ptr<float> out) {
    auto pid = (line = __LINE__, bl::program_id(3));
    bl::store(out + pid, 1.f);
  });
  std::string msg = run_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg,
              HasSubstr("bl::program_id(3): the grid has axes 0, 1 and 2"));
}

TEST(CreationErrors, NumProgramsNegativeAxis) {
  static int line;
  auto k = bl::kernel("nprog_neg", [](bl::Ptr<float> out) {
    auto n = (line = __LINE__, bl::num_programs(-1));
    bl::store(out + n, 1.f);
  });
  std::string msg = run_out(k, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::num_programs(-1): the grid has axes 0, 1 "
                             "and 2"));
}

TEST(CreationErrors, OpOutsideAnyKernel) {
  static int line;
  std::string msg = error_of([] { (line = __LINE__, bl::arange(0, 16)); });
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("blocc operations can only be used inside a "
                             "kernel body while it is traced"));
  EXPECT_THAT(msg, HasSubstr("bl::kernel"));
}

TEST(CreationErrors, OperatorOutsideAnyKernel) {
  static int line;
  std::string msg = error_of([] {
    bl::Tensor t;
    (line = __LINE__, t = bl::zeros({16}, bl::float32));
  });
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("can only be used inside a kernel body"));
}

// A Tensor kept from one trace (in a static, say) and used in another
// kernel's trace names a value of a different function.
TEST(CreationErrors, TensorFromAnotherKernel) {
  static std::optional<bl::Tensor> kept;
  static int line;
  auto first = bl::kernel("keeps", [](bl::Ptr<float> x) { kept = x; });
  auto second = bl::kernel("reuses", [](bl::Ptr<float> out) {
    (line = __LINE__, bl::store(*kept + bl::arange(0, 16), 1.f));
  });
  std::vector<float> x(16, 0.f);
  first[{1}](x);
  std::string msg = run_out(second, 64);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("another kernel"));
  kept.reset();
  EXPECT_TRUE(std::all_of(x.begin(), x.end(), [](float v) { return v == 0; }));
}

} // namespace
