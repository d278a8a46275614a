// The IR the frontend traces survives the textual form: printed, parsed
// back and printed again, it is the same text (so blocc-opt golden tests
// and BLOCC_DUMP output describe exactly what the compiler runs).
#include "e2e/support.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace bl = blocc;

namespace {

auto softmax_like =
    bl::kernel("softmax_like", [](bl::Ptr<float> in, bl::Ptr<float> out,
                                  bl::i32 n, bl::Const<int> BLOCK) {
      auto row = bl::program_id(0);
      auto cols = bl::arange(0, BLOCK);
      auto mask = cols < n;
      auto x = bl::load(in + row * n + cols, mask, -1.0f);
      auto acc = bl::zeros({BLOCK}, bl::float32);
      for (auto i : bl::range(0, 3)) {
        acc += bl::exp(x) * bl::cast(i, bl::float32);
      }
      bl::if_(n > 4, [&] { acc = acc * 2.0f; });
      bl::store(out + row * n + cols, acc, mask);
    });

TEST(TraceRoundTrip, PrintedIrParsesBackIdentically) {
  std::string text = softmax_like.ir_for(
      static_cast<float *>(nullptr), static_cast<float *>(nullptr), 100, 128);
  auto parsed = blocc::ir::parse_function(text);
  EXPECT_EQ(blocc::ir::print(*parsed), text);
  // The trace kept the user's lines.
  EXPECT_NE(text.find("trace_roundtrip_test.cpp"), std::string::npos) << text;
  EXPECT_NE(text.find("for"), std::string::npos) << text;
  EXPECT_NE(text.find("if"), std::string::npos) << text;
}

TEST(TraceRoundTrip, LoopAndBranchRunOnTheInterpreter) {
  const int rows = 3, n = 100;
  auto in = blocc::testing::random_floats(rows * n);
  auto out = blocc::testing::poisoned(rows * n);
  softmax_like[{rows}](in, out, n, 128);
  std::vector<double> want(rows * n);
  for (int i = 0; i < rows * n; ++i)
    want[i] = std::exp(double(in[i])) * (0 + 1 + 2) * 2;
  // exp in f32 (a few ulp) summed three times.
  EXPECT_TRUE(blocc::testing::all_close(out, want, 1e-5, 1e-6));
}

} // namespace
