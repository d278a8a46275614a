// The CPU backend as a runtime: faults reported with the interpreter's
// exact message, thread counts that do not change results, launches and
// compiles from many threads at once, the compile cache, backend selection
// through LaunchOptions and BLOCC_BACKEND, and the LLVM IR a kernel
// compiles to.
#include "cpu/support.h"

#include "backends/cpu/cpu_backend.h"

#include <cstdlib>
#include <thread>

namespace bl = blocc;
using namespace blocc::cpu_testing;
using ::testing::HasSubstr;

namespace {

/// Sets an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};

// --------------------------------------------------------------- faults
auto divide = bl::kernel(
    "divide", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> y, bl::Ptr<int32_t> out) {
      auto i = bl::arange(0, 4), j = bl::arange(0, 8);
      auto offs = bl::program_id(0) * 32 + bl::expand_dims(i, 1) * 8 +
                  bl::expand_dims(j, 0);
      bl::store(out + offs, bl::load(x + offs) / bl::load(y + offs));
    });

TEST(CpuFaults, DivisionByZeroNamesTheSameProgramOpAndLane) {
  auto x = random_values<int32_t>(96, -100, 100);
  std::vector<int32_t> y(96, 3);
  y[2 * 32 + 13] = 0; // program 2, lane 13 = index (1, 5)
  auto out = poisoned<int32_t>(96);
  std::string cpu = error_of([&] { divide[{3}].with(kCpu)(x, y, out); });
  std::string interpreter =
      error_of([&] { divide[{3}].with(kInterpreter)(x, y, out); });
  EXPECT_EQ(cpu, interpreter);
  EXPECT_THAT(cpu, HasSubstr("kernel 'divide', program (2, 0, 0), div at "
                             "runtime_test.cpp:"));
  EXPECT_THAT(cpu, HasSubstr("lane 13 (index (1, 5)): integer division by "
                             "zero"));
}

auto checked = bl::kernel("checked", [](bl::Ptr<float> x, bl::i32 n) {
  auto offs = bl::arange(0, 64);
  bl::device_assert(bl::load(x + offs, offs < n, 1.0) > 0,
                    "x must be positive");
});

TEST(CpuFaults, FailedAssertNamesTheSameLane) {
  std::vector<float> x(50, 1.f);
  x[37] = -2.f;
  std::string cpu = error_of([&] { checked[{1}].with(kCpu)(x, 50); });
  std::string interpreter =
      error_of([&] { checked[{1}].with(kInterpreter)(x, 50); });
  EXPECT_EQ(cpu, interpreter);
  EXPECT_THAT(cpu, HasSubstr("assertion failed: x must be positive (lane 37 "
                             "is false)"));
  // No fault: no error.
  x[37] = 2.f;
  checked[{1}].with(kCpu)(x, 50);
}

auto stepper = bl::kernel("stepper", [](bl::Ptr<int32_t> out, bl::i32 step) {
  auto total = bl::scalar(0, bl::int32);
  for (auto i : bl::range(0, 10, step))
    total = total + i;
  bl::store(out, total);
});

TEST(CpuFaults, ZeroLoopStep) {
  std::vector<int32_t> out(1);
  std::string cpu = error_of([&] { stepper[{1}].with(kCpu)(out, 0); });
  std::string interpreter =
      error_of([&] { stepper[{1}].with(kInterpreter)(out, 0); });
  EXPECT_EQ(cpu, interpreter);
  EXPECT_THAT(cpu, HasSubstr("step is 0: the loop would never end"));
}

// -------------------------------------------------------------- threads
auto scaled = bl::kernel("scaled", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                      bl::i32 n, bl::f32 factor) {
  auto offs = bl::program_id(0) * 128 + bl::arange(0, 128);
  auto mask = offs < n;
  bl::store(out + offs, bl::exp(bl::load(x + offs, mask)) * factor, mask);
});

TEST(CpuThreads, ThreadCountDoesNotChangeResults) {
  BLOCC_SEED_TRACE();
  int n = 100003;
  auto x = random_values<float>(n, -2, 2);
  std::vector<std::vector<float>> results;
  for (const char *threads : {"1", "2", "7"}) {
    ScopedEnv env("BLOCC_NUM_THREADS", threads);
    auto out = poisoned<float>(n);
    scaled[{bl::cdiv(n, 128)}].with(kCpu)(x, out, n, 1.5f);
    results.push_back(out);
  }
  EXPECT_TRUE(same(results[0], results[1]));
  EXPECT_TRUE(same(results[0], results[2]));
  for (int i = 0; i < n; i += 997) { // exp within 2 ulp, one more rounding
    double want = std::exp(double(x[i])) * 1.5;
    ASSERT_NEAR(results[0][i], want, 4e-7 * want) << i;
  }
}

TEST(CpuThreads, ConcurrentCompilesAndLaunches) {
  BLOCC_SEED_TRACE();
  // Every thread launches its own specializations (distinct factors are
  // runtime arguments, distinct sizes select distinct traces) at once.
  auto x = random_values<float>(5000, -1, 1);
  std::vector<std::vector<float>> outs(8, std::vector<float>(5000));
  std::vector<std::thread> threads;
  std::vector<std::string> errors(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      try {
        int n = 4000 + 16 * t + (t % 2); // divisible by 16 or not
        for (int repeat = 0; repeat < 3; ++repeat)
          scaled[{bl::cdiv(n, 128)}].with(kCpu)(x, outs[t], n,
                                                static_cast<float>(t));
      } catch (const std::exception &e) {
        errors[t] = e.what();
      }
    });
  for (auto &thread : threads)
    thread.join();
  for (int t = 0; t < 8; ++t) {
    EXPECT_EQ(errors[t], "");
    int n = 4000 + 16 * t + (t % 2);
    for (int i = 0; i < n; i += 101) {
      double want = std::exp(double(x[i])) * t;
      ASSERT_NEAR(outs[t][i], want, 4e-7 * want) << i;
    }
  }
}

// ---------------------------------------------------------------- cache
/// A kernel of its own for each test that counts compiles, so that other
/// tests' launches cannot have compiled its specializations already.
auto make_scaled(const char *name) {
  return bl::kernel(name, [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n,
                             bl::f32 factor) {
    auto offs = bl::program_id(0) * 128 + bl::arange(0, 128);
    auto mask = offs < n;
    bl::store(out + offs, bl::load(x + offs, mask) * factor, mask);
  });
}

TEST(CpuCompileCache, OneCompilePerDistinctKernel) {
  static auto scaled = make_scaled("cached");
  auto x = random_values<float>(256, -1, 1);
  std::vector<float> out(256);
  scaled[{2}].with(kCpu)(x, out, 256, 2.f);
  size_t before = bl::cpu::num_compiled_kernels();
  for (int i = 0; i < 5; ++i)
    scaled[{2}].with(kCpu)(x, out, 256, static_cast<float>(i));
  EXPECT_EQ(bl::cpu::num_compiled_kernels(), before);
  scaled[{2}].with(kCpu)(x, out, 255, 2.f); // n % 16 != 0: a new trace
  EXPECT_EQ(bl::cpu::num_compiled_kernels(), before + 1);
}

// --------------------------------------------------- backend selection
TEST(CpuBackendSelection, EnvironmentChoosesForAuto) {
  static auto scaled = make_scaled("selected");
  std::vector<float> x(128, 1.f), out(128);
  {
    ScopedEnv env("BLOCC_BACKEND", "cpu");
    size_t before = bl::cpu::num_compiled_kernels();
    scaled[{1}](x, out, 100, 3.f); // a new specialization: compiled
    EXPECT_EQ(bl::cpu::num_compiled_kernels(), before + 1);
  }
  {
    ScopedEnv env("BLOCC_BACKEND", "gpu-please");
    EXPECT_THAT(error_of([&] { scaled[{1}](x, out, 100, 3.f); }),
                HasSubstr("BLOCC_BACKEND='gpu-please' names no backend; "
                          "expected 'interpreter' or 'cpu'"));
  }
  {
    ScopedEnv env("BLOCC_BACKEND", "interpreter");
    size_t before = bl::cpu::num_compiled_kernels();
    scaled[{1}](x, out, 98, 3.f); // interpreted: nothing compiled
    EXPECT_EQ(bl::cpu::num_compiled_kernels(), before);
    EXPECT_EQ(out[0], 3.f);
  }
}

TEST(CpuBackendSelection, DescriptionNamesWhatRunsHostLaunches) {
  EXPECT_EQ(bl::host_backend_description(bl::Backend::Interpreter),
            "reference interpreter");
  std::string cpu = bl::host_backend_description(bl::Backend::Cpu);
  EXPECT_THAT(cpu, HasSubstr("CPU backend (" + bl::cpu::target_description()));
  {
    ScopedEnv threads("BLOCC_NUM_THREADS", "3");
    EXPECT_THAT(bl::host_backend_description(bl::Backend::Cpu),
                HasSubstr("; 3 threads)"));
  }
  {
    ScopedEnv env("BLOCC_BACKEND", "interpreter");
    EXPECT_EQ(bl::host_backend_description(), "reference interpreter");
  }
  {
    ScopedEnv env("BLOCC_BACKEND", "cpu");
    EXPECT_EQ(bl::host_backend_description(), cpu);
  }
}

TEST(CpuLlvmIr, KernelsShowTheirVectorLoops) {
  std::string ir = scaled.llvm_ir_for(std::vector<float>(10),
                                      std::vector<float>(10), 10, 1.f);
  EXPECT_THAT(ir, HasSubstr("define"));
  EXPECT_THAT(ir, HasSubstr("@llvm.masked.load"));
  EXPECT_THAT(ir, HasSubstr("@llvm.masked.store"));
}

} // namespace
