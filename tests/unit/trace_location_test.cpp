// Every op a kernel's line creates names that line, those that blocc's
// library helpers build from other ops included (bl::cdiv's add, sub and
// div; bl::clamp's maximum and minimum; bl::sigmoid's; argmax's
// reduction), so that the IR, the inspection stages and errors point at
// the kernel rather than into blocc's sources.
#include "unit/tracing.h"

#include <gtest/gtest.h>

#include <set>

namespace bl = blocc;
using namespace blocc::unit_testing;
using blocc::Tensor;
using blocc::ir::OpCode;
using blocc::ir::Scalar;

namespace {

/// The lines of the ops of `fn` that `wanted` picks, each checked to be
/// in this file.
std::set<int> lines_of(blocc::ir::Function &fn,
                       const std::function<bool(OpCode)> &wanted) {
  std::set<int> lines;
  fn.walk([&](blocc::ir::Operation &op) {
    if (!wanted(op.code()))
      return;
    EXPECT_EQ(op.loc().file, "trace_location_test.cpp") << op.describe();
    lines.insert(op.loc().line);
  });
  return lines;
}

TEST(TraceLocation, LibraryHelpersNameTheCallersLine) {
  int cdiv_line = 0, clamp_line = 0, sigmoid_line = 0, argmax_line = 0;
  auto fn =
      trace({scalar(Scalar::I32), scalar(Scalar::F32)}, [&](const Args &a) {
        Tensor n(a[0]), bound(a[1]);
        Tensor x = bl::arange(0, 64).to(bl::float32);
        cdiv_line = __LINE__ + 1;
        Tensor blocks = bl::cdiv(n, 64);
        clamp_line = __LINE__ + 1;
        Tensor clamped = bl::clamp(x, -bound, bound);
        sigmoid_line = __LINE__ + 1;
        Tensor s = bl::sigmoid(clamped);
        argmax_line = __LINE__ + 1;
        Tensor at = bl::argmax(s, 0);
        (void)blocks;
        (void)at;
      });
  std::set<int> lines = lines_of(*fn, [](OpCode code) {
    return code != OpCode::Return && code != OpCode::Arange;
  });
  std::set<int> written = {cdiv_line, clamp_line, sigmoid_line, argmax_line};
  for (int line : lines)
    EXPECT_TRUE(written.count(line) || line == cdiv_line - 2)
        << "an op at line " << line;
  // Each helper's ops, several of them, all at its caller's line.
  EXPECT_TRUE(lines.count(cdiv_line));
  EXPECT_TRUE(lines.count(clamp_line));
  EXPECT_TRUE(lines.count(sigmoid_line));
  EXPECT_TRUE(lines.count(argmax_line));
}

// bl::clamp's minimum, built inside the library, finds a pointer: the
// error names the kernel's line.
TEST(TraceLocation, ErrorsInsideAHelperNameTheCallersLine) {
  int line = 0;
  std::string message = trace_error({scalar(Scalar::F32), pointer(Scalar::F32)},
                                    [&](const Args &a) {
                                      Tensor x(a[0]), p(a[1]);
                                      line = __LINE__ + 1;
                                      Tensor bad = bl::clamp(x, 0.f, p);
                                      (void)bad;
                                    });
  EXPECT_NE(message.find("trace_location_test.cpp:" + std::to_string(line)),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("arith.cpp"), std::string::npos) << message;
}

} // namespace
