// Axis-info analysis: seeds, transfer functions and loops, checked through
// print_axis_info's text for named values.
#include "backends/interpreter/interpreter.h"
#include "ir/axis_info.h"
#include "ir/builder.h"
#include "ir/parser.h"
#include "ir/passes.h"

#include <gtest/gtest.h>
#include <random>
#include <sstream>

namespace blocc::ir {
namespace {

const std::string kMax = std::to_string(AxisInfo::kMaxDivisibility);

std::string function_text(const std::string &body,
                          const std::string &arguments) {
  return "func @k(" + arguments + ") {\n" + body + "  return\n}\n";
}

/// The facts print_axis_info gives `name` ("%5", "%x", "%2#1").
std::string facts(const std::string &text, const std::string &name) {
  auto f = parse_function(text);
  verify(*f);
  std::string all = print_axis_info(*f);
  std::string prefix = name + ": ";
  for (size_t at = 0; at < all.size();) {
    size_t end = all.find('\n', at);
    std::string line = all.substr(at, end - at);
    if (line.rfind(prefix, 0) == 0)
      return line.substr(prefix.size(), line.find("  //") - prefix.size());
    at = end + 1;
  }
  return "<no line for " + name + " in:\n" + all + ">";
}

const char *kVectorAdd =
    "  %0 = program_id {axis = 0} : i32\n"
    "  %1 = constant {value = 128} : i32\n"
    "  %2 = mul %0, %1 : i32\n"
    "  %3 = splat %2 : tensor<128xi32>\n"
    "  %4 = arange {end = 128, start = 0} : tensor<128xi32>\n"
    "  %5 = add %3, %4 : tensor<128xi32>\n"
    "  %6 = splat %x : tensor<128xptr<f32>>\n"
    "  %7 = addptr %6, %5 : tensor<128xptr<f32>>\n"
    "  %8 = splat %n : tensor<128xi32>\n"
    "  %9 = cmp %5, %8 {predicate = \"lt\"} : tensor<128xi1>\n"
    "  %10 = load %7, %9 : tensor<128xf32>\n"
    "  %11 = cmp %5, %8 {predicate = \"le\"} : tensor<128xi1>\n"
    "  %12 = cmp %8, %5 {predicate = \"gt\"} : tensor<128xi1>\n";
const char *kVectorAddArgs =
    "%x: ptr<f32> {divisibility = 16}, %n: i32 {divisibility = 16}";

std::string vector_add(const std::string &name) {
  return facts(function_text(kVectorAdd, kVectorAddArgs), name);
}

TEST(AxisInfoTest, Seeds) {
  EXPECT_EQ(vector_add("%x"), "contiguity=[1] divisibility=[16] constancy=[1]");
  EXPECT_EQ(vector_add("%0"), "contiguity=[1] divisibility=[1] constancy=[1]");
  EXPECT_EQ(vector_add("%1"),
            "contiguity=[1] divisibility=[128] constancy=[1] constant=128");
  EXPECT_EQ(vector_add("%4"),
            "contiguity=[128] divisibility=[" + kMax + "] constancy=[1]");
}

TEST(AxisInfoTest, VectorAddOffsets) {
  EXPECT_EQ(vector_add("%2"),
            "contiguity=[1] divisibility=[128] constancy=[1]");
  EXPECT_EQ(vector_add("%3"),
            "contiguity=[1] divisibility=[128] constancy=[128]");
  EXPECT_EQ(vector_add("%5"),
            "contiguity=[128] divisibility=[128] constancy=[1]");
}

TEST(AxisInfoTest, PointerDivisibilityIsInBytes) {
  // 16-byte aligned base, offsets multiples of 128 elements of 4 bytes.
  EXPECT_EQ(vector_add("%6"),
            "contiguity=[1] divisibility=[16] constancy=[128]");
  EXPECT_EQ(vector_add("%7"),
            "contiguity=[128] divisibility=[16] constancy=[1]");
}

TEST(AxisInfoTest, MaskConstancyFromAlignedBound) {
  // offs < n with n a multiple of 16: constant over aligned runs of 16.
  EXPECT_EQ(vector_add("%9"), "contiguity=[1] divisibility=[1] constancy=[16]");
  EXPECT_EQ(vector_add("%12"),
            "contiguity=[1] divisibility=[1] constancy=[16]");
  // offs <= n flips at offs == n, which need not be a run boundary.
  EXPECT_EQ(vector_add("%11"), "contiguity=[1] divisibility=[1] constancy=[1]");
}

TEST(AxisInfoTest, LoadsAreUnknownButKeepConstancy) {
  EXPECT_EQ(vector_add("%10"), "contiguity=[1] divisibility=[1] constancy=[1]");
  EXPECT_EQ(facts(function_text("  %0 = splat %x : tensor<64xptr<f32>>\n"
                                "  %1 = load %0 : tensor<64xf32>\n",
                                "%x: ptr<f32>"),
                  "%1"),
            "contiguity=[1] divisibility=[1] constancy=[64]");
}

TEST(AxisInfoTest, ArgumentDivisibilityIsAPowerOfTwo) {
  EXPECT_EQ(facts(function_text("", "%a: i32 {divisibility = 48}"), "%a"),
            "contiguity=[1] divisibility=[16] constancy=[1]");
}

TEST(AxisInfoTest, ArangeStart) {
  EXPECT_EQ(facts(function_text("  %0 = arange {end = 36, start = 4} : "
                                "tensor<32xi32>\n",
                                ""),
                  "%0"),
            "contiguity=[32] divisibility=[4] constancy=[1]");
}

TEST(AxisInfoTest, TwoDimensionalOffsets) {
  // rows[:, None] * stride + cols[None, :]
  std::string text = function_text(
      "  %0 = arange {end = 64, start = 0} : tensor<64xi32>\n"
      "  %1 = expand_dims %0 {axis = 1} : tensor<64x1xi32>\n"
      "  %2 = broadcast %1 : tensor<64x32xi32>\n"
      "  %3 = splat %stride : tensor<64x32xi32>\n"
      "  %4 = mul %2, %3 : tensor<64x32xi32>\n"
      "  %5 = arange {end = 32, start = 0} : tensor<32xi32>\n"
      "  %6 = expand_dims %5 {axis = 0} : tensor<1x32xi32>\n"
      "  %7 = broadcast %6 : tensor<64x32xi32>\n"
      "  %8 = add %4, %7 : tensor<64x32xi32>\n"
      "  %9 = splat %p : tensor<64x32xptr<f16>>\n"
      "  %10 = addptr %9, %8 : tensor<64x32xptr<f16>>\n",
      "%p: ptr<f16> {divisibility = 16}, %stride: i32 {divisibility = 16}");
  EXPECT_EQ(facts(text, "%1"), "contiguity=[64, 1] divisibility=[" + kMax +
                                   ", 1] constancy=[1, 1]");
  EXPECT_EQ(facts(text, "%2"), "contiguity=[64, 1] divisibility=[" + kMax +
                                   ", 1] constancy=[1, 32]");
  EXPECT_EQ(facts(text, "%4"),
            "contiguity=[1, 1] divisibility=[16, 16] constancy=[1, 32]");
  EXPECT_EQ(facts(text, "%7"), "contiguity=[1, 32] divisibility=[1, " + kMax +
                                   "] constancy=[64, 1]");
  EXPECT_EQ(facts(text, "%8"),
            "contiguity=[1, 32] divisibility=[1, 16] constancy=[1, 1]");
  // Rows start 32-byte aligned (16 elements of 2 bytes); elements along
  // dim 0 are only 2-byte aligned.
  EXPECT_EQ(facts(text, "%10"),
            "contiguity=[1, 32] divisibility=[2, 16] constancy=[1, 1]");
}

TEST(AxisInfoTest, RunsSplitByAShorterConstantKeepOnlyTheirAlignment) {
  // arange + (a value constant in runs of 4, multiple of 16): runs of 4
  // start at 4j + 16m, which only 4 divides.
  std::string text =
      function_text("  %0 = multiple_of %y {values = [16]} : tensor<32xi32>\n"
                    "  %1 = max_constancy %0 {values = [4]} : tensor<32xi32>\n"
                    "  %2 = arange {end = 32, start = 0} : tensor<32xi32>\n"
                    "  %3 = add %2, %1 : tensor<32xi32>\n",
                    "%y: tensor<32xi32>");
  EXPECT_EQ(facts(text, "%1"),
            "contiguity=[1] divisibility=[16] constancy=[4]");
  EXPECT_EQ(facts(text, "%3"), "contiguity=[4] divisibility=[4] constancy=[1]");
}

TEST(AxisInfoTest, PointerOffsetsScaleByElementSize) {
  std::string text =
      function_text("  %0 = arange {end = 64, start = 0} : tensor<64xi32>\n"
                    "  %1 = constant {value = 3} : tensor<64xi32>\n"
                    "  %2 = add %0, %1 : tensor<64xi32>\n"
                    "  %3 = splat %p : tensor<64xptr<f16>>\n"
                    "  %4 = addptr %3, %2 : tensor<64xptr<f16>>\n"
                    "  %5 = addptr %3, %0 : tensor<64xptr<f16>>\n",
                    "%p: ptr<f16> {divisibility = 16}");
  EXPECT_EQ(facts(text, "%2"),
            "contiguity=[64] divisibility=[1] constancy=[1]");
  EXPECT_EQ(facts(text, "%4"),
            "contiguity=[64] divisibility=[2] constancy=[1]");
  EXPECT_EQ(facts(text, "%5"),
            "contiguity=[64] divisibility=[16] constancy=[1]");
}

TEST(AxisInfoTest, DivisionAndShiftMakeConstantRuns) {
  std::string text =
      function_text("  %0 = arange {end = 128, start = 0} : tensor<128xi32>\n"
                    "  %1 = constant {value = 4} : tensor<128xi32>\n"
                    "  %2 = div %0, %1 : tensor<128xi32>\n"
                    "  %3 = constant {value = 3} : tensor<128xi32>\n"
                    "  %4 = shr %0, %3 : tensor<128xi32>\n"
                    "  %5 = mul %0, %1 : tensor<128xi32>\n"
                    "  %6 = div %5, %1 : tensor<128xi32>\n",
                    "");
  EXPECT_EQ(facts(text, "%2"), "contiguity=[1] divisibility=[1] constancy=[4]");
  EXPECT_EQ(facts(text, "%4"), "contiguity=[1] divisibility=[1] constancy=[8]");
  EXPECT_EQ(facts(text, "%5"), "contiguity=[1] divisibility=[4] constancy=[1]");
  EXPECT_EQ(facts(text, "%6"), "contiguity=[1] divisibility=[1] constancy=[1]");
}

TEST(AxisInfoTest, RemainderAndMaskMakeShorterRuns) {
  std::string text =
      function_text("  %0 = arange {end = 128, start = 0} : tensor<128xi32>\n"
                    "  %1 = constant {value = 8} : tensor<128xi32>\n"
                    "  %2 = rem %0, %1 : tensor<128xi32>\n"
                    "  %3 = constant {value = 15} : tensor<128xi32>\n"
                    "  %4 = and %0, %3 : tensor<128xi32>\n"
                    "  %5 = constant {value = 12} : tensor<128xi32>\n"
                    "  %6 = rem %0, %5 : tensor<128xi32>\n",
                    "");
  EXPECT_EQ(facts(text, "%2"), "contiguity=[8] divisibility=[8] constancy=[1]");
  EXPECT_EQ(facts(text, "%4"),
            "contiguity=[16] divisibility=[16] constancy=[1]");
  // x % 12 wraps every 12: only runs of 4 are safe.
  EXPECT_EQ(facts(text, "%6"), "contiguity=[4] divisibility=[4] constancy=[1]");
}

TEST(AxisInfoTest, ShiftLeftMultipliesDivisibility) {
  std::string text = function_text("  %0 = constant {value = 4} : i32\n"
                                   "  %1 = shl %a, %0 : i32\n",
                                   "%a: i32 {divisibility = 2}");
  EXPECT_EQ(facts(text, "%1"),
            "contiguity=[1] divisibility=[32] constancy=[1]");
}

TEST(AxisInfoTest, ConstantsFoldThroughArithmetic) {
  std::string text = function_text("  %0 = constant {value = 6} : i32\n"
                                   "  %1 = constant {value = 8} : i32\n"
                                   "  %2 = mul %0, %1 : i32\n"
                                   "  %3 = cmp %0, %1 {predicate = \"lt\"} : "
                                   "i1\n"
                                   "  %4 = select %3, %2, %0 : i32\n",
                                   "");
  EXPECT_EQ(facts(text, "%2"),
            "contiguity=[1] divisibility=[16] constancy=[1] constant=48");
  EXPECT_EQ(facts(text, "%3"),
            "contiguity=[1] divisibility=[1] constancy=[1] constant=1");
  EXPECT_EQ(facts(text, "%4"),
            "contiguity=[1] divisibility=[16] constancy=[1] constant=48");
}

TEST(AxisInfoTest, MultiplyByZeroIsConstant) {
  std::string text =
      function_text("  %0 = arange {end = 16, start = 0} : tensor<16xi32>\n"
                    "  %1 = constant {value = 0} : tensor<16xi32>\n"
                    "  %2 = mul %0, %1 : tensor<16xi32>\n",
                    "");
  EXPECT_EQ(facts(text, "%2"), "contiguity=[1] divisibility=[" + kMax +
                                   "] constancy=[16] constant=0");
}

TEST(AxisInfoTest, HintsStrengthenFacts) {
  std::string text = function_text(
      "  %0 = program_id {axis = 0} : i32\n"
      "  %1 = multiple_of %0 {values = [8]} : i32\n"
      "  %2 = load %q : tensor<64xi32>\n"
      "  %3 = max_contiguous %2 {values = [64]} : tensor<64xi32>\n"
      "  %4 = multiple_of %3 {values = [16]} : tensor<64xi32>\n",
      "%q: tensor<64xptr<i32>>");
  EXPECT_EQ(facts(text, "%1"), "contiguity=[1] divisibility=[8] constancy=[1]");
  EXPECT_EQ(facts(text, "%3"),
            "contiguity=[64] divisibility=[1] constancy=[1]");
  EXPECT_EQ(facts(text, "%4"),
            "contiguity=[64] divisibility=[16] constancy=[1]");
}

TEST(AxisInfoTest, FloatsOnlyCarryConstancy) {
  std::string text =
      function_text("  %0 = constant {value = 2.0} : tensor<16xf32>\n"
                    "  %1 = exp %0 : tensor<16xf32>\n",
                    "");
  EXPECT_EQ(facts(text, "%1"),
            "contiguity=[1] divisibility=[1] constancy=[16]");
}

TEST(AxisInfoTest, LoopInductionVariableAndCarriedPointers) {
  // for k in range(0, n, 32): ptrs += 32
  std::string text = function_text(
      "  %0 = arange {end = 64, start = 0} : tensor<64xi32>\n"
      "  %1 = splat %p : tensor<64xptr<f32>>\n"
      "  %2 = addptr %1, %0 : tensor<64xptr<f32>>\n"
      "  %3 = constant {value = 0} : i32\n"
      "  %4 = constant {value = 32} : i32\n"
      "  %5 = constant {value = 32} : tensor<64xi32>\n"
      "  %6:2 = for %3, %n, %4, %2, %3 : tensor<64xptr<f32>>, i32 {\n"
      "  ^(%7: i32, %8: tensor<64xptr<f32>>, %9: i32):\n"
      "    %10 = addptr %8, %5 : tensor<64xptr<f32>>\n"
      "    %11 = add %9, %7 : i32\n"
      "    %12 = constant {value = 1} : i32\n"
      "    %13 = add %11, %12 : i32\n"
      "    yield %10, %13\n"
      "  }\n",
      "%p: ptr<f32> {divisibility = 16}, %n: i32");
  EXPECT_EQ(facts(text, "%7"),
            "contiguity=[1] divisibility=[32] constancy=[1]");
  EXPECT_EQ(facts(text, "%8"),
            "contiguity=[64] divisibility=[16] constancy=[1]");
  EXPECT_EQ(facts(text, "%6#0"),
            "contiguity=[64] divisibility=[16] constancy=[1]");
  // 0, then sums that add 1: nothing survives the join.
  EXPECT_EQ(facts(text, "%9"), "contiguity=[1] divisibility=[1] constancy=[1]");
  EXPECT_EQ(facts(text, "%6#1"),
            "contiguity=[1] divisibility=[1] constancy=[1]");
}

TEST(AxisInfoTest, IfJoinsBothBranches) {
  std::string text =
      function_text("  %0 = arange {end = 16, start = 0} : tensor<16xi32>\n"
                    "  %1 = constant {value = 32} : tensor<16xi32>\n"
                    "  %2 = cmp %a, %a {predicate = \"eq\"} : i1\n"
                    "  %3 = if %2 : tensor<16xi32> {\n"
                    "    %4 = add %0, %1 : tensor<16xi32>\n"
                    "    yield %4\n"
                    "  } {\n"
                    "    %5 = mul %0, %1 : tensor<16xi32>\n"
                    "    yield %0\n"
                    "  }\n",
                    "%a: i32");
  EXPECT_EQ(facts(text, "%3"),
            "contiguity=[16] divisibility=[32] constancy=[1]");
  EXPECT_EQ(facts(text, "%5"),
            "contiguity=[1] divisibility=[32] constancy=[1]");
}

TEST(AxisInfoTest, SelectKeepsRunsWhereTheConditionIsConstant) {
  std::string text =
      function_text("  %0 = arange {end = 64, start = 0} : tensor<64xi32>\n"
                    "  %1 = splat %n : tensor<64xi32>\n"
                    "  %2 = cmp %0, %1 {predicate = \"lt\"} : tensor<64xi1>\n"
                    "  %3 = constant {value = 64} : tensor<64xi32>\n"
                    "  %4 = add %0, %3 : tensor<64xi32>\n"
                    "  %5 = select %2, %0, %4 : tensor<64xi32>\n",
                    "%n: i32 {divisibility = 8}");
  EXPECT_EQ(facts(text, "%2"), "contiguity=[1] divisibility=[1] constancy=[8]");
  EXPECT_EQ(facts(text, "%5"), "contiguity=[8] divisibility=[8] constancy=[1]");
}

TEST(AxisInfoTest, ReshapeThatOnlyAddsUnitDimensions) {
  std::string text =
      function_text("  %0 = arange {end = 32, start = 0} : tensor<32xi32>\n"
                    "  %1 = reshape %0 : tensor<1x32xi32>\n"
                    "  %2 = reshape %0 : tensor<4x8xi32>\n"
                    "  %3 = permute %1 {order = [1, 0]} : tensor<32x1xi32>\n",
                    "");
  EXPECT_EQ(facts(text, "%1"), "contiguity=[1, 32] divisibility=[1, " + kMax +
                                   "] constancy=[1, 1]");
  EXPECT_EQ(facts(text, "%2"),
            "contiguity=[1, 1] divisibility=[1, 1] constancy=[1, 1]");
  EXPECT_EQ(facts(text, "%3"), "contiguity=[32, 1] divisibility=[" + kMax +
                                   ", 1] constancy=[1, 1]");
}

TEST(AxisInfoTest, PrintNamesValuesLikeThePrinter) {
  auto f = parse_function(
      function_text("  %0 = constant {value = 0} : i32\n"
                    "  %1:2 = split %v : tensor<4xi32>, tensor<4xi32>\n"
                    "  %2 = reduce %1#0 {axis = 0} : i32 {\n"
                    "  ^(%3: i32, %4: i32):\n"
                    "    %5 = add %3, %4 : i32\n"
                    "    yield %5\n"
                    "  }\n",
                    "%v: tensor<4x2xi32>, %arg1: i32"));
  EXPECT_EQ(print_axis_info(*f),
            "%v: contiguity=[1, 1] divisibility=[1, 1] constancy=[1, 1]  // "
            "argument\n"
            "%arg1: contiguity=[1] divisibility=[1] constancy=[1]  // "
            "argument\n"
            "%0: contiguity=[1] divisibility=[" +
                kMax +
                "] constancy=[1] constant=0  // constant\n"
                "%1#0: contiguity=[1] divisibility=[1] constancy=[1]  // "
                "split\n"
                "%1#1: contiguity=[1] divisibility=[1] constancy=[1]  // "
                "split\n"
                "%2: contiguity=[1] divisibility=[1] constancy=[1]  // "
                "reduce\n"
                "%3: contiguity=[1] divisibility=[1] constancy=[1]  // reduce "
                "region argument\n"
                "%4: contiguity=[1] divisibility=[1] constancy=[1]  // reduce "
                "region argument\n"
                "%5: contiguity=[1] divisibility=[1] constancy=[1]  // add\n");
}

TEST(AxisInfoTest, AnalysisApi) {
  Function f("k");
  Builder b(&f.body());
  Value *x = f.add_argument(Type::pointer(Scalar::F32), {"x", 16});
  Value *offs = b.create_value(OpCode::Arange, {},
                               Type::block(Type::scalar(Scalar::I32), {256}),
                               {{"start", int64_t{0}}, {"end", int64_t{256}}});
  Value *ptrs = b.create_value(OpCode::AddPtr, {b.splat(x, {256}), offs},
                               Type::block(Type::pointer(Scalar::F32), {256}));
  b.create(OpCode::Return, {}, {});
  AxisInfoAnalysis analysis(f);
  const AxisInfo &info = analysis.get(ptrs);
  EXPECT_EQ(info.contiguity, std::vector<int64_t>{256});
  EXPECT_EQ(info.divisibility, std::vector<int64_t>{16});
  EXPECT_EQ(info.constancy, std::vector<int64_t>{1});
  EXPECT_FALSE(info.constant_value.has_value());
}

// --- soundness against the reference interpreter -----------------------------

/// Builds random index arithmetic (non-negative and without overflow, as
/// the analysis assumes), runs it on the interpreter over a few program
/// ids with random arguments that honour their declared divisibility, and
/// checks every fact the analysis claims against the values computed.
class RandomIndexKernel {
public:
  explicit RandomIndexKernel(uint64_t seed) : rng_(seed) {}

  void build(Function &f) {
    Builder b(&f.body());
    for (int i = 0; i < 2; ++i) {
      int64_t divisor = int64_t{1} << (rng_() % 7);
      divisors_.push_back(divisor);
      scalars_.push_back({f.add_argument(Type::scalar(Scalar::I32),
                                         {"a" + std::to_string(i), divisor}),
                          10000});
    }
    Value *pid =
        b.create_value(OpCode::ProgramId, {}, i32(), {{"axis", int64_t{0}}});
    scalars_.push_back({pid, 3});
    // Seeds: aranges, splats of arguments and program ids (scaled), and
    // constants.
    for (int i = 0; i < 3; ++i) {
      int64_t start = (int64_t{1} << (rng_() % 8)) * (rng_() % 3);
      add1(b.create_value(OpCode::Arange, {}, block1(),
                          {{"start", start}, {"end", start + kSize}}),
           start + kSize);
    }
    for (const auto &[v, bound] : scalars_) {
      int64_t scale = int64_t{1} << (rng_() % 6);
      Value *scaled = b.binary(OpCode::Mul, v, b.int_constant(scale, i32()));
      add1(b.splat(scaled, {kSize}), bound * scale);
    }
    for (int i = 0; i < 2; ++i) {
      int64_t c = static_cast<int64_t>(rng_() % 100);
      add1(b.int_constant(c, block1()), c);
    }
    for (int i = 0; i < 12; ++i)
      random_op(b, pool1_, block1());
    // Two-dimensional values: rows and columns of the 1D ones.
    for (int i = 0; i < 4; ++i) {
      auto [v, bound] = pick(pool1_);
      int64_t axis = static_cast<int64_t>(rng_() % 2);
      std::vector<int64_t> shape = axis ? std::vector<int64_t>{kSize, 1}
                                        : std::vector<int64_t>{1, kSize};
      Value *e = b.create_value(OpCode::ExpandDims, {v},
                                Type::block(i32(), shape), {{"axis", axis}});
      pool2_.push_back(
          {b.create_value(OpCode::Broadcast, {e}, block2()), bound});
    }
    for (int i = 0; i < 8; ++i)
      random_op(b, pool2_, block2());
    for (size_t i = 0; i < printed_.size(); ++i)
      b.create(OpCode::Print, {printed_[i]}, {},
               {{"prefix", "v" + std::to_string(i)}});
    b.create(OpCode::Return, {}, {});
  }

  std::vector<KernelArg> arguments() {
    std::vector<KernelArg> args;
    for (int64_t d : divisors_)
      args.push_back(KernelArg::of_int(d * static_cast<int64_t>(rng_() % 50)));
    return args;
  }

  const std::vector<Value *> &printed() const { return printed_; }

private:
  static constexpr int64_t kSize = 32;
  static constexpr int64_t kLimit = int64_t{1} << 30;
  using Entry = std::pair<Value *, int64_t>; // value, bound on its elements

  static Type i32() { return Type::scalar(Scalar::I32); }
  static Type block1() { return Type::block(i32(), {kSize}); }
  static Type block2() { return Type::block(i32(), {kSize, kSize}); }

  void add1(Value *v, int64_t bound) {
    pool1_.push_back({v, bound});
    printed_.push_back(v);
  }
  Entry pick(const std::vector<Entry> &pool) {
    return pool[rng_() % pool.size()];
  }

  void random_op(Builder &b, std::vector<Entry> &pool, Type t) {
    auto [x, bx] = pick(pool);
    auto [y, by] = pick(pool);
    auto constant = [&](int64_t c) { return b.int_constant(c, t); };
    int64_t c = 1 + static_cast<int64_t>(rng_() % 16);
    int64_t shift = static_cast<int64_t>(rng_() % 4);
    Value *r = nullptr;
    int64_t bound = 0;
    switch (rng_() % 11) {
    case 0:
      r = b.binary(OpCode::Add, x, y), bound = bx + by;
      break;
    case 1:
      r = b.binary(OpCode::Mul, x, constant(c)), bound = bx * c;
      break;
    case 2:
      r = b.binary(OpCode::Div, x, constant(c)), bound = bx;
      break;
    case 3:
      r = b.binary(OpCode::Rem, x, constant(c)), bound = c;
      break;
    case 4: {
      int64_t mask = (int64_t{1} << (rng_() % 6)) - 1;
      if (rng_() % 3 == 0)
        mask = c;
      r = b.binary(OpCode::And, x, constant(mask)), bound = bx;
      break;
    }
    case 5:
      r = b.binary(rng_() % 2 ? OpCode::Or : OpCode::Xor, x, y);
      bound = 2 * std::max(bx, by) + 1;
      break;
    case 6:
      r = b.binary(OpCode::Shl, x, constant(shift)), bound = bx << shift;
      break;
    case 7:
      r = b.binary(OpCode::Shr, x, constant(shift)), bound = bx;
      break;
    case 8:
      r = b.binary(rng_() % 2 ? OpCode::Minimum : OpCode::Maximum, x, y);
      bound = std::max(bx, by);
      break;
    case 9: {
      const char *predicates[] = {"lt", "le", "gt", "ge", "eq", "ne"};
      Value *cond = b.cmp(predicates[rng_() % 6], x, y);
      auto [z, bz] = pick(pool);
      r = b.create_value(OpCode::Select, {cond, y, z}, t),
      bound = std::max(by, bz);
      break;
    }
    default:
      r = b.binary(OpCode::Mul, x, y), bound = bx * by;
      break;
    }
    if (bound > kLimit || bound < 0) // might overflow: drop it
      return b.block()->erase(r->defining_op());
    pool.push_back({r, bound});
    printed_.push_back(r);
  }

  std::mt19937_64 rng_;
  std::vector<int64_t> divisors_;
  std::vector<Entry> scalars_;
  std::vector<Entry> pool1_, pool2_;
  std::vector<Value *> printed_;
};

/// Parses the interpreter's print lines "pid (...) idx (...) vK value" into
/// values[K] for one program id after another.
std::vector<std::vector<int64_t>> parse_prints(const std::string &text,
                                               size_t count) {
  std::vector<std::vector<int64_t>> values(count);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t value_at = line.rfind(' ');
    size_t label_at = line.rfind(" v", value_at - 1);
    size_t k = std::stoul(line.substr(label_at + 2, value_at - label_at - 2));
    values.at(k).push_back(std::stoll(line.substr(value_at + 1)));
  }
  return values;
}

/// The first fact `info` claims that `values` (row-major, one program
/// instance) break, or "".
std::string broken_fact(const AxisInfo &info, const std::vector<int64_t> &shape,
                        const std::vector<int64_t> &values) {
  int rank = static_cast<int>(shape.size());
  for (int d = 0; d < rank; ++d) {
    int64_t stride = 1;
    for (int e = d + 1; e < rank; ++e)
      stride *= shape[e];
    for (size_t i = 0; i < values.size(); ++i) {
      int64_t p = (static_cast<int64_t>(i) / stride) % shape[d];
      int64_t v = values[i];
      auto where = [&] {
        return " at element " + std::to_string(i) + " (dim " +
               std::to_string(d) + ")";
      };
      if (p % info.contiguity[d] != 0 && v != values[i - stride] + 1)
        return "contiguity" + where();
      if (p % info.constancy[d] != 0 && v != values[i - stride])
        return "constancy" + where();
      int64_t divisor =
          std::min<int64_t>(info.divisibility[d], int64_t{1} << 32);
      if (p % info.contiguity[d] == 0 &&
          (static_cast<uint64_t>(v) & static_cast<uint64_t>(divisor - 1)) != 0)
        return "divisibility" + where();
      if (info.constant_value && v != *info.constant_value)
        return "constant" + where();
    }
  }
  return "";
}

TEST(AxisInfoTest, FactsHoldOnComputedValues) {
  uint64_t seed = std::random_device()();
  std::mt19937_64 seeds(seed);
  for (int trial = 0; trial < 30; ++trial) {
    RandomIndexKernel kernel(seeds());
    Function f("k");
    kernel.build(f);
    ASSERT_NO_THROW(verify(f)) << "seed " << seed;
    AxisInfoAnalysis analysis(f);
    std::ostringstream out;
    interp::InterpretOptions options;
    options.print_stream = &out;
    const int64_t programs = 2;
    interp::interpret(f, Grid(programs), kernel.arguments(), options);
    auto values = parse_prints(out.str(), kernel.printed().size());
    for (size_t k = 0; k < kernel.printed().size(); ++k) {
      const Value *v = kernel.printed()[k];
      std::vector<int64_t> shape = v->type().shape();
      size_t size = static_cast<size_t>(v->type().num_elements());
      ASSERT_EQ(values[k].size(), size * programs);
      for (int64_t pid = 0; pid < programs; ++pid) {
        std::vector<int64_t> one(values[k].begin() + pid * size,
                                 values[k].begin() + (pid + 1) * size);
        std::string broken = broken_fact(analysis.get(v), shape, one);
        EXPECT_EQ(broken, "")
            << "value v" << k << " (" << v->defining_op()->name() << ") "
            << analysis.get(v).str() << ", program " << pid << ", seed " << seed
            << "\n"
            << print_axis_info(f);
        if (!broken.empty())
          return;
      }
    }
  }
}

} // namespace
} // namespace blocc::ir
