// Kernels compiled ahead of time by blocc-compile (CMakeLists.txt), run
// through the generated launch functions with blocc_runtime alone, on the
// CPU and, where one is present, on the GPU (skipped elsewhere): results
// against float64 references on fresh random inputs (BLOCC_TEST_SEED
// repeats a run), outputs poisoned before each launch and the memory past
// them checked untouched, odd sizes (1, primes, not multiples of the
// block); the errors a launch gives for arguments the specialization does
// not fit and for a program's run-time error; and which GPU code a device
// gets (image_order).
#include "add_f32.h"
#include "add_f32_n16.h"
#include "axpy_f64.h"
#include "divide_i32.h"
#include "softmax_128.h"
#ifdef BLOCC_AOT_TEST_TMA
#include "fake_cuda/fake_cuda_driver.h"
#include "matmul_tma.h"
#endif
#include "test_seed.h"

#include "runtime/aot/launch.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/device_buffer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using ::testing::HasSubstr;

// The launch functions' types: pointers the kernel only reads are const,
// scalars have the kernel's own types, constants are the header's.
static_assert(std::is_same_v<decltype(&add_f32::cpu),
                             void (*)(const blocc::Grid &, const float *,
                                      const float *, float *, int32_t)>);
static_assert(
    std::is_same_v<decltype(&aot_test::axpy_f64::cpu),
                   void (*)(const blocc::Grid &, double, const double *,
                            const double *, double *, int64_t)>);
static_assert(add_f32::BLOCK == 1024 && add_f32_n16::BLOCK == 256 &&
              softmax_128::BLOCK == 128 && divide_i32::BLOCK == 64);

enum class Where { Cpu, Gpu };

void PrintTo(Where where, std::ostream *os) {
  *os << (where == Where::Cpu ? "cpu" : "gpu");
}

std::string where_name(const ::testing::TestParamInfo<Where> &info) {
  return info.param == Where::Cpu ? "Cpu" : "Gpu";
}

constexpr size_t kGuard = 64; // elements past an output nothing may write

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <typename T>
std::vector<T> random_values(size_t n, double low, double high) {
  std::uniform_real_distribution<double> d(low, high);
  std::vector<T> v(n);
  for (T &x : v)
    x = static_cast<T>(d(blocc::test_seed::rng()));
  return v;
}

/// Where a launch's buffers live: 64-byte aligned host memory, or a
/// blocc::DeviceBuffer. `get()` is what the launch takes; `host()` reads
/// the contents back.
template <typename T> class Buffer {
public:
  Buffer(Where where, const std::vector<T> &contents)
      : where_(where), host_(contents.size() + 64 / sizeof(T)) {
    size_t misalign = reinterpret_cast<uintptr_t>(host_.data()) % 64;
    offset_ = misalign ? (64 - misalign) / sizeof(T) : 0;
    std::copy(contents.begin(), contents.end(), host_.begin() + offset_);
    if (where == Where::Gpu)
      device_ = blocc::DeviceBuffer<T>(contents);
    size_ = contents.size();
  }
  T *get() {
    return where_ == Where::Gpu ? device_.data() : host_.data() + offset_;
  }
  std::vector<T> host() const {
    if (where_ == Where::Gpu)
      return device_.to_host();
    return std::vector<T>(host_.begin() + offset_,
                          host_.begin() + offset_ + size_);
  }

private:
  Where where_;
  std::vector<T> host_;
  size_t offset_ = 0, size_ = 0;
  blocc::DeviceBuffer<T> device_;
};

#define SKIP_WITHOUT_GPU(where)                                                \
  if ((where) == Where::Gpu && !blocc::cuda::is_available())                   \
  GTEST_SKIP() << "no GPU: " << blocc::cuda::unavailable_reason()

class AotSizes : public ::testing::TestWithParam<std::tuple<Where, int>> {};

TEST_P(AotSizes, VectorAddMatchesFloat64) {
  auto [where, n] = GetParam();
  SKIP_WITHOUT_GPU(where);
  BLOCC_SEED_TRACE();
  std::vector<float> x = random_values<float>(n, -100, 100),
                     y = random_values<float>(n, -100, 100);
  Buffer<float> xs(where, x), ys(where, y),
      out(where, std::vector<float>(n + kGuard, NAN));
  const blocc::Grid grid{cdiv(n, add_f32::BLOCK)};
  if (where == Where::Cpu)
    add_f32::cpu(grid, xs.get(), ys.get(), out.get(), n);
  else
    add_f32::gpu(grid, xs.get(), ys.get(), out.get(), n);
  std::vector<float> got = out.host();
  for (int i = 0; i < n; ++i) {
    // One rounding of the exact sum: what float addition gives.
    float want = static_cast<float>(double{x[i]} + double{y[i]});
    ASSERT_EQ(got[i], want) << "element " << i << " of " << n;
  }
  for (size_t i = n; i < n + kGuard; ++i)
    ASSERT_TRUE(std::isnan(got[i])) << "wrote past n at " << i;
}

TEST_P(AotSizes, AxpyOnDoublesWith64BitCount) {
  auto [where, n] = GetParam();
  SKIP_WITHOUT_GPU(where);
  BLOCC_SEED_TRACE();
  const double alpha = random_values<double>(1, -10, 10)[0];
  std::vector<double> x = random_values<double>(n, -1, 1),
                      y = random_values<double>(n, -1, 1);
  Buffer<double> xs(where, x), ys(where, y),
      out(where, std::vector<double>(n + kGuard, NAN));
  const blocc::Grid grid{cdiv(n, aot_test::axpy_f64::BLOCK)};
  if (where == Where::Cpu)
    aot_test::axpy_f64::cpu(grid, alpha, xs.get(), ys.get(), out.get(), n);
  else
    aot_test::axpy_f64::gpu(grid, alpha, xs.get(), ys.get(), out.get(), n);
  std::vector<double> got = out.host();
  for (int i = 0; i < n; ++i)
    // Fused or not: one or two roundings of a value below 11.
    ASSERT_NEAR(got[i], alpha * x[i] + y[i], 4e-15) << "element " << i;
  for (size_t i = n; i < n + kGuard; ++i)
    ASSERT_TRUE(std::isnan(got[i])) << "wrote past n at " << i;
}

INSTANTIATE_TEST_SUITE_P(
    OddSizes, AotSizes,
    ::testing::Combine(::testing::Values(Where::Cpu, Where::Gpu),
                       ::testing::Values(1, 2, 17, 1023, 1024, 1025, 4099,
                                         65537)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param) == Where::Cpu ? "Cpu"
                                                               : "Gpu") +
             "_n" + std::to_string(std::get<1>(info.param));
    });

class Aot : public ::testing::TestWithParam<Where> {};

TEST_P(Aot, SoftmaxRowsMatchFloat64WithOddStridesAndMaskedTails) {
  const Where where = GetParam();
  SKIP_WITHOUT_GPU(where);
  BLOCC_SEED_TRACE();
  for (int rows : {1, 13})
    for (int cols : {1, 97, 128}) {
      SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
      const int in_stride = cols + 3, out_stride = cols + 5;
      std::vector<float> in =
          random_values<float>(size_t(rows) * in_stride, -20, 20);
      Buffer<float> x(where, in),
          out(where, std::vector<float>(size_t(rows) * out_stride, NAN));
      if (where == Where::Cpu)
        softmax_128::cpu({4}, out.get(), x.get(), in_stride, out_stride, rows,
                         cols);
      else
        softmax_128::gpu({4}, out.get(), x.get(), in_stride, out_stride, rows,
                         cols);
      std::vector<float> got = out.host();
      for (int r = 0; r < rows; ++r) {
        double max = -INFINITY, sum = 0;
        for (int c = 0; c < cols; ++c)
          max = std::max<double>(max, in[r * in_stride + c]);
        for (int c = 0; c < cols; ++c)
          sum += std::exp(double{in[r * in_stride + c]} - max);
        for (int c = 0; c < out_stride; ++c) {
          float value = got[r * out_stride + c];
          if (c >= cols) {
            ASSERT_TRUE(std::isnan(value)) << "row " << r << " column " << c;
            continue;
          }
          double want = std::exp(double{in[r * in_stride + c]} - max) / sum;
          ASSERT_NEAR(value, want, 1e-6 + 2e-6 * want)
              << "row " << r << " column " << c;
        }
      }
    }
}

TEST_P(Aot, DivisionByZeroNamesTheProgramLaneAndOp) {
  const Where where = GetParam();
  SKIP_WITHOUT_GPU(where);
  const int n = 200;
  std::vector<int32_t> divisors(n, 2);
  Buffer<int32_t> x(where, std::vector<int32_t>(n, 7)), y(where, divisors),
      out(where, std::vector<int32_t>(n, -1));
  auto launch = [&] {
    const blocc::Grid grid{cdiv(n, divide_i32::BLOCK)};
    if (where == Where::Cpu)
      divide_i32::cpu(grid, x.get(), y.get(), out.get(), n);
    else {
      divide_i32::gpu(grid, x.get(), y.get(), out.get(), n);
      blocc::cuda::synchronize(); // where a GPU fault surfaces
    }
  };
  launch();
  for (int32_t q : out.host())
    ASSERT_EQ(q, 3);
  divisors[130] = 0; // program 2, lane 2
  y = Buffer<int32_t>(where, divisors);
  try {
    launch();
    FAIL() << "a zero divisor did not stop the launch";
  } catch (const blocc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel 'divide_i32', program (2, 0, 0), "
                                    "div at kernels.cpp:"));
    EXPECT_THAT(e.what(), HasSubstr(": lane 2: integer division by zero"));
  }
}

TEST_P(Aot, NegativeGridIsAnErrorAndAnEmptyGridRunsNothing) {
  const Where where = GetParam();
  SKIP_WITHOUT_GPU(where);
  Buffer<float> x(where, std::vector<float>(16, 1)),
      out(where, std::vector<float>(16, NAN));
  auto launch = [&](blocc::Grid grid) {
    if (where == Where::Cpu)
      add_f32::cpu(grid, x.get(), x.get(), out.get(), 16);
    else
      add_f32::gpu(grid, x.get(), x.get(), out.get(), 16);
  };
  try {
    launch({1, -1});
    FAIL() << "a negative grid was accepted";
  } catch (const blocc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel 'add_f32': grid dimension 1 is "
                                    "negative (-1)"));
  }
  launch({0});
  EXPECT_TRUE(std::isnan(out.host()[0]));
}

INSTANTIATE_TEST_SUITE_P(Backends, Aot,
                         ::testing::Values(Where::Cpu, Where::Gpu), where_name);

// The specialization's assumptions are checked before anything runs (no
// GPU needed: the GPU launch checks them before it asks the driver).
TEST(AotArguments, MisalignedPointerForASixteenByteSpecialization) {
  std::vector<float> ones(64, 1), out(64, 0);
  for (bool gpu : {false, true}) {
    try {
      const float *x = reinterpret_cast<const float *>(0x1000),
                  *y = reinterpret_cast<const float *>(0x1004);
      float *z = reinterpret_cast<float *>(0x2000);
      gpu ? add_f32::gpu({1}, x, y, z, 32) : add_f32::cpu({1}, x, y, z, 32);
      FAIL() << "a misaligned pointer was accepted";
    } catch (const blocc::Error &e) {
      EXPECT_THAT(e.what(), HasSubstr("kernel 'add_f32', argument 2 "
                                      "(y=*f32:16): the address 0x"));
      EXPECT_THAT(e.what(), HasSubstr("1004 is not 16-byte aligned"));
    }
  }
}

TEST(AotArguments, IntegerForAMultipleOf16Specialization) {
  // add_f32_n16 assumes nothing of its pointers, but n % 16 == 0.
  std::vector<float> x(64, 1), y(64, 2), out(64, 0);
  add_f32_n16::cpu({1}, x.data() + 1, y.data() + 3, out.data() + 1, 48);
  for (int i = 0; i < 64; ++i)
    ASSERT_EQ(out[i], i >= 1 && i <= 48 ? 3.0f : 0.0f) << i;
  for (bool gpu : {false, true}) {
    try {
      gpu ? add_f32_n16::gpu({1}, x.data(), y.data(), out.data(), 50)
          : add_f32_n16::cpu({1}, x.data(), y.data(), out.data(), 50);
      FAIL() << "n = 50 was accepted by an n=i32:16 specialization";
    } catch (const blocc::Error &e) {
      EXPECT_THAT(e.what(),
                  HasSubstr("kernel 'add_f32_n16', argument 4 (n=i32:16): 50 "
                            "is not a multiple of 16"));
    }
  }
}

// Which of a kernel's images a device of each compute capability tries.
TEST(AotImages, NewestCubinOfTheMajorThenNewestPtx) {
  const char data[] = "";
  const blocc::aot::GpuImage images[] = {
      {80, false, true, data, 1, 0},  {80, false, false, data, 1, 0},
      {86, false, true, data, 1, 0},  {90, false, true, data, 1, 0},
      {90, false, false, data, 1, 0}, {90, true, false, data, 1, 0},
  };
  static const std::vector<blocc::runtime::FaultSite> none;
  const blocc::aot::GpuKernel kernel{
      "k",
      "blocc_k",
      4,
      images,
      6,
      []() -> const std::vector<blocc::runtime::FaultSite> & { return none; }};
  using V = std::vector<size_t>;
  EXPECT_EQ(blocc::aot::image_order(kernel, 75), V{});
  EXPECT_EQ(blocc::aot::image_order(kernel, 80), (V{0, 1}));
  EXPECT_EQ(blocc::aot::image_order(kernel, 86), (V{2, 0, 1}));
  EXPECT_EQ(blocc::aot::image_order(kernel, 89), (V{2, 0, 1}));
  EXPECT_EQ(blocc::aot::image_order(kernel, 90), (V{3, 5, 4, 1}));
  EXPECT_EQ(blocc::aot::image_order(kernel, 100), (V{4, 1}));
}

// The GPU launch path against tests/fake_cuda's driver, which accepts any
// module and runs nothing (CTest's aot_gpu_launch_fake_driver runs it,
// with BLOCC_CUDA_DRIVER naming it; not discovered otherwise): the first
// launch in a context loads the kernel's code once, each launch is one
// cuLaunchKernel, and a kernel that cannot fail does not wait.
TEST(AotFakeDriver, FirstLaunchLoadsTheCodeOnceAndEachLaunchIsOneCall) {
  const char *path = std::getenv("BLOCC_CUDA_DRIVER");
  void *library = path ? dlopen(path, RTLD_NOW) : nullptr;
  using Query = int (*)(const char **, unsigned long long *, int);
  auto query =
      library ? reinterpret_cast<Query>(dlsym(library, "blocc_fake_cuda_calls"))
              : nullptr;
  ASSERT_NE(query, nullptr) << "BLOCC_CUDA_DRIVER must name tests/fake_cuda's "
                               "driver";
  // One entry point's calls so far, or (entry "") all entry points'.
  auto calls = [&](const std::string &entry) {
    const char *names[64];
    unsigned long long counts[64], total = 0;
    int n = query(names, counts, 64);
    for (int i = 0; i < n && i < 64; ++i) {
      if (entry == names[i])
        return counts[i];
      total += counts[i];
    }
    return entry.empty() ? total : 0ull;
  };
  blocc::DeviceBuffer<float> x(std::vector<float>(64, 1)), out(64);
  add_f32::gpu({1}, x.data(), x.data(), out.data(), 64);
  EXPECT_EQ(calls("cuModuleLoadDataEx"), 1u);
  EXPECT_EQ(calls("cuLaunchKernel"), 1u);
  add_f32::gpu({1}, x.data(), x.data(), out.data(), 64);
  const unsigned long long before = calls("");
  add_f32::gpu({2}, x.data(), x.data(), out.data(), 64);
  // A cached launch: cuPointerGetAttribute (the pointers' context),
  // cuCtxGetCurrent (is it current?), cuLaunchKernel, and a push and pop
  // of the context since nothing is current on this thread.
  EXPECT_EQ(calls("") - before, 5u);
  EXPECT_EQ(calls("cuModuleLoadDataEx"), 1u);
  EXPECT_EQ(calls("cuLaunchKernel"), 3u);
  EXPECT_EQ(calls("cuStreamSynchronize") + calls("cuCtxSynchronize") +
                calls("cuMemcpyDtoH_v2"),
            0u);
}

// Where BLOCC_PTXAS names a PTX assembler (CTest's
// aot_gpu_launch_with_ptx_assembler: tests/fake_cuda/fake_ptxas, which
// rejects PTX holding a zero byte), the driver gets a cubin: one compiled
// ahead of time as it is, else that assembler's of the kernel's PTX, the
// PTX without the NUL its image ends with.
TEST(AotFakeDriver, LoadsACubinWherePtxasIsNamed) {
  const char *path = std::getenv("BLOCC_CUDA_DRIVER");
  const char *assembler = std::getenv("BLOCC_PTXAS");
  if (!assembler || !*assembler)
    GTEST_SKIP() << "BLOCC_PTXAS names no PTX assembler";
  void *library = path ? dlopen(path, RTLD_NOW) : nullptr;
  using Query = const char *(*)();
  auto loaded_image = library ? reinterpret_cast<Query>(dlsym(
                                    library, "blocc_fake_cuda_loaded_image"))
                              : nullptr;
  ASSERT_NE(loaded_image, nullptr)
      << "BLOCC_CUDA_DRIVER must name tests/fake_cuda's driver";
  blocc::DeviceBuffer<float> x(std::vector<float>(64, 1)), out(64);
  add_f32_n16::gpu({1}, x.data(), x.data(), out.data(), 64);
  const std::string image = loaded_image();
  EXPECT_TRUE(image.rfind("\x7f"
                          "ELF",
                          0) == 0 ||
              image.rfind("FAKE CUBIN sm_", 0) == 0)
      << image;
}

#ifdef BLOCC_AOT_TEST_TMA
/// The f16 bits of x, a number with at most 11 significant bits in f16's
/// normal range (exact).
uint16_t f16_bits(double x) {
  if (x == 0)
    return 0;
  int exponent = 0;
  const double m = std::frexp(std::fabs(x), &exponent); // in [0.5, 1)
  return static_cast<uint16_t>((x < 0 ? 0x8000 : 0) | ((exponent + 14) << 10) |
                               static_cast<int>((2 * m - 1) * 1024));
}

/// Quarters from -2 to 2 as f16 bits, and their values: every product of
/// two is a multiple of 1/16, every sum of up to 192 of them exact in f32.
std::pair<std::vector<uint16_t>, std::vector<double>> quarters(size_t n) {
  std::uniform_int_distribution<int> d(-8, 8);
  std::pair<std::vector<uint16_t>, std::vector<double>> out;
  for (size_t i = 0; i < n; ++i) {
    const double v = d(blocc::test_seed::rng()) / 4.0;
    out.first.push_back(f16_bits(v));
    out.second.push_back(v);
  }
  return out;
}

// The matmul of tiles read and written through tensor descriptors, compiled
// ahead of time for the CPU, sm_80, sm_90 and sm_90a (an H100 runs the
// sm_90a code: TMA copies A's and B's tiles in and C's out, the launch
// encoding their three tensor maps), on M not a multiple of the block and
// N and K of 16: every element exact, nothing written past C.
TEST_P(Aot, MatmulThroughTensorDescriptorsIsExact) {
  const Where where = GetParam();
  SKIP_WITHOUT_GPU(where);
  BLOCC_SEED_TRACE();
  const int m = 257, n = 336, k = 192;
  auto [a_bits, a] = quarters(size_t(m) * k);
  auto [b_bits, b] = quarters(size_t(k) * n);
  Buffer<uint16_t> as(where, a_bits), bs(where, b_bits);
  Buffer<float> c(where, std::vector<float>(size_t(m) * n + kGuard, NAN));
  const blocc::Grid grid{cdiv(m, matmul_tma::BM), cdiv(n, matmul_tma::BN)};
  if (where == Where::Cpu)
    matmul_tma::cpu(grid, as.get(), bs.get(), c.get(), m, n, k);
  else
    matmul_tma::gpu(grid, as.get(), bs.get(), c.get(), m, n, k);
  std::vector<float> got = c.host();
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int l = 0; l < k; ++l)
        want += a[size_t(i) * k + l] * b[size_t(l) * n + j];
      ASSERT_EQ(got[size_t(i) * n + j], want) << "C[" << i << ", " << j << "]";
    }
  for (size_t i = size_t(m) * n; i < got.size(); ++i)
    ASSERT_TRUE(std::isnan(got[i])) << "wrote past C at " << i;
}

// The launch of that matmul on an sm_90 device of tests/fake_cuda's driver:
// the sm_90a code takes, after the six user parameters, the three tensor
// maps, each 128 bytes at a 64-byte aligned address, encoded at the launch
// from its arguments (the last, C's, with the extents N and M and a row of
// N floats).
TEST(AotFakeDriver, TmaKernelsGetTheirTensorMapsAfterTheUserParameters) {
  const char *path = std::getenv("BLOCC_CUDA_DRIVER");
  void *library = path ? dlopen(path, RTLD_NOW) : nullptr;
  auto entry = [&](const char *name) {
    return library ? dlsym(library, name) : nullptr;
  };
  auto record = reinterpret_cast<blocc_fake_cuda::RecordParameters>(
      entry("blocc_fake_cuda_record_parameters"));
  auto recorded = reinterpret_cast<blocc_fake_cuda::RecordedParameters>(
      entry("blocc_fake_cuda_recorded_parameters"));
  auto last_encode = reinterpret_cast<blocc_fake_cuda::LastTensorMapEncode>(
      entry("blocc_fake_cuda_last_tensor_map_encode"));
  ASSERT_TRUE(record && recorded && last_encode)
      << "BLOCC_CUDA_DRIVER must name tests/fake_cuda's driver";
  const int m = 100, n = 64, k = 32;
  blocc::DeviceBuffer<uint16_t> a(size_t(m) * k), b(size_t(k) * n);
  blocc::DeviceBuffer<float> c(size_t(m) * n);
  const unsigned sizes[] = {8, 8, 8, 4, 4, 4, 128, 128, 128};
  record(sizes, 9);
  matmul_tma::gpu({1, 1}, a.data(), b.data(), c.data(), m, n, k);
  blocc_fake_cuda::LaunchParameter p[9];
  ASSERT_EQ(recorded(p, 9), 9);
  record(nullptr, 0);
  EXPECT_EQ(blocc_fake_cuda::first_word(p[0]),
            reinterpret_cast<uintptr_t>(a.data()));
  EXPECT_EQ(blocc_fake_cuda::first_word(p[3]), uint64_t{m});
  EXPECT_EQ(blocc_fake_cuda::first_word(p[5]), uint64_t{k});
  std::vector<uint64_t> mapped;
  for (int i = 6; i < 9; ++i) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p[i].address) % 64, 0u)
        << "tensor map " << i - 6 << " at " << p[i].address;
    // The fake driver writes the global address first, then its pattern.
    mapped.push_back(blocc_fake_cuda::first_word(p[i]));
    for (int j = 8; j < 128; ++j)
      ASSERT_EQ(p[i].bytes[j], blocc_fake_cuda::tensor_map_byte(j))
          << "tensor map " << i - 6 << ", byte " << j;
  }
  std::sort(mapped.begin(), mapped.end());
  std::vector<uint64_t> buffers = {reinterpret_cast<uintptr_t>(a.data()),
                                   reinterpret_cast<uintptr_t>(b.data()),
                                   reinterpret_cast<uintptr_t>(c.data())};
  std::sort(buffers.begin(), buffers.end());
  EXPECT_EQ(mapped, buffers);
  blocc_fake_cuda::TensorMapEncode e;
  ASSERT_TRUE(last_encode(&e));
  EXPECT_EQ(e.global_address, c.data());
  EXPECT_EQ(e.global_dims[0], unsigned{n});
  EXPECT_EQ(e.global_dims[1], unsigned{m});
  EXPECT_EQ(e.global_strides[0], 4u * n);
}
#endif

} // namespace
