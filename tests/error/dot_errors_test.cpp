// Mistakes with bl::dot: shapes that do not multiply, blocks too small for
// the matrix units, element types dot does not take or does not mix, and
// accumulators of the wrong shape or type. Each names the line of the dot
// and says how to fix it; nothing runs.
#include "error/support.h"

#include <optional>
#include <utility>

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

// Each kernel takes (x, out, n) and makes one mistake.

// The write a real kernel would make after its dot; the mistake before it
// must stop the trace, so it never runs.
void keep(bl::Ptr<float> out, const bl::Tensor &product) {
  (void)product;
  bl::store(out + bl::arange(0, 16), 0.f);
}

/// dot of blocks of zeros (and an accumulator of zeros, where given) that
/// dot refuses: what the message says after "file:line: error: bl::dot: "
/// and the advice it gives, if any.
struct ZerosDot {
  const char *name;
  bl::Shape a;
  bl::DType a_type;
  bl::Shape b;
  bl::DType b_type;
  std::optional<std::pair<bl::Shape, bl::DType>> acc;
  const char *message;
  const char *advice = "";
};

const ZerosDot kZerosDots[] = {
    {"InnerDimensionsDiffer",
     {16, 32},
     bl::float16,
     {16, 16},
     bl::float16,
     {},
     "the inner dimensions differ: a is tensor<16x32xf16> (K = 32) but b is "
     "tensor<16x16xf16> (K = 16)",
     "a must be [M, K] and b [K, N]"},
    {"RanksDiffer",
     {16, 16},
     bl::float32,
     {2, 16, 16},
     bl::float32,
     {},
     "a is tensor<16x16xf32> but b is tensor<2x16x16xf32>",
     "both inputs must be rank 2, or both rank 3"},
    {"BatchSizesDiffer",
     {2, 16, 16},
     bl::float32,
     {4, 16, 16},
     bl::float32,
     {},
     "a has batch size 2 but b has 4"},
    {"BlockSmallerThanSixteen",
     {8, 16},
     bl::float16,
     {16, 16},
     bl::float16,
     {},
     "a tensor<8x16xf16> times b tensor<16x16xf16> has M = 8, N = 16, K = "
     "16; dot needs M >= 16, N >= 16 and K >= 16",
     "use larger blocks and mask the extra rows"},
    {"Int8NeedsKOfThirtyTwo",
     {16, 16},
     bl::int8,
     {16, 16},
     bl::int8,
     {},
     "",
     "dot needs M >= 16, N >= 16 and K >= 32"},
    {"MixedInputTypes",
     {16, 16},
     bl::float16,
     {16, 16},
     bl::float32,
     {},
     "a has f16 elements but b has f32; both inputs must have one element "
     "type (convert one with bl::cast)"},
    {"UnsupportedInputType",
     {16, 32},
     bl::int32,
     {32, 16},
     bl::int32,
     {},
     "a has i32 elements; dot takes int8, float16, bfloat16, float32, "
     "float64 or fp8 inputs"},
    {"AccumulatorOfWrongShape",
     {16, 32},
     bl::float16,
     {32, 16},
     bl::float16,
     std::pair{bl::Shape{16, 32}, bl::float32},
     "the accumulator is tensor<16x32xf32> but a tensor<16x32xf16> times b "
     "tensor<32x16xf16> gives shape [16, 16]"},
    {"AccumulatorOfWrongType",
     {16, 16},
     bl::float32,
     {16, 16},
     bl::float32,
     std::pair{bl::Shape{16, 16}, bl::float16},
     "the accumulator has f16 elements, but f32 inputs accumulate in f32; "
     "make the accumulator that type (e.g. bl::zeros([16, 16], "
     "bl::float32))"},
    {"Int8AccumulatorMustBeInt32",
     {16, 32},
     bl::int8,
     {32, 16},
     bl::int8,
     std::pair{bl::Shape{16, 16}, bl::float32},
     "the accumulator has f32 elements, but i8 inputs accumulate in i32",
     "bl::int32"},
};

class DotOfZeros : public ::testing::TestWithParam<ZerosDot> {};

TEST_P(DotOfZeros, NamesTheLineAndSaysWhy) {
  const ZerosDot &c = GetParam();
  static int line;
  auto k = bl::kernel(std::string("dot_") + c.name,
                      [&c](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros(c.a, c.a_type);
                        auto b = bl::zeros(c.b, c.b_type);
                        if (!c.acc) {
                          keep(out, (line = __LINE__, bl::dot(a, b)));
                          return;
                        }
                        auto acc = bl::zeros(c.acc->first, c.acc->second);
                        keep(out, (line = __LINE__, bl::dot(a, b, acc)));
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: " + c.message));
  EXPECT_THAT(msg, HasSubstr(c.advice));
}

INSTANTIATE_TEST_SUITE_P(DotErrors, DotOfZeros, ::testing::ValuesIn(kZerosDots),
                         [](const ::testing::TestParamInfo<ZerosDot> &info) {
                           return std::string(info.param.name);
                         });

TEST(DotErrors, RankOneInput) {
  static int line;
  auto k = bl::kernel("dot_rank1",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::load(x + bl::arange(0, 16));
                        auto b = bl::zeros({16, 16}, bl::float32);
                        auto c = (line = __LINE__, bl::dot(a, b));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: a is tensor<16xf32> of "
                                        "rank 1"));
  EXPECT_THAT(msg, HasSubstr("reshape with bl::reshape / bl::expand_dims"));
}

TEST(DotErrors, ScalarInput) {
  static int line;
  auto k = bl::kernel("dot_scalar",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros({16, 16}, bl::float32);
                        auto c = (line = __LINE__, bl::dot(a, 2.0f));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: b must be a 2-D block (or "
                                        "3-D with a batch dimension), got "
                                        "float constant"));
}

TEST(DotErrors, PointerInput) {
  static int line;
  auto k = bl::kernel("dot_pointers",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto pointers = x + bl::zeros({16, 16}, bl::int32);
                        auto b = bl::zeros({16, 16}, bl::float32);
                        auto c = (line = __LINE__, bl::dot(pointers, b));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: a is "
                                        "tensor<16x16xptr<f32>>, a block of "
                                        "pointers; load the values first"));
}

TEST(DotErrors, AccumulatorNotABlock) {
  static int line;
  auto k = bl::kernel("dot_acc_scalar",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros({16, 16}, bl::float32);
                        auto c = (line = __LINE__, bl::dot(a, a, 0.0f));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: the accumulator must be a "
                                        "block of shape [16, 16], got float "
                                        "constant"));
  EXPECT_THAT(msg, HasSubstr("start from bl::zeros([16, 16], ...)"));
}

TEST(DotErrors, AccumulatorDisagreesWithOutDtype) {
  static int line;
  auto k = bl::kernel(
      "dot_acc_out", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto a = bl::zeros({16, 16}, bl::float16);
        auto acc = bl::zeros({16, 16}, bl::float32);
        auto ieee = bl::InputPrecision::IEEE;
        auto c = (line = __LINE__, bl::dot(a, a, acc, ieee, bl::float16));
        keep(out, c);
      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: the accumulator has f32 "
                                        "elements, but f16 inputs accumulate "
                                        "in f16; make the accumulator that "
                                        "type (e.g. bl::zeros([16, 16], "
                                        "bl::float16))"));
}

TEST(DotErrors, OutDtypeNotAvailable) {
  static int line;
  auto k = bl::kernel(
      "dot_out_bf16", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto a = bl::zeros({16, 16}, bl::float16);
        auto tf32 = bl::InputPrecision::TF32;
        auto c = (line = __LINE__, bl::dot(a, a, tf32, bl::bfloat16));
        keep(out, c);
      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: out_dtype bf16 is not "
                                        "available for f16 inputs; they "
                                        "accumulate in f32 or f16 (convert "
                                        "the result with bl::cast "
                                        "afterwards)"));
}

TEST(DotErrors, Float16OutNeedsFloat16Inputs) {
  static int line;
  auto k = bl::kernel("dot_out_f16", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                        bl::i32 n) {
    auto a = bl::zeros({16, 16}, bl::float32);
    auto c =
        (line = __LINE__, bl::dot(a, a, bl::InputPrecision::IEEE, bl::float16));
    keep(out, c);
  });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: out_dtype f16 is not "
                                        "available for f32 inputs; they "
                                        "accumulate in f32"));
}

} // namespace
