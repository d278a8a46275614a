// Whether a NaN's bits or a zero's sign reaches anything the kernel does
// (backends/nvptx/observed_uses.h and its two rules), on small kernels:
// through loops (a carried value's next iteration, the loop's result, a
// value feeding itself), through ifs, and into dots and casts.
#include "backends/nvptx/nan_blind_uses.h"
#include "backends/nvptx/unobserved_zero_signs.h"
#include "ir/parser.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace blocc::nvptx {
namespace {

/// The result of the op of `f` carrying the attribute {tag = "<tag>"}.
const ir::Value *tagged(ir::Function &f, const std::string &tag) {
  const ir::Value *found = nullptr;
  f.walk([&](ir::Operation &op) {
    if (op.string_attr_or("tag", "") == tag)
      found = op.result(0);
  });
  return found;
}

struct Kernel {
  std::unique_ptr<ir::Function> f;
  const ir::Value *operator[](const std::string &tag) {
    return tagged(*f, tag);
  }
};

Kernel parse(const std::string &body) {
  std::string text = "func @k(%p: ptr<f32> {divisibility = 16}, %n: i32) {\n"
                     "  %i = arange {start = 0, end = 128} : tensor<128xi32>\n"
                     "  %ps = splat %p : tensor<128xptr<f32>>\n"
                     "  %pp = addptr %ps, %i : tensor<128xptr<f32>>\n"
                     "  %x = load %pp : tensor<128xf32>\n"
                     "  %lb = constant {value = 0} : i32\n"
                     "  %step = constant {value = 1} : i32\n"
                     "  %one = constant {value = 1.0} : tensor<128xf32>\n" +
                     body + "  return\n}\n";
  return {ir::parse_function(text)};
}

bool nan_bits_unobserved(Kernel &k, const std::string &tag) {
  const ir::Value *v = k[tag];
  EXPECT_NE(v, nullptr) << tag;
  return results_with_unobserved_nan_bits(*k.f).count(v) != 0;
}

bool zero_sign_unobserved(Kernel &k, const std::string &tag) {
  const ir::Value *v = k[tag];
  EXPECT_NE(v, nullptr) << tag;
  return results_with_unobserved_zero_signs(*k.f).count(v) != 0;
}

TEST(ObservedUses, CarriedToAStoreInTheNextIterationIsObserved) {
  Kernel k = parse("  %r = for %lb, %n, %step, %x : tensor<128xf32> {\n"
                   "  ^(%it: i32, %c: tensor<128xf32>):\n"
                   "    store %pp, %c\n"
                   "    %e = exp %c {tag = \"e\"} : tensor<128xf32>\n"
                   "    yield %e\n"
                   "  }\n");
  EXPECT_FALSE(nan_bits_unobserved(k, "e"));
}

TEST(ObservedUses, CarriedToArithmeticOnlyIsNot) {
  Kernel k = parse("  %r = for %lb, %n, %step, %x : tensor<128xf32> {\n"
                   "  ^(%it: i32, %c: tensor<128xf32>):\n"
                   "    %y = add %c, %one : tensor<128xf32>\n"
                   "    store %pp, %y\n"
                   "    %e = exp %c {tag = \"e\"} : tensor<128xf32>\n"
                   "    yield %e\n"
                   "  }\n");
  EXPECT_TRUE(nan_bits_unobserved(k, "e"));
}

TEST(ObservedUses, TheLoopsResultCountsToo) {
  Kernel k = parse("  %r = for %lb, %n, %step, %x : tensor<128xf32> {\n"
                   "  ^(%it: i32, %c: tensor<128xf32>):\n"
                   "    %e = exp %c {tag = \"e\"} : tensor<128xf32>\n"
                   "    yield %e\n"
                   "  }\n"
                   "  store %pp, %r\n");
  EXPECT_FALSE(nan_bits_unobserved(k, "e"));
}

// A running maximum feeds itself through the loop: settled by whether any
// chain of uses reaches an observer, not by the cycle.
TEST(ObservedUses, AValueFeedingItselfIsSettledByItsOtherUses) {
  const std::string loop =
      "  %r = for %lb, %n, %step, %x : tensor<128xf32> {\n"
      "  ^(%it: i32, %m: tensor<128xf32>):\n"
      "    %mx = maximum %m, %x {tag = \"mx\"} : tensor<128xf32>\n"
      "    %d = sub %x, %mx : tensor<128xf32>\n"
      "    %e = exp %d : tensor<128xf32>\n"
      "    store %pp, %e\n"
      "    yield %mx\n"
      "  }\n";
  Kernel hidden = parse(loop);
  EXPECT_TRUE(nan_bits_unobserved(hidden, "mx"));
  EXPECT_TRUE(zero_sign_unobserved(hidden, "mx"));
  Kernel stored = parse(loop + "  store %pp, %r\n");
  EXPECT_FALSE(nan_bits_unobserved(stored, "mx"));
  EXPECT_FALSE(zero_sign_unobserved(stored, "mx"));
}

TEST(ObservedUses, IfResultsPassTheirYieldedValuesOn) {
  const std::string branch = "  %c0 = constant {value = 1} : i1\n"
                             "  %r = if %c0 : tensor<128xf32> {\n"
                             "    %e = exp %x {tag = \"e\"} : tensor<128xf32>\n"
                             "    yield %e\n"
                             "  } {\n"
                             "    yield %x\n"
                             "  }\n";
  Kernel stored = parse(branch + "  store %pp, %r\n");
  EXPECT_FALSE(nan_bits_unobserved(stored, "e"));
  Kernel added = parse(branch + "  %y = add %r, %one : tensor<128xf32>\n"
                                "  store %pp, %y\n");
  EXPECT_TRUE(nan_bits_unobserved(added, "e"));
}

// A dot into +0 (attention's scores): its zero's sign is unobserved where
// it reaches only a maximum and an exponential, observed where stored; a
// dot into another accumulator is not asked about.
TEST(ObservedUses, ADotIntoZeroWhoseScoresReachOnlyExponentials) {
  const std::string dot =
      "  %xs = reshape %x : tensor<16x8xf32>\n"
      "  %ys = reshape %x : tensor<8x16xf32>\n"
      "  %z = constant {value = 0.0} : tensor<16x16xf32>\n"
      "  %s = dot %xs, %ys, %z {tag = \"s\"} : tensor<16x16xf32>\n"
      "  %w = constant {value = 1.0} : tensor<16x16xf32>\n"
      "  %t = dot %xs, %ys, %w {tag = \"t\"} : tensor<16x16xf32>\n"
      "  %m = reduce %s {axis = 1} : tensor<16xf32> {\n"
      "  ^(%a: f32, %b: f32):\n"
      "    %mx = maximum %a, %b : f32\n"
      "    yield %mx\n"
      "  }\n"
      "  %e = exp2 %s : tensor<16x16xf32>\n"
      "  %u = exp2 %t : tensor<16x16xf32>\n"
      "  %flat = reshape %e : tensor<128xf32>\n"
      "  store %pp, %flat\n";
  Kernel hidden = parse(dot);
  EXPECT_TRUE(zero_sign_unobserved(hidden, "s"));
  EXPECT_FALSE(zero_sign_unobserved(hidden, "t"));
  Kernel stored = parse(dot + "  %sf = reshape %s : tensor<128xf32>\n"
                              "  store %pp, %sf\n");
  EXPECT_FALSE(zero_sign_unobserved(stored, "s"));
}

} // namespace
} // namespace blocc::nvptx
