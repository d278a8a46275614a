// canonicalize: constant folding in each element type's arithmetic,
// algebraic identities (and the float ones it must not apply), shape
// folding, hints, and control flow. Inputs are textual IR; each result is
// cleaned with dce so that only what canonicalize produced remains.
#include "backends/interpreter/interpreter.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/passes.h"
#include "ir/passes/constant_element.h"
#include "ir/printer.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <sstream>

namespace blocc::ir {
namespace {

std::string function_text(const std::string &body,
                          const std::string &arguments = "") {
  return "func @k(" + arguments + ") {\n" + body + "  return\n}\n";
}

/// Parses, verifies, canonicalizes, removes what became dead, verifies
/// again and prints.
std::string canonicalized(const std::string &text) {
  auto f = parse_function(text);
  verify(*f);
  canonicalize(*f);
  dce(*f);
  verify(*f);
  return print(*f);
}

/// `a OP b` on constants of `type`, printed.
std::string fold(const std::string &op, const std::string &type,
                 const std::string &a, const std::string &b) {
  return canonicalized(
      function_text("  %0 = constant {value = " + a + "} : " + type +
                    "\n  %1 = constant {value = " + b + "} : " + type +
                    "\n  %2 = " + op + " %0, %1 : " + type + "\n  print %2\n"));
}

/// The function a fold to the constant `value` of `type` leaves behind.
std::string folded_to(const std::string &value, const std::string &type) {
  return function_text("  %0 = constant {value = " + value + "} : " + type +
                       "\n  print %0\n");
}

/// The function a fold that did not happen leaves behind.
std::string unfolded(const std::string &op, const std::string &type,
                     const std::string &a, const std::string &b) {
  return function_text("  %0 = constant {value = " + a + "} : " + type +
                       "\n  %1 = constant {value = " + b + "} : " + type +
                       "\n  %2 = " + op + " %0, %1 : " + type +
                       "\n  print %2\n");
}

// --- integer folding ---------------------------------------------------------

TEST(CanonicalizeTest, SignedAddWrapsAround) {
  EXPECT_EQ(fold("add", "i32", "2147483647", "1"),
            folded_to("-2147483648", "i32"));
}

TEST(CanonicalizeTest, UnsignedAddWrapsAround) {
  EXPECT_EQ(fold("add", "u8", "200", "100"), folded_to("44", "u8"));
}

TEST(CanonicalizeTest, SignedMulWrapsAround) {
  EXPECT_EQ(fold("mul", "i8", "16", "9"), folded_to("-112", "i8"));
}

TEST(CanonicalizeTest, SubIntoNegativeUnsigned) {
  EXPECT_EQ(fold("sub", "u16", "1", "2"), folded_to("65535", "u16"));
}

TEST(CanonicalizeTest, DivisionFollowsSignedness) {
  EXPECT_EQ(fold("div", "i32", "-7", "2"), folded_to("-3", "i32"));
  EXPECT_EQ(fold("div", "u32", "4294967295", "2"),
            folded_to("2147483647", "u32"));
  EXPECT_EQ(fold("rem", "i32", "-7", "2"), folded_to("-1", "i32"));
  EXPECT_EQ(fold("rem", "u8", "255", "10"), folded_to("5", "u8"));
}

TEST(CanonicalizeTest, UndefinedDivisionsStay) {
  EXPECT_EQ(fold("div", "i32", "5", "0"), unfolded("div", "i32", "5", "0"));
  EXPECT_EQ(fold("rem", "u32", "5", "0"), unfolded("rem", "u32", "5", "0"));
  EXPECT_EQ(fold("div", "i8", "-128", "-1"),
            unfolded("div", "i8", "-128", "-1"));
}

TEST(CanonicalizeTest, ShiftsFollowSignedness) {
  EXPECT_EQ(fold("shr", "i32", "-8", "1"), folded_to("-4", "i32"));
  EXPECT_EQ(fold("shr", "u32", "4294967288", "1"),
            folded_to("2147483644", "u32"));
  EXPECT_EQ(fold("shl", "i8", "64", "1"), folded_to("-128", "i8"));
}

TEST(CanonicalizeTest, ShiftsByTheWidthStay) {
  EXPECT_EQ(fold("shl", "i32", "1", "32"), unfolded("shl", "i32", "1", "32"));
  EXPECT_EQ(fold("shr", "i32", "1", "-1"), unfolded("shr", "i32", "1", "-1"));
}

TEST(CanonicalizeTest, MinMaxFollowSignedness) {
  EXPECT_EQ(fold("minimum", "i32", "-1", "1"), folded_to("-1", "i32"));
  EXPECT_EQ(fold("minimum", "u32", "4294967295", "1"), folded_to("1", "u32"));
  EXPECT_EQ(fold("maximum", "u64", "-1", "1"), folded_to("-1", "u64"));
}

TEST(CanonicalizeTest, BitwiseOps) {
  EXPECT_EQ(fold("and", "i32", "12", "10"), folded_to("8", "i32"));
  EXPECT_EQ(fold("or", "i32", "12", "10"), folded_to("14", "i32"));
  EXPECT_EQ(fold("xor", "i1", "1", "1"), folded_to("0", "i1"));
}

TEST(CanonicalizeTest, Umulhi) {
  EXPECT_EQ(fold("umulhi", "u32", "4294967295", "4294967295"),
            folded_to("4294967294", "u32"));
  EXPECT_EQ(fold("umulhi", "i32", "-1", "2"), folded_to("1", "i32"));
}

TEST(CanonicalizeTest, UnaryIntegerOps) {
  EXPECT_EQ(
      canonicalized(function_text("  %0 = constant {value = -128} : i8\n"
                                  "  %1 = neg %0 : i8\n  %2 = abs %0 : i8\n"
                                  "  %3 = not %0 : i8\n  print %1, %2, %3\n")),
      function_text("  %0 = constant {value = -128} : i8\n"
                    "  %1 = constant {value = -128} : i8\n"
                    "  %2 = constant {value = 127} : i8\n"
                    "  print %0, %1, %2\n"));
}

TEST(CanonicalizeTest, ChainsFoldToAFixedPoint) {
  EXPECT_EQ(canonicalized(function_text("  %0 = constant {value = 2} : i32\n"
                                        "  %1 = constant {value = 3} : i32\n"
                                        "  %2 = add %0, %1 : i32\n"
                                        "  %3 = constant {value = 4} : i32\n"
                                        "  %4 = mul %2, %3 : i32\n"
                                        "  %5 = splat %4 : tensor<8xi32>\n"
                                        "  %6 = splat %0 : tensor<8xi32>\n"
                                        "  %7 = sub %5, %6 : tensor<8xi32>\n"
                                        "  print %7\n")),
            function_text("  %0 = constant {value = 18} : tensor<8xi32>\n"
                          "  print %0\n"));
}

TEST(CanonicalizeTest, CompareFollowsSignedness) {
  EXPECT_EQ(canonicalized(
                function_text("  %0 = constant {value = -1} : i32\n"
                              "  %1 = constant {value = 1} : i32\n"
                              "  %2 = cmp %0, %1 {predicate = \"lt\"} : i1\n"
                              "  %3 = constant {value = 4294967295} : u32\n"
                              "  %4 = constant {value = 1} : u32\n"
                              "  %5 = cmp %3, %4 {predicate = \"lt\"} : i1\n"
                              "  print %2, %5\n")),
            function_text("  %0 = constant {value = 1} : i1\n"
                          "  %1 = constant {value = 0} : i1\n"
                          "  print %0, %1\n"));
}

// --- float folding -----------------------------------------------------------

TEST(CanonicalizeTest, FloatsRoundToTheirFormat) {
  EXPECT_EQ(fold("add", "f32", "0.1", "0.2"),
            folded_to("0.30000001192092896", "f32"));
  EXPECT_EQ(fold("add", "f64", "0.1", "0.2"),
            folded_to("0.30000000000000004", "f64"));
  // f16: 1 + 2^-11 is a tie between 1 and 1 + 2^-10; even wins.
  EXPECT_EQ(fold("add", "f16", "1.0", "0.00048828125"),
            folded_to("1.0", "f16"));
  EXPECT_EQ(fold("add", "f16", "1.0", "0.00146484375"),
            folded_to("1.001953125", "f16"));
  // bf16 keeps 8 bits of precision.
  EXPECT_EQ(fold("add", "bf16", "256.0", "1.0"), folded_to("256.0", "bf16"));
}

TEST(CanonicalizeTest, FloatOverflowGivesInfinity) {
  EXPECT_EQ(fold("add", "f16", "65504.0", "16.0"), folded_to("inf", "f16"));
  EXPECT_EQ(fold("mul", "f32", "1e30", "1e30"), folded_to("inf", "f32"));
}

TEST(CanonicalizeTest, FloatNaNIsCanonical) {
  EXPECT_EQ(fold("div", "f32", "0.0", "0.0"), folded_to("nan", "f32"));
}

TEST(CanonicalizeTest, FloatMinMaxIgnoreNaN) {
  EXPECT_EQ(fold("minimum", "f32", "nan", "1.0"), folded_to("1.0", "f32"));
  EXPECT_EQ(fold("maximum", "f32", "-0.0", "0.0"), folded_to("0.0", "f32"));
  EXPECT_EQ(fold("minimum", "f32", "0.0", "-0.0"), folded_to("-0.0", "f32"));
}

TEST(CanonicalizeTest, FloatRemIsFmod) {
  EXPECT_EQ(fold("rem", "f32", "-7.5", "2.0"), folded_to("-1.5", "f32"));
}

TEST(CanonicalizeTest, FloatCompareWithNaN) {
  EXPECT_EQ(canonicalized(
                function_text("  %0 = constant {value = nan} : f32\n"
                              "  %1 = cmp %0, %0 {predicate = \"eq\"} : i1\n"
                              "  %2 = cmp %0, %0 {predicate = \"ne\"} : i1\n"
                              "  print %1, %2\n")),
            function_text("  %0 = constant {value = 0} : i1\n"
                          "  %1 = constant {value = 1} : i1\n"
                          "  print %0, %1\n"));
}

TEST(CanonicalizeTest, TranscendentalsStay) {
  std::string text = function_text("  %0 = constant {value = 1.0} : f32\n"
                                   "  %1 = exp %0 : f32\n  print %1\n");
  EXPECT_EQ(canonicalized(text), text);
}

TEST(CanonicalizeTest, ExactUnaryFloatOps) {
  EXPECT_EQ(canonicalized(
                function_text("  %0 = constant {value = 2.0} : f32\n"
                              "  %1 = sqrt %0 : f32\n"
                              "  %2 = constant {value = -2.5} : f32\n"
                              "  %3 = floor %2 : f32\n  %4 = ceil %2 : f32\n"
                              "  %5 = abs %2 : f32\n  print %1, %3, %4, %5\n")),
            function_text("  %0 = constant {value = 1.4142135381698608} : f32\n"
                          "  %1 = constant {value = -3.0} : f32\n"
                          "  %2 = constant {value = -2.0} : f32\n"
                          "  %3 = constant {value = 2.5} : f32\n"
                          "  print %0, %1, %2, %3\n"));
}

TEST(CanonicalizeTest, FmaRoundsOnce) {
  // (1 + 2^-23) * (1 - 2^-23) - 1 = -2^-46 exactly; two roundings give 0.
  EXPECT_EQ(canonicalized(function_text(
                "  %0 = constant {value = 1.0000001192092896} : f32\n"
                "  %1 = constant {value = 0.99999988079071045} : f32\n"
                "  %2 = constant {value = -1.0} : f32\n"
                "  %3 = fma %0, %1, %2 : f32\n  print %3\n")),
            folded_to("-1.4210854715202004e-14", "f32"));
}

// --- casts -------------------------------------------------------------------

std::string cast(const std::string &from, const std::string &value,
                 const std::string &to) {
  return canonicalized(
      function_text("  %0 = constant {value = " + value + "} : " + from +
                    "\n  %1 = cast %0 : " + to + "\n  print %1\n"));
}

TEST(CanonicalizeTest, IntegerCasts) {
  EXPECT_EQ(cast("i32", "-1", "u8"), folded_to("255", "u8"));
  EXPECT_EQ(cast("u8", "255", "i32"), folded_to("255", "i32"));
  EXPECT_EQ(cast("i8", "-1", "i64"), folded_to("-1", "i64"));
  EXPECT_EQ(cast("i32", "5", "i1"), folded_to("1", "i1"));
  EXPECT_EQ(cast("i1", "1", "i32"), folded_to("1", "i32"));
}

TEST(CanonicalizeTest, IntegerToFloatRoundsOnce) {
  EXPECT_EQ(cast("i32", "16777217", "f32"), folded_to("16777216.0", "f32"));
  EXPECT_EQ(cast("u32", "4294967295", "f32"), folded_to("4294967296.0", "f32"));
  EXPECT_EQ(cast("i32", "70000", "f16"), folded_to("inf", "f16"));
}

TEST(CanonicalizeTest, FloatToIntegerTruncates) {
  EXPECT_EQ(cast("f32", "3.9", "i32"), folded_to("3", "i32"));
  EXPECT_EQ(cast("f32", "-3.9", "i32"), folded_to("-3", "i32"));
  EXPECT_EQ(cast("f32", "0.5", "i1"), folded_to("1", "i1"));
}

TEST(CanonicalizeTest, OutOfRangeFloatToIntegerStays) {
  std::string negative = function_text("  %0 = constant {value = -1.5} : f32\n"
                                       "  %1 = cast %0 : u32\n  print %1\n");
  EXPECT_EQ(canonicalized(negative), negative);
  std::string nan = function_text("  %0 = constant {value = nan} : f32\n"
                                  "  %1 = cast %0 : i32\n  print %1\n");
  EXPECT_EQ(canonicalized(nan), nan);
  std::string big = function_text("  %0 = constant {value = 3e+09} : f32\n"
                                  "  %1 = cast %0 : i32\n  print %1\n");
  EXPECT_EQ(canonicalized(big), big);
}

TEST(CanonicalizeTest, FloatToFloat) {
  EXPECT_EQ(cast("f64", "0.1", "f32"), folded_to("0.10000000149011612", "f32"));
  EXPECT_EQ(cast("f32", "65520.0", "f16"), folded_to("inf", "f16"));
}

TEST(CanonicalizeTest, CastToTheSameTypeDisappears) {
  EXPECT_EQ(canonicalized(
                function_text("  %0 = cast %a : i32\n  print %0\n", "%a: i32")),
            function_text("  print %a\n", "%a: i32"));
}

TEST(CanonicalizeTest, BitcastsCompose) {
  EXPECT_EQ(
      canonicalized(function_text("  %0 = bitcast %a : f32\n"
                                  "  %1 = bitcast %0 : u32\n"
                                  "  %2 = bitcast %1 : i32\n"
                                  "  print %1, %2\n",
                                  "%a: i32")),
      function_text("  %0 = bitcast %a : u32\n  print %0, %a\n", "%a: i32"));
}

// --- identities
// ---------------------------------------------------------------

/// `body` applied to an i32 block argument %x (and %y), printed.
std::string with_block_args(const std::string &body) {
  return canonicalized(
      function_text(body, "%x: tensor<8xi32>, %y: tensor<8xi32>"));
}
std::string expected_with_block_args(const std::string &body) {
  return function_text(body, "%x: tensor<8xi32>, %y: tensor<8xi32>");
}

TEST(CanonicalizeTest, IntegerIdentities) {
  EXPECT_EQ(
      with_block_args("  %0 = constant {value = 0} : tensor<8xi32>\n"
                      "  %1 = constant {value = 1} : tensor<8xi32>\n"
                      "  %2 = add %x, %0 : tensor<8xi32>\n"
                      "  %3 = add %0, %x : tensor<8xi32>\n"
                      "  %4 = sub %x, %0 : tensor<8xi32>\n"
                      "  %5 = mul %x, %1 : tensor<8xi32>\n"
                      "  %6 = mul %1, %x : tensor<8xi32>\n"
                      "  %7 = div %x, %1 : tensor<8xi32>\n"
                      "  %8 = shl %x, %0 : tensor<8xi32>\n"
                      "  %9 = shr %x, %0 : tensor<8xi32>\n"
                      "  print %2, %3, %4, %5, %6, %7, %8, %9\n"),
      expected_with_block_args("  print %x, %x, %x, %x, %x, %x, %x, %x\n"));
}

TEST(CanonicalizeTest, IntegerAnnihilators) {
  EXPECT_EQ(
      with_block_args("  %0 = constant {value = 0} : tensor<8xi32>\n"
                      "  %1 = mul %x, %0 : tensor<8xi32>\n"
                      "  %2 = sub %x, %x : tensor<8xi32>\n"
                      "  %3 = xor %y, %y : tensor<8xi32>\n"
                      "  %4 = constant {value = 1} : tensor<8xi32>\n"
                      "  %5 = rem %x, %4 : tensor<8xi32>\n"
                      "  print %1, %2, %3, %5\n"),
      expected_with_block_args("  %0 = constant {value = 0} : tensor<8xi32>\n"
                               "  %1 = constant {value = 0} : tensor<8xi32>\n"
                               "  %2 = constant {value = 0} : tensor<8xi32>\n"
                               "  %3 = constant {value = 0} : tensor<8xi32>\n"
                               "  print %0, %1, %2, %3\n"));
}

TEST(CanonicalizeTest, BitwiseIdentities) {
  EXPECT_EQ(
      with_block_args("  %0 = constant {value = 0} : tensor<8xi32>\n"
                      "  %1 = constant {value = -1} : tensor<8xi32>\n"
                      "  %2 = and %x, %0 : tensor<8xi32>\n"
                      "  %3 = and %x, %1 : tensor<8xi32>\n"
                      "  %4 = or %x, %0 : tensor<8xi32>\n"
                      "  %5 = or %1, %x : tensor<8xi32>\n"
                      "  %6 = xor %x, %0 : tensor<8xi32>\n"
                      "  %7 = and %y, %y : tensor<8xi32>\n"
                      "  %8 = or %y, %y : tensor<8xi32>\n"
                      "  print %2, %3, %4, %5, %6, %7, %8\n"),
      expected_with_block_args("  %0 = constant {value = 0} : tensor<8xi32>\n"
                               "  %1 = constant {value = -1} : tensor<8xi32>\n"
                               "  print %0, %x, %x, %1, %x, %y, %y\n"));
}

TEST(CanonicalizeTest, DoubleNegationAndSelect) {
  EXPECT_EQ(with_block_args("  %0 = neg %x : tensor<8xi32>\n"
                            "  %1 = neg %0 : tensor<8xi32>\n"
                            "  %2 = not %y : tensor<8xi32>\n"
                            "  %3 = not %2 : tensor<8xi32>\n"
                            "  %4 = cmp %x, %y {predicate = \"lt\"} : "
                            "tensor<8xi1>\n"
                            "  %5 = select %4, %x, %x : tensor<8xi32>\n"
                            "  %6 = minimum %y, %y : tensor<8xi32>\n"
                            "  print %1, %3, %5, %6\n"),
            expected_with_block_args("  print %x, %y, %x, %y\n"));
}

TEST(CanonicalizeTest, SelectOnConstantCondition) {
  EXPECT_EQ(with_block_args("  %0 = constant {value = 1} : tensor<8xi1>\n"
                            "  %1 = select %0, %x, %y : tensor<8xi32>\n"
                            "  %2 = constant {value = 0} : tensor<8xi1>\n"
                            "  %3 = select %2, %x, %y : tensor<8xi32>\n"
                            "  print %1, %3\n"),
            expected_with_block_args("  print %x, %y\n"));
}

TEST(CanonicalizeTest, SelectOfTrueFalseIsTheCondition) {
  EXPECT_EQ(with_block_args("  %0 = cmp %x, %y {predicate = \"lt\"} : "
                            "tensor<8xi1>\n"
                            "  %1 = constant {value = 1} : tensor<8xi1>\n"
                            "  %2 = constant {value = 0} : tensor<8xi1>\n"
                            "  %3 = select %0, %1, %2 : tensor<8xi1>\n"
                            "  print %3\n"),
            expected_with_block_args("  %0 = cmp %x, %y {predicate = \"lt\"} "
                                     ": tensor<8xi1>\n  print %0\n"));
}

TEST(CanonicalizeTest, IntegerCompareWithItself) {
  EXPECT_EQ(
      with_block_args("  %0 = cmp %x, %x {predicate = \"le\"} : "
                      "tensor<8xi1>\n"
                      "  %1 = cmp %x, %x {predicate = \"ne\"} : "
                      "tensor<8xi1>\n"
                      "  print %0, %1\n"),
      expected_with_block_args("  %0 = constant {value = 1} : tensor<8xi1>\n"
                               "  %1 = constant {value = 0} : tensor<8xi1>\n"
                               "  print %0, %1\n"));
}

TEST(CanonicalizeTest, FloatIdentitiesThatAreUnsafeStay) {
  // x*0 (NaN, -0), x+0 (-0.0 + 0.0 = +0.0), x-x (inf - inf) and x==x (NaN)
  // do not hold for floats.
  std::string text =
      function_text("  %0 = constant {value = 0.0} : f32\n"
                    "  %1 = mul %a, %0 : f32\n  %2 = add %a, %0 : f32\n"
                    "  %3 = sub %a, %a : f32\n"
                    "  %4 = cmp %a, %a {predicate = \"eq\"} : i1\n"
                    "  print %1, %2, %3, %4\n",
                    "%a: f32");
  EXPECT_EQ(canonicalized(text), text);
}

TEST(CanonicalizeTest, FloatIdentitiesThatHold) {
  EXPECT_EQ(canonicalized(function_text(
                "  %0 = constant {value = 1.0} : f32\n"
                "  %1 = constant {value = -0.0} : f32\n"
                "  %2 = constant {value = 0.0} : f32\n"
                "  %3 = mul %a, %0 : f32\n  %4 = div %a, %0 : f32\n"
                "  %5 = add %a, %1 : f32\n  %6 = sub %a, %2 : f32\n"
                "  %7 = neg %a : f32\n  %8 = neg %7 : f32\n"
                "  print %3, %4, %5, %6, %8\n",
                "%a: f32")),
            function_text("  print %a, %a, %a, %a, %a\n", "%a: f32"));
}

TEST(CanonicalizeTest, AddPtrOfZero) {
  EXPECT_EQ(
      canonicalized(function_text(
          "  %0 = constant {value = 0} : i32\n"
          "  %1 = addptr %p, %0 : ptr<f32>\n  %2 = load %1 : f32\n"
          "  print %2\n",
          "%p: ptr<f32>")),
      function_text("  %0 = load %p : f32\n  print %0\n", "%p: ptr<f32>"));
}

// --- shapes ----------------------------------------------------------------

TEST(CanonicalizeTest, SplatOfConstantIsABlockConstant) {
  EXPECT_EQ(canonicalized(function_text(
                "  %0 = constant {value = 2.5} : f32\n"
                "  %1 = splat %0 : tensor<4x8xf32>\n  print %1\n")),
            folded_to("2.5", "tensor<4x8xf32>"));
}

TEST(CanonicalizeTest, ShapeOpsOfConstants) {
  EXPECT_EQ(canonicalized(function_text(
                "  %0 = constant {value = 3} : tensor<8xi32>\n"
                "  %1 = expand_dims %0 {axis = 0} : tensor<1x8xi32>\n"
                "  %2 = broadcast %1 : tensor<4x8xi32>\n"
                "  %3 = permute %2 {order = [1, 0]} : tensor<8x4xi32>\n"
                "  %4 = reshape %3 : tensor<32xi32>\n  print %4\n")),
            folded_to("3", "tensor<32xi32>"));
}

TEST(CanonicalizeTest, ShapeOpsOfSplats) {
  EXPECT_EQ(canonicalized(function_text(
                "  %0 = splat %a : tensor<8xi32>\n"
                "  %1 = expand_dims %0 {axis = 1} : tensor<8x1xi32>\n"
                "  %2 = broadcast %1 : tensor<8x4xi32>\n  print %2\n",
                "%a: i32")),
            function_text("  %0 = splat %a : tensor<8x4xi32>\n  print %0\n",
                          "%a: i32"));
}

TEST(CanonicalizeTest, ShapeOpsToTheSameTypeDisappear) {
  EXPECT_EQ(canonicalized(function_text(
                "  %0 = broadcast %x : tensor<4x8xf32>\n"
                "  %1 = reshape %0 : tensor<4x8xf32>\n"
                "  %2 = permute %1 {order = [0, 1]} : tensor<4x8xf32>\n"
                "  print %2\n",
                "%x: tensor<4x8xf32>")),
            function_text("  print %x\n", "%x: tensor<4x8xf32>"));
}

TEST(CanonicalizeTest, SquareTransposeStays) {
  std::string text = function_text(
      "  %0 = permute %x {order = [1, 0]} : tensor<4x4xf32>\n  print %0\n",
      "%x: tensor<4x4xf32>");
  EXPECT_EQ(canonicalized(text), text);
}

TEST(CanonicalizeTest, ShapeChainsCollapse) {
  EXPECT_EQ(canonicalized(function_text(
                "  %0 = permute %x {order = [1, 0]} : tensor<8x4xf32>\n"
                "  %1 = permute %0 {order = [1, 0]} : tensor<4x8xf32>\n"
                "  %2 = reshape %1 : tensor<32xf32>\n"
                "  %3 = reshape %2 : tensor<2x16xf32>\n"
                "  print %1, %3\n",
                "%x: tensor<4x8xf32>")),
            function_text("  %0 = reshape %x : tensor<2x16xf32>\n"
                          "  print %x, %0\n",
                          "%x: tensor<4x8xf32>"));
  EXPECT_EQ(canonicalized(function_text(
                "  %0 = broadcast %x : tensor<1x8xf32>\n"
                "  %1 = broadcast %0 : tensor<4x8xf32>\n  print %1\n",
                "%x: tensor<1x8xf32>")),
            function_text("  %0 = broadcast %x : tensor<4x8xf32>\n"
                          "  print %0\n",
                          "%x: tensor<1x8xf32>"));
}

// --- hints -------------------------------------------------------------------

TEST(CanonicalizeTest, HintsThatSayNothingDisappear) {
  EXPECT_EQ(canonicalized(function_text(
                "  %0 = multiple_of %x {values = [1]} : tensor<8xi32>\n"
                "  %1 = max_contiguous %0 {values = [1]} : tensor<8xi32>\n"
                "  %2 = max_constancy %1 {values = [1]} : tensor<8xi32>\n"
                "  %3 = multiple_of %2 {values = [16]} : tensor<8xi32>\n"
                "  print %3\n",
                "%x: tensor<8xi32>")),
            function_text("  %0 = multiple_of %x {values = [16]} : "
                          "tensor<8xi32>\n  print %0\n",
                          "%x: tensor<8xi32>"));
}

// --- control flow ------------------------------------------------------------

TEST(CanonicalizeTest, IfOnConstantConditionIsInlined) {
  EXPECT_EQ(
      canonicalized(function_text("  %0 = constant {value = 0} : i1\n"
                                  "  %1 = if %0 : i32 {\n"
                                  "    %2 = add %a, %a : i32\n    yield %2\n"
                                  "  } {\n"
                                  "    %3 = mul %a, %a : i32\n    yield %3\n"
                                  "  }\n  print %1\n",
                                  "%a: i32")),
      function_text("  %0 = mul %a, %a : i32\n  print %0\n", "%a: i32"));
}

TEST(CanonicalizeTest, LoopWithoutIterationsIsItsInitialValues) {
  EXPECT_EQ(
      canonicalized(function_text("  %0 = constant {value = 8} : i32\n"
                                  "  %1 = constant {value = 4} : i32\n"
                                  "  %2 = constant {value = 1} : i32\n"
                                  "  %3 = for %0, %1, %2, %a : i32 {\n"
                                  "  ^(%4: i32, %5: i32):\n"
                                  "    %6 = add %5, %4 : i32\n    yield %6\n"
                                  "  }\n  print %3\n",
                                  "%a: i32")),
      function_text("  print %a\n", "%a: i32"));
}

TEST(CanonicalizeTest, LoopCountingDownFromAboveRuns) {
  // range(8, 4, -1) runs four times (found by tests/differential): the
  // bounds alone, read as if the step were positive, said zero trips.
  std::string text = function_text("  %0 = constant {value = 8} : i32\n"
                                   "  %1 = constant {value = 4} : i32\n"
                                   "  %2 = constant {value = -1} : i32\n"
                                   "  %3 = for %0, %1, %2, %a : i32 {\n"
                                   "  ^(%4: i32, %5: i32):\n"
                                   "    %6 = add %5, %4 : i32\n    yield %6\n"
                                   "  }\n  print %3\n",
                                   "%a: i32");
  EXPECT_EQ(canonicalized(text), text);
  // The same count as the interpreter: a + 8 + 7 + 6 + 5.
  auto f = parse_function(text);
  canonicalize(*f);
  std::ostringstream out;
  interp::InterpretOptions options;
  options.print_stream = &out;
  interp::interpret(*f, Grid(1), {KernelArg::of_int(100)}, options);
  EXPECT_EQ(out.str(), "pid (0, 0, 0) idx ()  126\n"); // empty prefix
}

TEST(CanonicalizeTest, LoopCountingDownWithoutIterationsIsItsInitialValues) {
  EXPECT_EQ(
      canonicalized(function_text("  %0 = constant {value = 4} : i32\n"
                                  "  %1 = constant {value = 8} : i32\n"
                                  "  %2 = constant {value = -2} : i32\n"
                                  "  %3 = for %0, %1, %2, %a : i32 {\n"
                                  "  ^(%4: i32, %5: i32):\n"
                                  "    %6 = add %5, %4 : i32\n    yield %6\n"
                                  "  }\n  print %3\n",
                                  "%a: i32")),
      function_text("  print %a\n", "%a: i32"));
}

TEST(CanonicalizeTest, LoopWithUnknownOrZeroStepStays) {
  // Whether 8 .. 4 runs depends on the step's sign; a zero step is a
  // run-time error that folding must not hide.
  for (const std::string &step : {std::string("%s"), std::string("%z")}) {
    std::string text =
        function_text("  %0 = constant {value = 8} : i32\n"
                      "  %1 = constant {value = 4} : i32\n"
                      "  %z = constant {value = 0} : i32\n"
                      "  %2 = for %0, %1, " +
                          step +
                          ", %a : i32 {\n"
                          "  ^(%3: i32, %4: i32):\n"
                          "    %5 = add %4, %3 : i32\n    yield %5\n"
                          "  }\n  print %2\n",
                      "%a: i32, %s: i32");
    auto f = parse_function(text);
    canonicalize(*f);
    int loops = 0;
    f->walk([&](Operation &op) { loops += op.code() == OpCode::For; });
    EXPECT_EQ(loops, 1) << step;
  }
}

TEST(CanonicalizeTest, LoopWithoutIterationsLosesItsSideEffects) {
  // The store never runs, so the loop goes even though it stores.
  EXPECT_EQ(canonicalized(function_text("  %0 = constant {value = 8} : i32\n"
                                        "  %1 = constant {value = 4} : i32\n"
                                        "  %2 = constant {value = 1} : i32\n"
                                        "  for %0, %1, %2 {\n"
                                        "  ^(%3: i32):\n"
                                        "    store %p, %3\n    yield\n"
                                        "  }\n",
                                        "%p: ptr<i32>")),
            function_text("", "%p: ptr<i32>"));
}

TEST(CanonicalizeTest, InvariantCarriedValueBecomesTheInitialValue) {
  EXPECT_EQ(canonicalized(
                function_text("  %0 = constant {value = 0} : i32\n"
                              "  %1 = constant {value = 1} : i32\n"
                              "  %2:2 = for %0, %n, %1, %a, %a : i32, i32 {\n"
                              "  ^(%3: i32, %4: i32, %5: i32):\n"
                              "    %6 = add %5, %4 : i32\n"
                              "    %7 = add %6, %3 : i32\n"
                              "    yield %4, %7\n"
                              "  }\n  print %2#0, %2#1\n",
                              "%a: i32, %n: i32")),
            function_text("  %0 = constant {value = 0} : i32\n"
                          "  %1 = constant {value = 1} : i32\n"
                          "  %2 = for %0, %n, %1, %a : i32 {\n"
                          "  ^(%3: i32, %4: i32):\n"
                          "    %5 = add %4, %a : i32\n"
                          "    %6 = add %5, %3 : i32\n"
                          "    yield %6\n"
                          "  }\n  print %a, %2\n",
                          "%a: i32, %n: i32"));
}

TEST(CanonicalizeTest, MemoryOpsAreLeftAlone) {
  std::string text = function_text("  %0 = load %p {volatile = 1} : f32\n"
                                   "  %1 = load %p : f32\n"
                                   "  store %p, %1\n",
                                   "%p: ptr<f32>");
  auto f = parse_function(text);
  canonicalize(*f);
  EXPECT_EQ(print(*f), text);
}

// --- the element arithmetic directly ----------------------------------------

TEST(ConstantElementTest, WrapInteger) {
  EXPECT_EQ(wrap_integer(255, Scalar::I8), -1);
  EXPECT_EQ(wrap_integer(-1, Scalar::U8), 255);
  EXPECT_EQ(wrap_integer(3, Scalar::I1), 1);
  EXPECT_EQ(wrap_integer(-1, Scalar::U64), -1);
  EXPECT_EQ(wrap_integer(int64_t{1} << 40, Scalar::I32), 0);
}

TEST(ConstantElementTest, RoundToFormat) {
  EXPECT_EQ(round_to_format(65519.0, Scalar::F16), 65504.0);
  EXPECT_TRUE(std::isinf(round_to_format(65520.0, Scalar::F16)));
  // The smallest f16 subnormal is 2^-24; half of it ties to zero.
  EXPECT_EQ(round_to_format(std::ldexp(1.0, -25), Scalar::F16), 0.0);
  EXPECT_EQ(round_to_format(std::ldexp(1.5, -25), Scalar::F16),
            std::ldexp(1.0, -24));
  EXPECT_EQ(round_to_format(1.0 + 1.0 / 256, Scalar::BF16), 1.0);
  EXPECT_EQ(round_to_format(1.0 + 3.0 / 256, Scalar::BF16), 1.0 + 2.0 / 128);
  // Rounding straight to f16 differs from rounding through f32 here.
  double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
  EXPECT_EQ(round_to_format(v, Scalar::F16), 1.0 + std::ldexp(1.0, -10));
  EXPECT_TRUE(std::signbit(round_to_format(-1e-30, Scalar::F16)));
}

TEST(ConstantElementTest, LargeIntegersToNarrowFloatsAreNotFolded) {
  auto e = ConstantElement::of_integer((int64_t{1} << 60) + 1);
  EXPECT_FALSE(fold_cast(Scalar::I64, Scalar::BF16, e).has_value());
  EXPECT_TRUE(fold_cast(Scalar::I64, Scalar::F32, e).has_value());
}

TEST(ConstantElementTest, Fp8IsNotFolded) {
  auto one = ConstantElement::of_real(1.0);
  EXPECT_FALSE(fold_binary(OpCode::Add, Scalar::F8E4M3, one, one).has_value());
  EXPECT_FALSE(fold_cast(Scalar::F32, Scalar::F8E5M2, one).has_value());
}

// --- folds against the reference interpreter --------------------------------

/// One random elementwise op on constants, built identically twice: once
/// to fold, once to interpret as is.
struct RandomFold {
  OpCode code;
  Scalar type;   // operand element type
  Scalar result; // cast target (else the operand type)
  std::string predicate;
  std::vector<ConstantElement> operands;

  void build(Function &f) const {
    Builder b(&f.body());
    std::vector<Value *> values;
    for (const ConstantElement &e : operands)
      values.push_back(e.is_float
                           ? b.float_constant(e.real, Type::scalar(type))
                           : b.int_constant(e.integer, Type::scalar(type)));
    Value *r;
    if (code == OpCode::Cmp)
      r = b.cmp(predicate, values[0], values[1]);
    else
      r = b.create_value(code, values, Type::scalar(result));
    b.create(OpCode::Print, {r}, {}, {{"prefix", std::string("r")}});
    b.create(OpCode::Return, {}, {});
  }

  std::string describe() const {
    std::string s = std::string(opcode_name(code)) + " " + predicate + " " +
                    std::string(scalar_name(type)) + " -> " +
                    std::string(scalar_name(result)) + ":";
    for (const ConstantElement &e : operands)
      s += " " +
           (e.is_float ? std::to_string(e.real) : std::to_string(e.integer));
    return s;
  }
};

/// What the interpreter prints for `f`, or the error it throws. NaNs print
/// alike whatever their sign: folding does not promise the host's NaN bits.
std::string interpret_text(const Function &f) {
  std::ostringstream out;
  interp::InterpretOptions options;
  options.print_stream = &out;
  try {
    interp::interpret(f, Grid(1), {}, options);
  } catch (const Error &e) {
    return std::string("error: ") + e.what();
  }
  std::string s = out.str();
  for (size_t at = s.find("-nan"); at != std::string::npos; at = s.find("-nan"))
    s.erase(at, 1);
  return s;
}

TEST(CanonicalizeTest, FoldsAgreeWithTheInterpreter) {
  const Scalar integers[] = {Scalar::I1,  Scalar::I8,  Scalar::I16,
                             Scalar::I32, Scalar::I64, Scalar::U8,
                             Scalar::U16, Scalar::U32, Scalar::U64};
  const Scalar floats[] = {Scalar::F16, Scalar::BF16, Scalar::F32, Scalar::F64};
  const OpCode integer_ops[] = {
      OpCode::Add,    OpCode::Sub, OpCode::Mul,     OpCode::Div,
      OpCode::Rem,    OpCode::And, OpCode::Or,      OpCode::Xor,
      OpCode::Shl,    OpCode::Shr, OpCode::Minimum, OpCode::Maximum,
      OpCode::Umulhi, OpCode::Neg, OpCode::Not,     OpCode::Abs,
      OpCode::Cmp,    OpCode::Cast};
  const OpCode float_ops[] = {
      OpCode::Add,     OpCode::Sub,     OpCode::Mul, OpCode::Div, OpCode::Rem,
      OpCode::Minimum, OpCode::Maximum, OpCode::Neg, OpCode::Abs, OpCode::Sqrt,
      OpCode::Floor,   OpCode::Ceil,    OpCode::Fma, OpCode::Cmp, OpCode::Cast};
  const char *predicates[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  const double special[] = {0.0,  -0.0, 1.0,    -1.5,   2.5,      65504.0,
                            1e-7, 3e9,  -1e30,  1e300,  INFINITY, -INFINITY,
                            NAN,  0.1,  -255.5, 4096.0, 70000.0,  0.5};

  uint64_t seed = std::random_device()();
  std::mt19937_64 rng(seed);
  auto pick = [&](auto &options) {
    return options[rng() % std::size(options)];
  };
  auto random_integer = [&](Scalar s) {
    int64_t special_values[] = {0,  1,  -1, 2,  3,         7,        8,
                                31, 32, 63, 64, INT64_MIN, INT64_MAX};
    int64_t v = rng() % 2 ? pick(special_values) : static_cast<int64_t>(rng());
    if (rng() % 4 == 0)
      v = static_cast<int64_t>(rng() % 64); // small, e.g. shift amounts
    return ConstantElement::of_integer(wrap_integer(v, s));
  };
  auto random_float = [&](Scalar s) {
    double v = rng() % 2
                   ? pick(special)
                   : std::ldexp(static_cast<double>(rng() % 2000001) - 1e6,
                                static_cast<int>(rng() % 40) - 20);
    return ConstantElement::of_real(std::isnan(v) ? v : round_to_format(v, s));
  };

  int folded = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    RandomFold r;
    bool integer = rng() % 2;
    r.type = integer ? pick(integers) : pick(floats);
    r.code = integer ? pick(integer_ops) : pick(float_ops);
    r.result = r.type;
    if (r.code == OpCode::Cast)
      r.result = rng() % 2 ? pick(integers) : pick(floats);
    if (r.code == OpCode::Cmp)
      r.predicate = pick(predicates);
    int arity = r.code == OpCode::Fma ? 3
                : (r.code == OpCode::Neg || r.code == OpCode::Not ||
                   r.code == OpCode::Abs || r.code == OpCode::Cast ||
                   is_unary_math(r.code))
                    ? 1
                    : 2;
    for (int i = 0; i < arity; ++i)
      r.operands.push_back(integer ? random_integer(r.type)
                                   : random_float(r.type));

    Function original("k"), simplified("k");
    r.build(original);
    r.build(simplified);
    canonicalize(simplified);
    dce(simplified);
    ASSERT_NO_THROW(verify(simplified)) << r.describe();
    size_t ops = simplified.body().ops().size();
    folded += ops == 3; // constant, print, return
    EXPECT_EQ(interpret_text(simplified), interpret_text(original))
        << r.describe() << "\nseed " << seed << "\n"
        << print(simplified);
  }
  // Most draws fold; the rest hit the cases left to the backend.
  EXPECT_GT(folded, 1500) << "seed " << seed;
}

} // namespace
} // namespace blocc::ir
