// device_assert, integer division by run-time divisors, device_print and
// Philox random numbers on the GPU against the CPU backend.
//
// A failing assert or a zero divisor stops its program, and the next
// synchronization throws the CPU backend's message word for word (kernel,
// program, the op with its source line, the lane); the failing program stores
// nothing after the fault, the others run, and the CUDA context stays usable (a
// fault record, not a trap). Print output is captured and compared with
// the CPU backend's as a set of lines (the GPU's lines come in no fixed
// order; floats, printed with %.9g there, compare by the value they read
// back as). The PTX is ptxas-assembled for sm_80 and sm_90 everywhere; the
// runs skip (reported as skipped) without a GPU.
#include "cpu/cache_support.h"
#include "nvptx/support.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <sstream>

namespace bl = blocc;
using namespace blocc::gpu_testing;
using ::testing::HasSubstr;

namespace {

/// The message of the blocc::Error a launch throws, or, for a GPU launch,
/// the next synchronization (GPU faults surface asynchronously,
/// runtime/cuda/fault_record.h).
template <typename F> std::string launch_error(F &&launch) {
  return error_of([&] {
    launch();
    blocc::cuda::synchronize();
  });
}

// ---------------------------------------------------------------- assert
int assert_line = 0;
auto checked_sqrt =
    bl::kernel("checked_sqrt", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                  bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto v = bl::load(x + offs, mask, 1.0f); // masked-off lanes pass
      assert_line = __LINE__ + 1;
      bl::device_assert(v >= 0, "x must not be negative");
      bl::store(out + offs, bl::sqrt(v), mask);
    });

TEST(GpuAssert, FailureGivesTheCpuBackendsMessageAndStopsOnlyItsProgram) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int n = 1000, block = 256; // 4 warps: lanes 70 and 200 in others
  auto x = random_values<float>(n, 0, 100);
  x[2 * block + 200] = -2;
  x[2 * block + 70] = -1; // the first false lane of program 2
  DeviceBuffer<float> dx(x);
  auto dout = poisoned_on_gpu<float>(n);
  std::string gpu = launch_error(
      [&] { checked_sqrt[{bl::cdiv(n, block)}](dx, dout, n, block); });
  auto out = poisoned<float>(n);
  std::string cpu = launch_error(
      [&] { checked_sqrt[{bl::cdiv(n, block)}].with(kCpu)(x, out, n, block); });
  EXPECT_EQ(gpu, cpu);
  EXPECT_THAT(gpu, HasSubstr("kernel 'checked_sqrt', program (2, 0, 0), "
                             "assert at gpu_debug_test.cpp:" +
                             std::to_string(assert_line) +
                             ": assertion failed: x must not be negative "
                             "(lane 70 is false)"));
  // Program 2 stored nothing; the others ran to completion.
  std::vector<float> got = dout.to_host();
  for (int i = 0; i < n; ++i) {
    bool failing = i / block == 2;
    if (failing)
      ASSERT_TRUE(std::isnan(got[i])) << "element " << i;
    else
      ASSERT_EQ(got[i], std::sqrt(x[i])) << "element " << i;
  }
  // The context is still usable: the same kernel runs again.
  std::vector<float> good = random_values<float>(n, 0, 100);
  DeviceBuffer<float> dgood(good);
  checked_sqrt[{bl::cdiv(n, block)}](dgood, dout, n, block);
  got = dout.to_host();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(got[i], std::sqrt(good[i])) << "element " << i;
}

TEST(GpuAssert, SeveralFailingProgramsReportTheFirst) {
  BLOCC_REQUIRE_GPU();
  const int n = 64 * 997, block = 64;
  for (int round = 0; round < 3; ++round) {
    std::vector<float> x(n, 1.0f);
    for (int p : {900, 513 - round, 700, 996})
      x[p * block + 63 - round] = -1;
    DeviceBuffer<float> dx(x);
    auto dout = poisoned_on_gpu<float>(n);
    std::string message = launch_error(
        [&] { checked_sqrt[{bl::cdiv(n, block)}](dx, dout, n, block); });
    EXPECT_THAT(message, HasSubstr("program (" + std::to_string(513 - round) +
                                   ", 0, 0)"));
    EXPECT_THAT(message, HasSubstr("(lane " + std::to_string(63 - round) +
                                   " is false)"));
  }
}

int grid_assert_line = 0;
auto checked_grid =
    bl::kernel("checked_grid", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out,
                                  bl::i32 n, bl::i32 refused) {
      auto r = bl::expand_dims(bl::arange(0, 8), 1);
      auto c = bl::expand_dims(bl::arange(0, 32), 0);
      auto base = bl::program_id(1) * 256;
      auto v = bl::load(x + base + r * 32 + c);
      bl::device_assert(bl::program_id(1) != refused, "program refused");
      grid_assert_line = __LINE__ + 1;
      bl::device_assert(v < n, "v in range");
      bl::store(out + base + r * 32 + c, v * 2);
    });

TEST(GpuAssert, TwoDimensionalAndScalarConditionsNameTheirLanes) {
  BLOCC_REQUIRE_GPU();
  std::vector<int32_t> x(3 * 256, 5);
  x[256 + 3 * 32 + 17] = 100; // program (0, 1, 0), lane 113 = (3, 17)
  x[256 + 5 * 32 + 2] = 100;
  DeviceBuffer<int32_t> dx(x);
  auto dout = poisoned_on_gpu<int32_t>(3 * 256);
  auto out = poisoned<int32_t>(3 * 256);
  std::string gpu = launch_error([&] {
    checked_grid[{1, 3}](dx, dout, 10, -1);
  });
  std::string cpu = launch_error([&] {
    checked_grid[{1, 3}].with(kCpu)(x, out, 10, -1);
  });
  EXPECT_EQ(gpu, cpu);
  EXPECT_THAT(gpu, HasSubstr("program (0, 1, 0), assert at "
                             "gpu_debug_test.cpp:" +
                             std::to_string(grid_assert_line)));
  EXPECT_THAT(gpu, HasSubstr("(lane 113 (index (3, 17)) is false)"));
  // The scalar condition: alike in every thread (one program fails, so
  // that the CPU backend, which stops early, names the same one).
  gpu = launch_error([&] { checked_grid[{1, 3}](dx, dout, 1000, 2); });
  cpu = launch_error([&] { checked_grid[{1, 3}].with(kCpu)(x, out, 1000, 2); });
  EXPECT_EQ(gpu, cpu);
  EXPECT_THAT(gpu, HasSubstr("program (0, 2, 0)"));
  EXPECT_THAT(gpu, HasSubstr("assertion failed: program refused (lane 0 "
                             "is false)"));
}

// -------------------------------------------------------------- division
int div_line = 0, rem_line = 0;
template <typename T> auto &divide_kernel() {
  static auto k = bl::kernel(
      "divide", [](bl::Ptr<T> x, bl::Ptr<T> d, bl::Ptr<T> e, bl::Ptr<T> q,
                   bl::Ptr<T> r, bl::i32 n, bl::Const<int> BLOCK) {
        auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
        auto mask = offs < n;
        auto xv = bl::load(x + offs, mask);
        // Masked-off lanes divide by 1.
        auto dv = bl::load(d + offs, mask, 1), ev = bl::load(e + offs, mask, 1);
        div_line = __LINE__ + 1;
        auto quotient = xv / dv;
        bl::store(q + offs, quotient, mask);
        rem_line = __LINE__ + 1;
        bl::store(r + offs, xv % ev, mask);
      });
  return k;
}

/// Random operands with the extremes mixed in; divisors are never 0 and
/// meet the dividend INT_MIN with -1.
template <typename T> std::vector<T> operands(int n, bool divisor) {
  using Limits = std::numeric_limits<T>;
  std::vector<T> v(n);
  for (auto &x : v)
    x = static_cast<T>(rng()());
  const T special[] = {Limits::min(), Limits::max(), T(0), T(1), T(-1)};
  for (int i = 0; i < n; i += 9)
    v[i] = special[(i / 9 + (divisor ? 4 : 0)) % 5];
  if (divisor)
    for (auto &x : v)
      if (x == 0)
        x = T(3);
  return v;
}

template <typename T> void check_division() {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int n = 1031, block = 128;
  auto x = operands<T>(n, false), d = operands<T>(n, true),
       e = operands<T>(n, true);
  auto &k = divide_kernel<T>();
  DeviceBuffer<T> dx(x), dd(d), de(e);
  auto dq = poisoned_on_gpu<T>(n), dr = poisoned_on_gpu<T>(n);
  k[{bl::cdiv(n, block)}](dx, dd, de, dq, dr, n, block);
  auto q = poisoned<T>(n), r = poisoned<T>(n);
  k[{bl::cdiv(n, block)}].with(kCpu)(x, d, e, q, r, n, block);
  EXPECT_TRUE(same_bits(dq.to_host(), q)); // INT_MIN / -1 wraps on both
  EXPECT_TRUE(same_bits(dr.to_host(), r));

  // A zero divisor in program 5, lane 77: the CPU backend's message, and
  // program 5 stores nothing.
  std::vector<T> zero_d = d;
  zero_d[5 * block + 77] = 0;
  zero_d[5 * block + 100] = 0;
  DeviceBuffer<T> dzero(zero_d);
  dq = poisoned_on_gpu<T>(n);
  std::string gpu = launch_error(
      [&] { k[{bl::cdiv(n, block)}](dx, dzero, de, dq, dr, n, block); });
  std::string cpu = launch_error([&] {
    k[{bl::cdiv(n, block)}].with(kCpu)(x, zero_d, e, q, r, n, block);
  });
  EXPECT_EQ(gpu, cpu);
  EXPECT_THAT(gpu, HasSubstr("kernel 'divide', program (5, 0, 0), div at "
                             "gpu_debug_test.cpp:" +
                             std::to_string(div_line) +
                             ": lane 77: integer division by zero"));
  std::vector<T> got = dq.to_host(), none = poisoned<T>(block);
  EXPECT_EQ(std::memcmp(&got[5 * block], none.data(), block * sizeof(T)), 0);
  // The remainder's divisor.
  std::vector<T> zero_e = e;
  zero_e[n - 1] = 0;
  DeviceBuffer<T> dzero_e(zero_e);
  gpu = launch_error(
      [&] { k[{bl::cdiv(n, block)}](dx, dd, dzero_e, dq, dr, n, block); });
  cpu = launch_error([&] {
    k[{bl::cdiv(n, block)}].with(kCpu)(x, d, zero_e, q, r, n, block);
  });
  EXPECT_EQ(gpu, cpu);
  EXPECT_THAT(
      gpu, HasSubstr("rem at gpu_debug_test.cpp:" + std::to_string(rem_line) +
                     ": lane " + std::to_string((n - 1) % block) +
                     ": integer remainder by zero"));
}

TEST(GpuDivision, Int32) { check_division<int32_t>(); }
TEST(GpuDivision, UInt32) { check_division<uint32_t>(); }
TEST(GpuDivision, Int64) { check_division<int64_t>(); }
TEST(GpuDivision, UInt64) { check_division<uint64_t>(); }
TEST(GpuDivision, Int16) { check_division<int16_t>(); }
TEST(GpuDivision, UInt8) { check_division<uint8_t>(); }

auto divide_scalars =
    bl::kernel("divide_scalars", [](bl::Ptr<int64_t> out, bl::i64 a,
                                    bl::i64 b) { bl::store(out, a / b); });

TEST(GpuDivision, ScalarDivisorOfZero) {
  BLOCC_REQUIRE_GPU();
  auto dout = poisoned_on_gpu<int64_t>(1);
  divide_scalars[{1}](dout, int64_t{-45}, int64_t{7});
  EXPECT_EQ(dout.to_host()[0], -6);
  std::vector<int64_t> out(1);
  std::string gpu = launch_error(
      [&] { divide_scalars[{1}](dout, int64_t{-45}, int64_t{0}); });
  std::string cpu = launch_error(
      [&] { divide_scalars[{1}].with(kCpu)(out, int64_t{-45}, int64_t{0}); });
  EXPECT_EQ(gpu, cpu);
  EXPECT_THAT(gpu, HasSubstr("lane 0: integer division by zero"));
}

// A launch that fails returns at once; the fault surfaces at the next
// call that waits for the GPU, once. BLOCC_LAUNCH_BLOCKING=1 makes the
// launch itself wait and report it.
TEST(GpuDivision, AFaultSurfacesAtTheNextSynchronizationOrUnderLaunchBlocking) {
  BLOCC_REQUIRE_GPU();
  auto dout = poisoned_on_gpu<int64_t>(1);
  divide_scalars[{1}](dout, int64_t{-45}, int64_t{0}); // does not throw
  EXPECT_THAT(error_of([] { cuda::synchronize(); }),
              HasSubstr("lane 0: integer division by zero"));
  cuda::synchronize(); // reported once
  divide_scalars[{1}](dout, int64_t{-45}, int64_t{7});
  EXPECT_EQ(dout.to_host()[0], -6);
  blocc::cache_testing::ScopedEnvironment blocking("BLOCC_LAUNCH_BLOCKING",
                                                   "1");
  EXPECT_THAT(
      error_of([&] { divide_scalars[{1}](dout, int64_t{-45}, int64_t{0}); }),
      HasSubstr("lane 0: integer division by zero"));
  cuda::synchronize();
}

// ---------------------------------------------------------- loop step 0
auto stepper = bl::kernel("stepper", [](bl::Ptr<int32_t> out, bl::i32 step) {
  auto total = bl::scalar(0, bl::int32);
  for (auto i : bl::range(0, 10, step))
    total = total + i;
  bl::store(out, total);
});

auto constant_steps =
    bl::kernel("constant_steps", [](bl::Ptr<int32_t> out, bl::i32 n) {
      auto total = bl::zeros({64}, bl::int32);
      for (auto i : bl::range(0, n, 3))
        total = total + i / 7 + bl::arange(0, 64) % 5;
      bl::store(out + bl::arange(0, 64), total);
    });

// A grid-stride loop: its step, the number of programs, is never 0.
auto grid_stride =
    bl::kernel("grid_stride", [](bl::Ptr<int32_t> out, bl::i32 n) {
      for (auto i : bl::range(bl::program_id(0), n, bl::num_programs(0)))
        bl::store(out + i, i * 2);
    });

TEST(GpuLoop, AGridStrideLoopNeedsNoFaultRecordAndCoversEveryElement) {
  std::vector<int32_t> out(1000);
  const ir::Function &k = specialization(grid_stride, out, 1000);
  expect_ptx_assembles(k);
  EXPECT_THAT(ptx_for(k), ::testing::Not(HasSubstr("blocc_fault_record")));
  BLOCC_REQUIRE_GPU();
  for (int programs : {1, 7, 64}) {
    auto dout = poisoned_on_gpu<int32_t>(1000);
    grid_stride[{programs}](dout, 997);
    std::vector<int32_t> got = dout.to_host();
    for (int i = 0; i < 997; ++i)
      ASSERT_EQ(got[i], 2 * i)
          << "element " << i << ", " << programs << " programs";
  }
}

TEST(GpuLoop, ZeroStepGivesTheCpuBackendsMessage) {
  BLOCC_REQUIRE_GPU();
  auto dout = poisoned_on_gpu<int32_t>(1);
  stepper[{1}](dout, 3);
  EXPECT_EQ(dout.to_host()[0], 0 + 3 + 6 + 9);
  std::vector<int32_t> out(1);
  std::string gpu = launch_error([&] { stepper[{2}](dout, 0); });
  std::string cpu = launch_error([&] { stepper[{2}].with(kCpu)(out, 0); });
  EXPECT_THAT(gpu, HasSubstr("step is 0: the loop would never end"));
  // The CPU backend stops at its first failing program, which may not be
  // program 0 when both run at once: compare past the program.
  EXPECT_EQ(gpu.substr(gpu.find("), ")), cpu.substr(cpu.find("), ")));
  EXPECT_THAT(gpu, HasSubstr("program (0, 0, 0)"));
  stepper[{1}](dout, -2); // the context is still usable
  EXPECT_EQ(dout.to_host()[0], 0);
}

TEST(GpuDebugPtx, AssertsAndDivisionsAssemble) {
  std::vector<float> f(1000);
  std::vector<int32_t> i(768);
  for (const ir::Function *function :
       {&specialization(checked_sqrt, f, f, 1000, 256),
        &specialization(checked_grid, i, i, 10, -1)}) {
    expect_ptx_assembles(*function);
    std::string ptx = ptx_for(*function);
    EXPECT_THAT(ptx, HasSubstr("blocc_fault_record"));
    EXPECT_THAT(ptx, HasSubstr("bar.red.or.pred"));
    EXPECT_THAT(ptx, ::testing::Not(HasSubstr("trap;")));
  }
  std::vector<int64_t> w(1031);
  std::vector<uint8_t> b(1031);
  expect_ptx_assembles(
      specialization(divide_kernel<int64_t>(), w, w, w, w, w, 1031, 128));
  expect_ptx_assembles(
      specialization(divide_kernel<uint8_t>(), b, b, b, b, b, 1031, 128), 1);
  std::vector<int64_t> one(1);
  expect_ptx_assembles(
      specialization(divide_scalars, one, int64_t{7}, int64_t{3}));
  std::vector<int32_t> total(1);
  const ir::Function &loop = specialization(stepper, total, 3);
  expect_ptx_assembles(loop);
  EXPECT_THAT(ptx_for(loop), ::testing::Not(HasSubstr("trap;")));
  EXPECT_THAT(ptx_for(loop), HasSubstr("blocc_fault_record"));
  // Constant steps and divisors need no check (nor a synchronous launch).
  const ir::Function &constant =
      specialization(constant_steps, std::vector<int32_t>(64), 10);
  expect_ptx_assembles(constant);
  EXPECT_THAT(ptx_for(constant),
              ::testing::Not(HasSubstr("blocc_fault_record")));
}

// ----------------------------------------------------------------- print
auto printing = bl::kernel("printing", [](bl::Ptr<float> x, bl::Ptr<int32_t> k,
                                          bl::Ptr<double> y, bl::i32 n,
                                          bl::Const<int> BLOCK) {
  auto pid = bl::program_id(0);
  auto offs = pid * BLOCK + bl::arange(0, BLOCK);
  auto mask = offs < n;
  auto v = bl::load(x + offs, mask);
  auto kv = bl::load(k + offs, mask);
  bl::device_print("f32 v", {v});
  bl::device_print("i32 100% bits", {bl::bitcast(v, bl::uint32)}, true);
  bl::device_print("i32 pair", {offs, kv});
  bl::device_print("f64 y", {bl::load(y + offs, mask)});
  bl::device_print("i64 wide", {bl::cast(kv, bl::int64) * 3000000000LL});
  bl::device_print("u8 low", {bl::cast(kv, bl::uint8)});
  bl::device_print("i1 mask", {mask});
  bl::device_print("f16 h", {bl::cast(v, bl::float16)});
  bl::device_print("bf16 b", {bl::cast(v, bl::bfloat16)});
  bl::device_print("i16 hex", {bl::cast(kv, bl::int16)}, true);
  bl::device_print("i32 pid", {pid});
  bl::device_print("i32 nothing", {});
  auto r = bl::expand_dims(bl::arange(0, 4), 1);
  auto c = bl::expand_dims(bl::arange(0, 8), 0);
  bl::device_print("i32 grid", {r * 10 + c + pid * 100});
});

/// A printed line with its float value (labels starting f16/bf16/f32/f64)
/// rewritten as the shortest text that reads back the same, as the CPU
/// backend prints it.
std::string normalized(const std::string &line) {
  size_t space = line.rfind(' ');
  bool single = line.find(" f32 ") != std::string::npos ||
                line.find(" f16 ") != std::string::npos ||
                line.find(" bf16 ") != std::string::npos;
  bool wide = line.find(" f64 ") != std::string::npos;
  if (space == std::string::npos || (!single && !wide))
    return line;
  std::string value = line.substr(space + 1);
  char buffer[64];
  std::to_chars_result end;
  if (wide)
    end = std::to_chars(buffer, buffer + sizeof buffer,
                        std::strtod(value.c_str(), nullptr));
  else
    end = std::to_chars(buffer, buffer + sizeof buffer,
                        std::strtof(value.c_str(), nullptr));
  return line.substr(0, space + 1) + std::string(buffer, end.ptr);
}

std::vector<std::string> sorted_lines(const std::string &text, bool normalize) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    lines.push_back(normalize ? normalized(line) : line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(GpuPrint, PrintsTheCpuBackendsLinesInSomeOrder) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int n = 300, block = 128, programs = 3;
  auto x = random_values<float>(n, -1e4, 1e4);
  x[1] = -0.0f, x[2] = 1e-42f, x[3] = 0.1f, x[4] = INFINITY, x[5] = NAN;
  auto k = random_values<int32_t>(n, -100000, 100000);
  std::vector<double> y(n);
  for (int i = 0; i < n; ++i)
    y[i] = double(x[i]) / 3.0;
  DeviceBuffer<float> dx(x);
  DeviceBuffer<int32_t> dk(k);
  DeviceBuffer<double> dy(y);
  ::testing::internal::CaptureStdout();
  printing[{programs}](dx, dk, dy, n, block);
  cuda::synchronize();
  std::string gpu = ::testing::internal::GetCapturedStdout();
  ::testing::internal::CaptureStdout();
  printing[{programs}].with(kCpu)(x, k, y, n, block);
  std::string cpu = ::testing::internal::GetCapturedStdout();
  std::vector<std::string> gpu_lines = sorted_lines(gpu, true);
  std::vector<std::string> cpu_lines = sorted_lines(cpu, false);
  // Per program: 10 block prints of 128 lines (pair: 2 x 128), a scalar,
  // an empty one, the 4 x 8 grid.
  ASSERT_EQ(cpu_lines.size(), size_t(programs * (11 * block + 2 + 32)));
  ASSERT_EQ(gpu_lines.size(), cpu_lines.size());
  for (size_t i = 0; i < cpu_lines.size(); ++i)
    ASSERT_EQ(gpu_lines[i], cpu_lines[i]) << "sorted line " << i;
  EXPECT_THAT(gpu, HasSubstr("pid (1, 0, 0) idx (3, 7) i32 grid 137\n"));
  EXPECT_THAT(gpu, HasSubstr("pid (2, 0, 0) i32 nothing\n"));
  EXPECT_THAT(gpu, HasSubstr("pid (0, 0, 0) idx (3) f32 v 0.100000001\n"));
}

TEST(GpuDebugPtx, PrintCallsVprintf) {
  std::vector<float> x(300);
  std::vector<int32_t> k(300);
  std::vector<double> y(300);
  const ir::Function &f = specialization(printing, x, k, y, 300, 128);
  expect_ptx_assembles(f);
  std::string ptx = ptx_for(f);
  EXPECT_THAT(ptx, HasSubstr("call.uni (retval0), \n\tvprintf"));
}

// ---------------------------------------------------------------- philox
auto randoms =
    bl::kernel("randoms", [](bl::Ptr<uint32_t> ints, bl::Ptr<float> uniform,
                             bl::Ptr<uint64_t> wide, bl::Ptr<float> normal,
                             bl::i64 seed, bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto words = bl::randint4x(seed, offs);
      for (int j = 0; j < 4; ++j)
        bl::store(ints + j * n + offs, words[j], mask);
      bl::store(ints + 4 * n + offs, bl::randint(seed, offs, 3), mask);
      bl::store(uniform + offs, bl::rand(seed, offs), mask);
      auto four = bl::rand4x(seed, offs + 7);
      for (int j = 0; j < 4; ++j)
        bl::store(uniform + (j + 1) * n + offs, four[j], mask);
      auto w = bl::philox(seed, bl::cast(offs, bl::uint64), 0, 1, 2);
      for (int j = 0; j < 4; ++j)
        bl::store(wide + j * n + offs, w[j], mask);
      bl::store(uniform + 5 * n + offs, bl::uint_to_uniform_float(w[0]), mask);
      bl::store(normal + offs, bl::randn(seed, offs), mask);
    });

TEST(GpuPhilox, MatchesTheCpuBackend) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int n = 5003, block = 256;
  for (int64_t seed :
       {int64_t{0}, int64_t{-7}, static_cast<int64_t>(rng()())}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto dints = poisoned_on_gpu<uint32_t>(5 * n);
    auto duniform = poisoned_on_gpu<float>(6 * n);
    auto dwide = poisoned_on_gpu<uint64_t>(4 * n);
    auto dnormal = poisoned_on_gpu<float>(n);
    randoms[{bl::cdiv(n, block)}](dints, duniform, dwide, dnormal, seed, n,
                                  block);
    auto ints = poisoned<uint32_t>(5 * n);
    auto uniform = poisoned<float>(6 * n);
    auto wide = poisoned<uint64_t>(4 * n);
    auto normal = poisoned<float>(n);
    randoms[{bl::cdiv(n, block)}].with(kCpu)(ints, uniform, wide, normal, seed,
                                             n, block);
    EXPECT_TRUE(same_bits(dints.to_host(), ints));
    EXPECT_TRUE(same_bits(duniform.to_host(), uniform));
    EXPECT_TRUE(same_bits(dwide.to_host(), wide));
    EXPECT_TRUE(all_written(uniform));
    // randn: Box-Muller through log, sqrt, sin and cos, the CPU backend's
    // code on the GPU too (backends/llvm); allow their last bits.
    std::vector<float> gpu_normal = dnormal.to_host();
    EXPECT_TRUE(all_written(normal));
    for (int i = 0; i < n; ++i) {
      int64_t a = std::bit_cast<int32_t>(gpu_normal[i]);
      int64_t b = std::bit_cast<int32_t>(normal[i]);
      ASSERT_LE(std::abs(a - b), 2) << "randn lane " << i << ": gpu "
                                    << gpu_normal[i] << ", cpu " << normal[i];
    }
  }
}

TEST(GpuDebugPtx, PhiloxAssembles) {
  std::vector<uint32_t> i(5 * 64);
  std::vector<float> f(6 * 64);
  std::vector<uint64_t> w(4 * 64);
  std::vector<float> g(64);
  expect_ptx_assembles(
      specialization(randoms, i, f, w, g, int64_t{1}, int32_t{64}, 64));
}

} // namespace
