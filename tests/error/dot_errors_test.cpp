// Mistakes with bl::dot: shapes that do not multiply, blocks too small for
// the matrix units, element types dot does not take or does not mix, and
// accumulators of the wrong shape or type. Each names the line of the dot
// and says how to fix it; nothing runs.
#include "error/support.h"

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

TEST(DotErrors, InnerDimensionsDiffer) {
  static int line;
  auto k = bl::kernel("dot_inner",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros({16, 32}, bl::float16);
                        auto b = bl::zeros({16, 16}, bl::float16);
                        auto c = (line = __LINE__, bl::dot(a, b));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: the inner dimensions "
                                        "differ: a is tensor<16x32xf16> (K = "
                                        "32) but b is tensor<16x16xf16> (K = "
                                        "16)"));
  EXPECT_THAT(msg, HasSubstr("a must be [M, K] and b [K, N]"));
}

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

TEST(DotErrors, RanksDiffer) {
  static int line;
  auto k = bl::kernel("dot_ranks",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros({16, 16}, bl::float32);
                        auto b = bl::zeros({2, 16, 16}, bl::float32);
                        auto c = (line = __LINE__, bl::dot(a, b));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: a is tensor<16x16xf32> but "
                                        "b is tensor<2x16x16xf32>"));
  EXPECT_THAT(msg, HasSubstr("both inputs must be rank 2, or both rank 3"));
}

TEST(DotErrors, BatchSizesDiffer) {
  static int line;
  auto k = bl::kernel("dot_batch",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros({2, 16, 16}, bl::float32);
                        auto b = bl::zeros({4, 16, 16}, bl::float32);
                        auto c = (line = __LINE__, bl::dot(a, b));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: a has batch size 2 but b "
                                        "has 4"));
}

TEST(DotErrors, BlockSmallerThanSixteen) {
  static int line;
  auto k = bl::kernel("dot_small",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros({8, 16}, bl::float16);
                        auto b = bl::zeros({16, 16}, bl::float16);
                        auto c = (line = __LINE__, bl::dot(a, b));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: a tensor<8x16xf16> times b "
                                        "tensor<16x16xf16> has M = 8, N = 16, "
                                        "K = 16; dot needs M >= 16, N >= 16 "
                                        "and K >= 16"));
  EXPECT_THAT(msg, HasSubstr("use larger blocks and mask the extra rows"));
}

TEST(DotErrors, Int8NeedsKOfThirtyTwo) {
  static int line;
  auto k = bl::kernel("dot_int8_k",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros({16, 16}, bl::int8);
                        auto b = bl::zeros({16, 16}, bl::int8);
                        auto c = (line = __LINE__, bl::dot(a, b));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("dot needs M >= 16, N >= 16 and K >= 32"));
}

TEST(DotErrors, MixedInputTypes) {
  static int line;
  auto k = bl::kernel("dot_mixed",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros({16, 16}, bl::float16);
                        auto b = bl::zeros({16, 16}, bl::float32);
                        auto c = (line = __LINE__, bl::dot(a, b));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: a has f16 elements but b "
                                        "has f32; both inputs must have one "
                                        "element type (convert one with "
                                        "bl::cast)"));
}

TEST(DotErrors, UnsupportedInputType) {
  static int line;
  auto k = bl::kernel("dot_int32",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros({16, 32}, bl::int32);
                        auto b = bl::zeros({32, 16}, bl::int32);
                        auto c = (line = __LINE__, bl::dot(a, b));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: a has i32 elements; dot "
                                        "takes int8, float16, bfloat16, "
                                        "float32, float64 or fp8 inputs"));
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

TEST(DotErrors, AccumulatorOfWrongShape) {
  static int line;
  auto k = bl::kernel("dot_acc_shape",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros({16, 32}, bl::float16);
                        auto b = bl::zeros({32, 16}, bl::float16);
                        auto acc = bl::zeros({16, 32}, bl::float32);
                        acc = (line = __LINE__, bl::dot(a, b, acc));
                        keep(out, acc);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: the accumulator is "
                                        "tensor<16x32xf32> but a "
                                        "tensor<16x32xf16> times b "
                                        "tensor<32x16xf16> gives shape [16, "
                                        "16]"));
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

TEST(DotErrors, AccumulatorOfWrongType) {
  static int line;
  auto k = bl::kernel("dot_acc_type",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros({16, 16}, bl::float32);
                        auto acc = bl::zeros({16, 16}, bl::float16);
                        auto c = (line = __LINE__, bl::dot(a, a, acc));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: the accumulator has f16 "
                                        "elements, but f32 inputs accumulate "
                                        "in f32; make the accumulator that "
                                        "type (e.g. bl::zeros([16, 16], "
                                        "bl::float32))"));
}

TEST(DotErrors, Int8AccumulatorMustBeInt32) {
  static int line;
  auto k = bl::kernel("dot_int8_acc",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto a = bl::zeros({16, 32}, bl::int8);
                        auto b = bl::zeros({32, 16}, bl::int8);
                        auto acc = bl::zeros({16, 16}, bl::float32);
                        auto c = (line = __LINE__, bl::dot(a, b, acc));
                        keep(out, c);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::dot: the accumulator has f32 "
                                        "elements, but i8 inputs accumulate "
                                        "in i32"));
  EXPECT_THAT(msg, HasSubstr("bl::int32"));
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
