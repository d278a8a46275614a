// The GPU's own math (backends/nvptx/gpu_math.h) without a GPU: the very
// LLVM IR the GPU backend emits for sin and cos of huge arguments (Payne
// and Hanek's reduction) and for fmod, compiled for the host and checked
// over millions of arguments against the C library (fmod: exactly; sin and
// cos: in ulps of the exact value, from double for f32 and long double for
// f64). The GPU runs the same IR through LLVM's NVPTX backend
// (tests/nvptx/gpu_math_test.cpp checks it there).
#include "backends/cpu/host_target.h"
#include "backends/cpu/jit.h"
#include "backends/llvm/optimize.h"
#include "backends/nvptx/gpu_math.h"

#include <gtest/gtest.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "test_seed.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

namespace {

using blocc::test_seed::rng;

/// A host function `T name(T...)` whose body `emit` builds from its
/// arguments with the GPU backend's emitters.
template <typename Signature> class HostFunction;
template <typename R, typename... A> class HostFunction<R(A...)> {
public:
  using Emit = std::function<llvm::Value *(llvm::IRBuilderBase &,
                                           const std::vector<llvm::Value *> &)>;
  explicit HostFunction(const Emit &emit) {
    llvm::LLVMContext context;
    llvm::Module module("gpu_math_host", context);
    auto machine = blocc::cpu::make_host_target_machine();
    module.setDataLayout(machine->createDataLayout());
    module.setTargetTriple(machine->getTargetTriple().str());
    llvm::Type *type = std::is_same_v<R, float>
                           ? llvm::Type::getFloatTy(context)
                           : llvm::Type::getDoubleTy(context);
    std::vector<llvm::Type *> parameters(sizeof...(A), type);
    auto *f = llvm::Function::Create(
        llvm::FunctionType::get(type, parameters, false),
        llvm::Function::ExternalLinkage, "gpu_math", module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", f));
    std::vector<llvm::Value *> arguments;
    for (llvm::Argument &a : f->args())
      arguments.push_back(&a);
    b.CreateRet(emit(b, arguments));
    blocc::llvm_backend::optimize_module(module, *machine);
    std::string object = blocc::cpu::emit_object(module, *machine);
    pointer_ = reinterpret_cast<R (*)(A...)>(
        blocc::cpu::load_object(object, "gpu_math", "gpu_math_host"));
  }
  R operator()(A... a) const { return pointer_(a...); }

private:
  R (*pointer_)(A...) = nullptr;
};

template <typename T> HostFunction<T(T)> sin_cos(bool cosine) {
  return HostFunction<T(T)>(
      [cosine](llvm::IRBuilderBase &b, const std::vector<llvm::Value *> &x) {
        return blocc::nvptx::emit_sin_cos(b, x[0], cosine, 0);
      });
}

template <typename T> HostFunction<T(T, T)> fmod_function() {
  return HostFunction<T(T, T)>(
      [](llvm::IRBuilderBase &b, const std::vector<llvm::Value *> &x) {
        return blocc::nvptx::emit_fmod(b, x[0], x[1]);
      });
}

/// |got - exact| in ulps of the format (p fraction bits) at exact.
template <typename T> double ulps(T got, long double exact) {
  if (std::isnan(got) || std::isnan(exact))
    return std::isnan(got) && std::isnan(exact) ? 0 : INFINITY;
  if (static_cast<long double>(got) == exact)
    return 0;
  int p = std::numeric_limits<T>::digits - 1;
  int e = std::max<int>(std::ilogb(exact),
                        std::numeric_limits<T>::min_exponent - 1);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) /
                             std::ldexp(1.0L, e - p));
}

/// Finite values of T with |x| in [2^lo, 2^hi), random sign and bits.
template <typename T> std::vector<T> wide_values(size_t n, int lo, int hi) {
  std::uniform_real_distribution<double> exponent(lo, hi);
  std::uniform_real_distribution<double> mantissa(1, 2);
  std::vector<T> v;
  for (size_t i = 0; i < n; ++i) {
    T x = static_cast<T>(std::ldexp(mantissa(rng()), int(exponent(rng()))));
    if (!std::isfinite(x))
      x = std::numeric_limits<T>::max();
    v.push_back(rng()() & 1 ? -x : x);
  }
  return v;
}

template <typename T> void check_sin_cos(const std::vector<T> &xs) {
  auto sin = sin_cos<T>(false), cos = sin_cos<T>(true);
  double worst_sin = 0, worst_cos = 0;
  T at_sin = 0, at_cos = 0;
  for (T x : xs) {
    long double s, c;
    if constexpr (std::is_same_v<T, float>) {
      s = std::sin(double(x));
      c = std::cos(double(x));
    } else {
      s = sinl(x);
      c = cosl(x);
    }
    double es = ulps(sin(x), s), ec = ulps(cos(x), c);
    if (es > worst_sin)
      worst_sin = es, at_sin = x;
    if (ec > worst_cos)
      worst_cos = ec, at_cos = x;
  }
  std::printf("%s over %zu arguments: sin within %.3f ulp (at %a), cos %.3f "
              "(at %a)\n",
              std::is_same_v<T, float> ? "f32" : "f64", xs.size(), worst_sin,
              double(at_sin), worst_cos, double(at_cos));
  // Within 1 ulp of the correctly rounded result.
  EXPECT_LE(worst_sin, 1.5) << "at " << at_sin;
  EXPECT_LE(worst_cos, 1.5) << "at " << at_cos;
}

TEST(GpuMathOnHost, SinCosOfHugeF32ArgumentsWithinOneUlp) {
  BLOCC_SEED_TRACE();
  // Every binade from 2^28 (both sides of the 2^29 switch) to the largest
  // float: random values, and a strided sweep of the bit patterns.
  std::vector<float> xs = wide_values<float>(2000000, 28, 128);
  for (uint32_t bits = 0x4d800000u; bits < 0x7f800000u; bits += 997)
    xs.push_back(std::bit_cast<float>(bits));
  for (float x : {0x1p29f, -0x1p29f, std::nextafter(0x1p29f, 0.f),
                  std::numeric_limits<float>::max(), 16367173.f * 0x1p72f,
                  0x1.921fb6p+100f})
    xs.push_back(x);
  check_sin_cos(xs);
}

TEST(GpuMathOnHost, SinCosOfHugeF64ArgumentsWithinOneUlp) {
  BLOCC_SEED_TRACE();
  std::vector<double> xs = wide_values<double>(1000000, 19, 1024);
  // The double closest to a multiple of pi/2 (r ~ 2^-60.9), and the edges.
  for (double x : {6381956970095103.0 * 0x1p797, 0x1p20, -0x1p20,
                   std::nextafter(0x1p20, 0.0),
                   std::numeric_limits<double>::max(), 0x1.921fb54442d18p+100})
    xs.push_back(x);
  check_sin_cos(xs);
}

TEST(GpuMathOnHost, SinCosOfEvery16BitFloatWithinOneUlp) {
  // The GPU computes f16 and bf16 sin and cos in f32: here every f32 value
  // of a 16-bit pattern (bf16 reaches the huge arguments; infinities and
  // NaNs give NaN), the arguments of gpu_math_test's 16-bit tests.
  std::vector<float> xs;
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    xs.push_back(std::bit_cast<float>(bits << 16)); // bf16
    uint16_t half = static_cast<uint16_t>(bits);
    xs.push_back(static_cast<float>(std::bit_cast<_Float16>(half)));
  }
  check_sin_cos(xs);
}

TEST(GpuMathOnHost, SinCosOfInfinitiesAndNaNAreNaN) {
  auto sin = sin_cos<float>(false);
  auto cos = sin_cos<double>(true);
  EXPECT_TRUE(std::isnan(sin(INFINITY)));
  EXPECT_TRUE(std::isnan(sin(-INFINITY)));
  EXPECT_TRUE(std::isnan(sin(NAN)));
  EXPECT_TRUE(std::isnan(cos(INFINITY)));
  EXPECT_TRUE(std::isnan(cos(NAN)));
  EXPECT_EQ(std::signbit(sin(-0.f)), true);
}

/// fmod bit for bit as the C library's (NaN: any NaN).
template <typename T>
void check_fmod(const std::vector<T> &xs, const std::vector<T> &ys) {
  auto fmod = fmod_function<T>();
  for (size_t i = 0; i < xs.size(); ++i) {
    T got = fmod(xs[i], ys[i]), want = std::fmod(xs[i], ys[i]);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << "fmod(" << xs[i] << ", " << ys[i] << ")";
      continue;
    }
    ASSERT_EQ(std::memcmp(&got, &want, sizeof(T)), 0)
        << std::hexfloat << "fmod(" << xs[i] << ", " << ys[i] << ") = " << got
        << ", want " << want;
  }
}

template <typename T> void fmod_suite(int lowest, int highest) {
  BLOCC_SEED_TRACE();
  // Quotients of every size: from below 1 to the widest exponent gap
  // (subnormal divisors of the largest dividends), and nearby exponents.
  std::vector<T> xs = wide_values<T>(1000000, lowest, highest);
  std::vector<T> ys = wide_values<T>(1000000, lowest, highest);
  std::vector<T> near = wide_values<T>(500000, -4, 30);
  std::vector<T> near_y = wide_values<T>(500000, -4, 6);
  xs.insert(xs.end(), near.begin(), near.end());
  ys.insert(ys.end(), near_y.begin(), near_y.end());
  const T inf = std::numeric_limits<T>::infinity(), nan = NAN;
  const T big = std::numeric_limits<T>::max();
  const T tiny = std::numeric_limits<T>::denorm_min();
  for (T x : {T(0), T(-0.0), T(1), T(-7.5), T(6), T(-6), big, -big, tiny,
              T(3) * tiny, inf, -inf, nan})
    for (T y : {T(0), T(-0.0), T(1), T(-2.5), T(3), T(1e-3), big, tiny,
                T(2) * tiny, inf, -inf, nan}) {
      xs.push_back(x);
      ys.push_back(y);
    }
  check_fmod(xs, ys);
}

TEST(GpuMathOnHost, FmodF32IsExact) { fmod_suite<float>(-149, 128); }
TEST(GpuMathOnHost, FmodF64IsExact) { fmod_suite<double>(-1074, 1024); }

} // namespace
