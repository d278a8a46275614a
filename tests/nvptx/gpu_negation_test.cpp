// Negated absolute values and 16-bit negation, which the PTX assembler
// miscompiles: it folds every comparison of -|x| with a constant to false
// (negated_abs_as_min.h), and the assembler of CUDA 13.0 takes neg.s16 and
// abs.s16 results as sign-extended (narrow_negation_in_32_bits.h). Each
// signed width, on inputs with 0, the minimum, the maximum and random
// values, 1 and 4 warps, against the integers a host loop computes.
#include "nvptx/support.h"

#include "ir/parser.h"

#include <limits>
#include <regex>

namespace {

using namespace blocc::gpu_testing;

constexpr int kBlock = 16;

// For x of a 16-element block per program: m = max(-|x|, -16),
// ge = -|x| >= -100, eq = -|x| == -3 (as 0 or 1), and |x| and -x widened to
// i64.
std::string negation_ir(const std::string &type) {
  std::string text = R"(
func @negation(%x: ptr<ELEM> {divisibility = 16}, %m: ptr<ELEM> {divisibility = 16},
               %ge: ptr<i32> {divisibility = 16}, %eq: ptr<i32> {divisibility = 16},
               %wa: ptr<i64> {divisibility = 16}, %wn: ptr<i64> {divisibility = 16}) {
  %pid = program_id {axis = 0} : i32
  %block = constant {value = 16} : i32
  %start = mul %pid, %block : i32
  %range = arange {end = 16, start = 0} : tensor<16xi32>
  %starts = splat %start : tensor<16xi32>
  %offs = add %starts, %range : tensor<16xi32>
  %xp = splat %x : tensor<16xptr<ELEM>>
  %xq = addptr %xp, %offs : tensor<16xptr<ELEM>>
  %v = load %xq : tensor<16xELEM>
  %a = abs %v : tensor<16xELEM>
  %na = neg %a : tensor<16xELEM>
  %c16 = constant {value = -16} : tensor<16xELEM>
  %max = maximum %na, %c16 : tensor<16xELEM>
  %c100 = constant {value = -100} : tensor<16xELEM>
  %c3 = constant {value = -3} : tensor<16xELEM>
  %one = constant {value = 1} : tensor<16xi32>
  %zero = constant {value = 0} : tensor<16xi32>
  %is_ge = cmp %na, %c100 {predicate = "ge"} : tensor<16xi1>
  %ge_v = select %is_ge, %one, %zero : tensor<16xi32>
  %is_eq = cmp %na, %c3 {predicate = "eq"} : tensor<16xi1>
  %eq_v = select %is_eq, %one, %zero : tensor<16xi32>
  %wide_abs = cast %a : tensor<16xi64>
  %n = neg %v : tensor<16xELEM>
  %wide_neg = cast %n : tensor<16xi64>
  %mp = splat %m : tensor<16xptr<ELEM>>
  %mq = addptr %mp, %offs : tensor<16xptr<ELEM>>
  store %mq, %max
  %gp = splat %ge : tensor<16xptr<i32>>
  %gq = addptr %gp, %offs : tensor<16xptr<i32>>
  store %gq, %ge_v
  %ep = splat %eq : tensor<16xptr<i32>>
  %eq2 = addptr %ep, %offs : tensor<16xptr<i32>>
  store %eq2, %eq_v
  %ap = splat %wa : tensor<16xptr<i64>>
  %aq = addptr %ap, %offs : tensor<16xptr<i64>>
  store %aq, %wide_abs
  %np = splat %wn : tensor<16xptr<i64>>
  %nq = addptr %np, %offs : tensor<16xptr<i64>>
  store %nq, %wide_neg
  return
}
)";
  return std::regex_replace(text, std::regex("ELEM"), type);
}

/// Two's complement -x and |x| (the minimum stays the minimum).
template <typename T> T wrapping_neg(T x) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U(0) - static_cast<U>(x));
}
template <typename T> T wrapping_abs(T x) {
  return x < 0 ? wrapping_neg(x) : x;
}

template <typename T> std::vector<T> inputs(size_t n) {
  std::vector<T> x = random_values<T>(n, -1000, 1000);
  const T edge[] = {0,
                    std::numeric_limits<T>::min(),
                    std::numeric_limits<T>::max(),
                    -1,
                    1,
                    3,
                    -3,
                    16,
                    -16,
                    17,
                    100,
                    -101,
                    static_cast<T>(std::numeric_limits<T>::min() + 1)};
  for (size_t i = 0; i < std::size(edge); ++i)
    x[i * 2] = edge[i]; // spread over both programs' blocks
  return x;
}

template <typename T>
void expect_negation_matches_host(const std::string &type) {
  SCOPED_TRACE(type);
  const int programs = 2;
  const size_t n = programs * kBlock;
  auto function = ir::parse_function(negation_ir(type));
  std::vector<T> x = inputs<T>(n), want_m(n);
  std::vector<int32_t> want_ge(n), want_eq(n);
  std::vector<int64_t> want_wa(n), want_wn(n);
  for (size_t i = 0; i < n; ++i) {
    T na = wrapping_neg(wrapping_abs(x[i]));
    want_m[i] = std::max<T>(na, -16);
    want_ge[i] = na >= -100;
    want_eq[i] = na == -3;
    want_wa[i] = wrapping_abs(x[i]);
    want_wn[i] = wrapping_neg(x[i]);
  }
  for (int warps : {1, 4}) {
    SCOPED_TRACE(std::to_string(warps) + " warps");
    nvptx::CompileOptions options;
    options.num_warps = warps;
    auto kernel = nvptx::compile(*function, options);
    DeviceBuffer<T> dx(x);
    auto dm = poisoned_on_gpu<T>(n);
    auto dge = poisoned_on_gpu<int32_t>(n);
    auto deq = poisoned_on_gpu<int32_t>(n);
    auto dwa = poisoned_on_gpu<int64_t>(n);
    auto dwn = poisoned_on_gpu<int64_t>(n);
    nvptx::run(*kernel, blocc::Grid(programs),
               {device_arg(dx), device_arg(dm), device_arg(dge),
                device_arg(deq), device_arg(dwa), device_arg(dwn)});
    EXPECT_EQ(dm.to_host(), want_m);
    EXPECT_EQ(dge.to_host(), want_ge);
    EXPECT_EQ(deq.to_host(), want_eq);
    EXPECT_EQ(dwa.to_host(), want_wa);
    EXPECT_EQ(dwn.to_host(), want_wn);
  }
}

TEST(GpuNegation, NegatedAbsAndNarrowNegationGiveTheHostsIntegers) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  expect_negation_matches_host<int16_t>("i16");
  expect_negation_matches_host<int32_t>("i32");
  expect_negation_matches_host<int64_t>("i64");
}

/// Whether `ptx` negates a register that an abs.sN wrote.
bool negates_an_abs(const std::string &ptx) {
  std::smatch abs;
  std::string rest = ptx;
  // Registers LLVM allocated (%r12, %rd3), not an inline asm's own.
  std::regex abs_def(R"(abs\.s(16|32|64)\s+(%r[sd]?[0-9]+),)");
  while (std::regex_search(rest, abs, abs_def)) {
    std::regex neg("neg\\.s" + abs[1].str() + "\\s+%\\w+, " + abs[2].str() +
                   ";");
    if (std::regex_search(ptx, neg))
      return true;
    rest = abs.suffix();
  }
  return false;
}

TEST(NegationPtx, NoNegatedAbsNorSixteenBitNegationReachesTheAssembler) {
  for (const char *type : {"i16", "i32", "i64"}) {
    auto function = ir::parse_function(negation_ir(type));
    expect_ptx_assembles(*function, 1);
    for (const char *arch : {"sm_80", "sm_90"}) {
      SCOPED_TRACE(std::string(type) + " " + arch);
      std::string ptx = ptx_for(*function, arch);
      EXPECT_FALSE(negates_an_abs(ptx));
      EXPECT_FALSE(std::regex_search(ptx, std::regex(R"((neg|abs)\.s16\s)")));
      // What the rewrite computes -|x| with: a compare and select.
      EXPECT_TRUE(
          std::regex_search(ptx, std::regex(R"(setp\.lt\.s(16|32|64))")));
    }
  }
}

} // namespace
