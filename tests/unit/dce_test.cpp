// dce: what goes (unused pure ops, empty control flow, loop-carried values
// nothing observes) and what stays (effects, volatile loads, values that
// reach an effect or the loop's result).
#include "ir/parser.h"
#include "ir/passes.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

namespace blocc::ir {
namespace {

std::string function_text(const std::string &body,
                          const std::string &arguments) {
  return "func @k(" + arguments + ") {\n" + body + "  return\n}\n";
}

std::string after_dce(const std::string &text) {
  auto f = parse_function(text);
  verify(*f);
  dce(*f);
  verify(*f);
  return print(*f);
}

const char *kArgs = "%a: i32, %n: i32, %p: ptr<i32>";

TEST(DceTest, RemovesUnusedChains) {
  EXPECT_EQ(after_dce(function_text("  %0 = add %a, %a : i32\n"
                                    "  %1 = mul %0, %0 : i32\n"
                                    "  %2 = splat %1 : tensor<8xi32>\n"
                                    "  %3 = arange {end = 8, start = 0} : "
                                    "tensor<8xi32>\n"
                                    "  %4 = add %2, %3 : tensor<8xi32>\n",
                                    kArgs)),
            function_text("", kArgs));
}

TEST(DceTest, KeepsEffectsAndWhatTheyUse) {
  std::string text =
      function_text("  %0 = add %a, %a : i32\n"
                    "  store %p, %0\n"
                    "  %1 = atomic_rmw %p, %a {kind = \"add\"} : i32\n"
                    "  %2 = atomic_cas %p, %a, %n : i32\n"
                    "  %3 = cmp %a, %n {predicate = \"lt\"} : i1\n"
                    "  assert %3 {message = \"a < n\"}\n"
                    "  print %a {prefix = \"a\"}\n",
                    kArgs);
  EXPECT_EQ(after_dce(text), text);
}

TEST(DceTest, VolatileLoadsStay) {
  EXPECT_EQ(after_dce(function_text("  %0 = load %p {volatile = 1} : i32\n"
                                    "  %1 = load %p : i32\n"
                                    "  %2 = load %p {volatile = 0} : i32\n",
                                    kArgs)),
            function_text("  %0 = load %p {volatile = 1} : i32\n", kArgs));
}

TEST(DceTest, RemovesEmptyIf) {
  EXPECT_EQ(after_dce(function_text("  %0 = cmp %a, %n {predicate = \"lt\"} "
                                    ": i1\n"
                                    "  if %0 {\n"
                                    "    %1 = add %a, %a : i32\n"
                                    "    yield\n"
                                    "  } {\n"
                                    "    yield\n"
                                    "  }\n",
                                    kArgs)),
            function_text("", kArgs));
}

TEST(DceTest, KeepsIfWithAStoreButEmptiesWhatIsDead) {
  EXPECT_EQ(after_dce(function_text("  %0 = cmp %a, %n {predicate = \"lt\"} "
                                    ": i1\n"
                                    "  if %0 {\n"
                                    "    %1 = add %a, %a : i32\n"
                                    "    store %p, %a\n"
                                    "    yield\n"
                                    "  } {\n"
                                    "    yield\n"
                                    "  }\n",
                                    kArgs)),
            function_text("  %0 = cmp %a, %n {predicate = \"lt\"} : i1\n"
                          "  if %0 {\n"
                          "    store %p, %a\n"
                          "    yield\n"
                          "  } {\n"
                          "    yield\n"
                          "  }\n",
                          kArgs));
}

TEST(DceTest, RemovesIfWhoseResultsAreUnused) {
  EXPECT_EQ(after_dce(function_text("  %0 = cmp %a, %n {predicate = \"lt\"} "
                                    ": i1\n"
                                    "  %1 = if %0 : i32 {\n"
                                    "    %2 = add %a, %a : i32\n"
                                    "    yield %2\n"
                                    "  } {\n"
                                    "    yield %a\n"
                                    "  }\n",
                                    kArgs)),
            function_text("", kArgs));
}

/// A loop from 0 to %n carrying one i32 from %a, with `body` before the
/// yield of `yielded`; the result is printed when `print_result`.
std::string loop(const std::string &body, const std::string &yielded,
                 bool print_result) {
  return function_text("  %0 = constant {value = 0} : i32\n"
                       "  %1 = constant {value = 1} : i32\n"
                       "  %2 = for %0, %n, %1, %a : i32 {\n"
                       "  ^(%3: i32, %4: i32):\n" +
                           body + "    yield " + yielded +
                           "\n"
                           "  }\n" +
                           (print_result ? "  print %2\n" : ""),
                       kArgs);
}

TEST(DceTest, RemovesAPureLoopWhoseResultIsUnused) {
  EXPECT_EQ(after_dce(loop("    %5 = add %4, %3 : i32\n", "%5", false)),
            function_text("", kArgs));
}

TEST(DceTest, RemovesDeadCarriedValueButKeepsTheLoop) {
  EXPECT_EQ(after_dce(loop("    %5 = add %4, %3 : i32\n"
                           "    %6 = mul %5, %5 : i32\n"
                           "    store %p, %3\n",
                           "%6", false)),
            function_text("  %0 = constant {value = 0} : i32\n"
                          "  %1 = constant {value = 1} : i32\n"
                          "  for %0, %n, %1 {\n"
                          "  ^(%2: i32):\n"
                          "    store %p, %2\n"
                          "    yield\n"
                          "  }\n",
                          kArgs));
}

TEST(DceTest, KeepsCarriedValueWhoseResultIsUsed) {
  std::string text = loop("    %5 = add %4, %3 : i32\n"
                          "    store %p, %3\n",
                          "%5", true);
  EXPECT_EQ(after_dce(text), text);
}

TEST(DceTest, KeepsCarriedValueThatReachesAnEffect) {
  std::string text = loop("    %5 = add %4, %3 : i32\n"
                          "    store %p, %5\n",
                          "%5", false);
  EXPECT_EQ(after_dce(text), text);
}

TEST(DceTest, RemovesOnlyTheDeadOneOfTwoCarriedValues) {
  std::string text = function_text("  %0 = constant {value = 0} : i32\n"
                                   "  %1 = constant {value = 1} : i32\n"
                                   "  %2:2 = for %0, %n, %1, %a, %a : i32, "
                                   "i32 {\n"
                                   "  ^(%3: i32, %4: i32, %5: i32):\n"
                                   "    %6 = add %4, %3 : i32\n"
                                   "    %7 = mul %5, %5 : i32\n"
                                   "    yield %6, %7\n"
                                   "  }\n"
                                   "  print %2#1\n",
                                   kArgs);
  EXPECT_EQ(after_dce(text), function_text("  %0 = constant {value = 0} : i32\n"
                                           "  %1 = constant {value = 1} : i32\n"
                                           "  %2 = for %0, %n, %1, %a : i32 {\n"
                                           "  ^(%3: i32, %4: i32):\n"
                                           "    %5 = mul %4, %4 : i32\n"
                                           "    yield %5\n"
                                           "  }\n"
                                           "  print %2\n",
                                           kArgs));
}

TEST(DceTest, KeepsCarriedValueFeedingAnotherCarriedValue) {
  // %4's result is unused, but it flows into the second carried value,
  // whose result is printed.
  std::string text = function_text("  %0 = constant {value = 0} : i32\n"
                                   "  %1 = constant {value = 1} : i32\n"
                                   "  %2:2 = for %0, %n, %1, %a, %a : i32, "
                                   "i32 {\n"
                                   "  ^(%3: i32, %4: i32, %5: i32):\n"
                                   "    %6 = add %4, %3 : i32\n"
                                   "    %7 = mul %5, %4 : i32\n"
                                   "    yield %6, %7\n"
                                   "  }\n"
                                   "  print %2#1\n",
                                   kArgs);
  EXPECT_EQ(after_dce(text), text);
}

TEST(DceTest, RemovesUnusedReductions) {
  EXPECT_EQ(after_dce(function_text("  %0 = reduce %x {axis = 0} : f32 {\n"
                                    "  ^(%1: f32, %2: f32):\n"
                                    "    %3 = add %1, %2 : f32\n"
                                    "    yield %3\n"
                                    "  }\n",
                                    "%x: tensor<16xf32>")),
            function_text("", "%x: tensor<16xf32>"));
}

TEST(DceTest, KeepsLoopsThatStore) {
  std::string text = function_text("  %0 = constant {value = 0} : i32\n"
                                   "  %1 = constant {value = 1} : i32\n"
                                   "  for %0, %n, %1 {\n"
                                   "  ^(%2: i32):\n"
                                   "    store %p, %2\n"
                                   "    yield\n"
                                   "  }\n",
                                   kArgs);
  EXPECT_EQ(after_dce(text), text);
}

} // namespace
} // namespace blocc::ir
