// cse: which ops merge (pure, equal, dominated) and which never do (loads,
// side effects, ops in sibling regions, differing attributes or types).
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

std::string after_cse(const std::string &text) {
  auto f = parse_function(text);
  verify(*f);
  cse(*f);
  verify(*f);
  return print(*f);
}

const char *kArgs = "%a: i32, %b: i32, %p: ptr<f32>";

TEST(CseTest, MergesIdenticalPureOps) {
  EXPECT_EQ(after_cse(function_text("  %0 = add %a, %b : i32\n"
                                    "  %1 = add %a, %b : i32\n"
                                    "  %2 = mul %0, %1 : i32\n"
                                    "  print %2\n",
                                    kArgs)),
            function_text("  %0 = add %a, %b : i32\n"
                          "  %1 = mul %0, %0 : i32\n"
                          "  print %1\n",
                          kArgs));
}

TEST(CseTest, MergesChainsInOneRun) {
  EXPECT_EQ(after_cse(function_text("  %0 = add %a, %b : i32\n"
                                    "  %1 = mul %0, %a : i32\n"
                                    "  %2 = add %a, %b : i32\n"
                                    "  %3 = mul %2, %a : i32\n"
                                    "  print %1, %3\n",
                                    kArgs)),
            function_text("  %0 = add %a, %b : i32\n"
                          "  %1 = mul %0, %a : i32\n"
                          "  print %1, %1\n",
                          kArgs));
}

TEST(CseTest, CommutativeOperandsInEitherOrder) {
  EXPECT_EQ(after_cse(function_text("  %0 = add %a, %b : i32\n"
                                    "  %1 = add %b, %a : i32\n"
                                    "  %2 = sub %a, %b : i32\n"
                                    "  %3 = sub %b, %a : i32\n"
                                    "  print %0, %1, %2, %3\n",
                                    kArgs)),
            function_text("  %0 = add %a, %b : i32\n"
                          "  %1 = sub %a, %b : i32\n"
                          "  %2 = sub %b, %a : i32\n"
                          "  print %0, %0, %1, %2\n",
                          kArgs));
}

TEST(CseTest, MergesConstantsAndProgramIds) {
  EXPECT_EQ(after_cse(function_text("  %0 = constant {value = 4} : i32\n"
                                    "  %1 = program_id {axis = 0} : i32\n"
                                    "  %2 = constant {value = 4} : i32\n"
                                    "  %3 = program_id {axis = 0} : i32\n"
                                    "  %4 = program_id {axis = 1} : i32\n"
                                    "  print %0, %1, %2, %3, %4\n",
                                    kArgs)),
            function_text("  %0 = constant {value = 4} : i32\n"
                          "  %1 = program_id {axis = 0} : i32\n"
                          "  %2 = program_id {axis = 1} : i32\n"
                          "  print %0, %1, %0, %1, %2\n",
                          kArgs));
}

TEST(CseTest, DifferentAttributesOrTypesStayApart) {
  std::string text =
      function_text("  %0 = cmp %a, %b {predicate = \"lt\"} : i1\n"
                    "  %1 = cmp %a, %b {predicate = \"le\"} : i1\n"
                    "  %2 = constant {value = 1} : i32\n"
                    "  %3 = constant {value = 1} : i64\n"
                    "  %4 = constant {value = 0.0} : f32\n"
                    "  %5 = constant {value = -0.0} : f32\n"
                    "  print %0, %1, %2, %3, %4, %5\n",
                    kArgs);
  EXPECT_EQ(after_cse(text), text);
}

TEST(CseTest, NaNConstantsMerge) {
  EXPECT_EQ(after_cse(function_text("  %0 = constant {value = nan} : f32\n"
                                    "  %1 = constant {value = nan} : f32\n"
                                    "  print %0, %1\n",
                                    kArgs)),
            function_text("  %0 = constant {value = nan} : f32\n"
                          "  print %0, %0\n",
                          kArgs));
}

TEST(CseTest, LoadsAreNeverMerged) {
  // A store between them may change memory; even without one, cse does not
  // track memory.
  std::string text = function_text("  %0 = load %p : f32\n"
                                   "  store %p, %0\n"
                                   "  %1 = load %p : f32\n"
                                   "  %2 = load %p : f32\n"
                                   "  print %1, %2\n",
                                   kArgs);
  EXPECT_EQ(after_cse(text), text);
}

TEST(CseTest, SideEffectsAreNeverMerged) {
  std::string text =
      function_text("  %0 = constant {value = 1.0} : f32\n"
                    "  %1 = atomic_rmw %p, %0 {kind = \"add\"} : f32\n"
                    "  %2 = atomic_rmw %p, %0 {kind = \"add\"} : f32\n"
                    "  store %p, %0\n  store %p, %0\n"
                    "  print %1, %2\n  print %1, %2\n",
                    kArgs);
  EXPECT_EQ(after_cse(text), text);
}

TEST(CseTest, OuterOpDominatesRegionOps) {
  EXPECT_EQ(after_cse(function_text("  %0 = add %a, %b : i32\n"
                                    "  %1 = cmp %a, %b {predicate = \"lt\"} "
                                    ": i1\n"
                                    "  %2 = if %1 : i32 {\n"
                                    "    %3 = add %a, %b : i32\n"
                                    "    yield %3\n"
                                    "  } {\n"
                                    "    yield %a\n"
                                    "  }\n"
                                    "  print %0, %2\n",
                                    kArgs)),
            function_text("  %0 = add %a, %b : i32\n"
                          "  %1 = cmp %a, %b {predicate = \"lt\"} : i1\n"
                          "  %2 = if %1 : i32 {\n"
                          "    yield %0\n"
                          "  } {\n"
                          "    yield %a\n"
                          "  }\n"
                          "  print %0, %2\n",
                          kArgs));
}

TEST(CseTest, SiblingRegionsAndLaterOpsStayApart) {
  // The then-branch's add does not dominate the else-branch's, nor the add
  // after the if.
  std::string text = function_text("  %0 = cmp %a, %b {predicate = \"lt\"} "
                                   ": i1\n"
                                   "  %1 = if %0 : i32 {\n"
                                   "    %2 = add %a, %b : i32\n"
                                   "    yield %2\n"
                                   "  } {\n"
                                   "    %3 = add %a, %b : i32\n"
                                   "    yield %3\n"
                                   "  }\n"
                                   "  %4 = add %a, %b : i32\n"
                                   "  print %1, %4\n",
                                   kArgs);
  EXPECT_EQ(after_cse(text), text);
}

TEST(CseTest, LoopBodiesMergeWithinThemselves) {
  EXPECT_EQ(after_cse(function_text("  %0 = constant {value = 0} : i32\n"
                                    "  %1 = constant {value = 1} : i32\n"
                                    "  %2 = for %0, %b, %1, %a : i32 {\n"
                                    "  ^(%3: i32, %4: i32):\n"
                                    "    %5 = mul %3, %4 : i32\n"
                                    "    %6 = mul %4, %3 : i32\n"
                                    "    %7 = add %5, %6 : i32\n"
                                    "    yield %7\n"
                                    "  }\n"
                                    "  print %2\n",
                                    kArgs)),
            function_text("  %0 = constant {value = 0} : i32\n"
                          "  %1 = constant {value = 1} : i32\n"
                          "  %2 = for %0, %b, %1, %a : i32 {\n"
                          "  ^(%3: i32, %4: i32):\n"
                          "    %5 = mul %3, %4 : i32\n"
                          "    %6 = add %5, %5 : i32\n"
                          "    yield %6\n"
                          "  }\n"
                          "  print %2\n",
                          kArgs));
}

std::string reduce_text(const std::string &combine_op) {
  return "  %0 = reduce %x {axis = 0} : f32 {\n"
         "  ^(%1: f32, %2: f32):\n"
         "    %3 = add %1, %2 : f32\n"
         "    yield %3\n"
         "  }\n"
         "  %4 = reduce %x {axis = 0} : f32 {\n"
         "  ^(%5: f32, %6: f32):\n"
         "    %7 = " +
         combine_op +
         " %5, %6 : f32\n"
         "    yield %7\n"
         "  }\n"
         "  print %0, %4\n";
}

TEST(CseTest, ReductionsWithEqualRegionsMerge) {
  EXPECT_EQ(after_cse(function_text(reduce_text("add"), "%x: tensor<16xf32>")),
            function_text("  %0 = reduce %x {axis = 0} : f32 {\n"
                          "  ^(%1: f32, %2: f32):\n"
                          "    %3 = add %1, %2 : f32\n"
                          "    yield %3\n"
                          "  }\n"
                          "  print %0, %0\n",
                          "%x: tensor<16xf32>"));
}

TEST(CseTest, ReductionsWithDifferentRegionsStayApart) {
  std::string text =
      function_text(reduce_text("maximum"), "%x: tensor<16xf32>");
  EXPECT_EQ(after_cse(text), text);
}

TEST(CseTest, OpsWithLoadsInTheirRegionsStayApart) {
  std::string loop = "  %N = for %0, %b, %1, %z : f32 {\n"
                     "  ^(%I: i32, %C: f32):\n"
                     "    %L = load %p : f32\n"
                     "    %S = add %C, %L : f32\n"
                     "    yield %S\n"
                     "  }\n";
  auto numbered = [&](int base) {
    std::string s = loop;
    const char *names[] = {"%N", "%I", "%C", "%L", "%S"};
    for (int i = 0; i < 5; ++i)
      for (size_t at = s.find(names[i]); at != std::string::npos;
           at = s.find(names[i]))
        s.replace(at, 2, "%" + std::to_string(base + i));
    return s;
  };
  std::string text =
      function_text("  %0 = constant {value = 0} : i32\n"
                    "  %1 = constant {value = 1} : i32\n" +
                        numbered(2) + numbered(7) + "  print %2, %7\n",
                    "%b: i32, %p: ptr<f32>, %z: f32");
  EXPECT_EQ(after_cse(text), text);
}

} // namespace
} // namespace blocc::ir
