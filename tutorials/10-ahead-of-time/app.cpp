// Tutorial 10, step 3: the application. It includes the headers
// blocc-compile wrote (CMakeLists.txt) and links their sources, the object
// code and blocc_runtime: no blocc frontend and no LLVM, so nothing is
// traced or compiled when it runs. Each specialization is a namespace with
// a typed launch function per kind of target (softmax_128::cpu,
// softmax_128::gpu) and its constants (softmax_128::BLOCK); choosing among
// the specializations it was built with is the application's job
// (launch_softmax below), as with Triton's ahead-of-time kernels.
//
// The check is tutorial 02's: every row against a float64 softmax, outputs
// poisoned with NaN (the padding between rows must stay NaN), on the CPU
// and then on the GPU where one is present. The last line is
// `10-ahead-of-time: PASSED` or `FAILED`.
#include "softmax_1024.h"
#include "softmax_128.h"

#include "runtime/cuda/device.h"
#include "runtime/cuda/device_buffer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

enum class Where { Cpu, Gpu };

/// The specialization whose block holds a row of `cols`: the smallest.
void launch_softmax(Where where, const blocc::Grid &grid, float *out,
                    const float *x, int in_stride, int out_stride, int rows,
                    int cols) {
  const bool cpu = where == Where::Cpu;
  if (cols <= softmax_128::BLOCK)
    cpu ? softmax_128::cpu(grid, out, x, in_stride, out_stride, rows, cols)
        : softmax_128::gpu(grid, out, x, in_stride, out_stride, rows, cols);
  else if (cols <= softmax_1024::BLOCK)
    cpu ? softmax_1024::cpu(grid, out, x, in_stride, out_stride, rows, cols)
        : softmax_1024::gpu(grid, out, x, in_stride, out_stride, rows, cols);
  else
    throw std::invalid_argument("rows of " + std::to_string(cols) +
                                " columns: this program was built with "
                                "blocks of at most 1024 columns");
}

/// Host memory 64-byte aligned (the specializations assume 16: ':16'), or
/// a blocc::DeviceBuffer.
class Buffer {
public:
  Buffer(Where where, const std::vector<float> &contents)
      : where_(where), host_(contents.size() + 16) {
    while (reinterpret_cast<uintptr_t>(host_.data() + offset_) % 64)
      ++offset_;
    std::copy(contents.begin(), contents.end(), host_.begin() + offset_);
    if (where == Where::Gpu)
      device_ = blocc::DeviceBuffer<float>(contents);
    size_ = contents.size();
  }
  float *get() {
    return where_ == Where::Gpu ? device_.data() : host_.data() + offset_;
  }
  std::vector<float> read() const {
    if (where_ == Where::Gpu)
      return device_.to_host();
    return {host_.begin() + offset_, host_.begin() + offset_ + size_};
  }

private:
  Where where_;
  std::vector<float> host_;
  size_t offset_ = 0, size_ = 0;
  blocc::DeviceBuffer<float> device_;
};

std::string time_text(double seconds) {
  char text[32];
  if (seconds < 1e-3)
    std::snprintf(text, sizeof text, "%.2f us", seconds * 1e6);
  else
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  return text;
}

uint64_t seed() {
  if (const char *s = std::getenv("BLOCC_TUTORIAL_SEED"))
    return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

/// Runs the sizes on one backend; prints a row per size; false on a
/// mismatch or an error.
bool run(Where where, int processors, std::mt19937_64 &rng) {
  std::printf("%-8s %-12s %-11s %-11s %-9s\n", "backend", "size", "max |err|",
              "time", "GB/s");
  bool passed = true;
  const struct {
    int rows, cols;
  } sizes[] = {{1, 1}, {13, 97}, {1823, 781}, {4096, 1024}};
  for (auto [rows, cols] : sizes) {
    const int in_stride = cols + 3, out_stride = cols + 5; // padded rows
    std::uniform_real_distribution<float> value(-20, 20);
    std::vector<float> x(size_t(rows) * in_stride);
    for (float &v : x)
      v = value(rng);
    Buffer in(where, x),
        out(where, std::vector<float>(size_t(rows) * out_stride, NAN));
    // A grid sized to the machine: each program strides over the rows.
    const blocc::Grid grid{std::min(rows, processors)};
    auto launch = [&] {
      launch_softmax(where, grid, out.get(), in.get(), in_stride, out_stride,
                     rows, cols);
      if (where == Where::Gpu)
        blocc::cuda::synchronize();
    };
    launch();
    std::vector<float> got = out.read();
    double max_error = 0;
    bool ok = true;
    for (int r = 0; r < rows; ++r) {
      double max = -INFINITY, sum = 0;
      for (int c = 0; c < cols; ++c)
        max = std::max<double>(max, x[size_t(r) * in_stride + c]);
      for (int c = 0; c < cols; ++c)
        sum += std::exp(double{x[size_t(r) * in_stride + c]} - max);
      for (int c = 0; c < out_stride; ++c) {
        float v = got[size_t(r) * out_stride + c];
        if (c >= cols) {
          ok = ok && std::isnan(v); // the padding: never written
          continue;
        }
        double want =
            std::exp(double{x[size_t(r) * in_stride + c]} - max) / sum;
        double error = std::abs(v - want);
        max_error = std::max(max_error, std::isnan(error) ? INFINITY : error);
        ok = ok && error <= 1e-6 + 1e-5 * want;
      }
    }
    // The median of nine launches (after the checked one).
    std::vector<double> seconds;
    for (int i = 0; i < 9; ++i) {
      auto start = std::chrono::steady_clock::now();
      launch();
      seconds.push_back(std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count());
    }
    std::nth_element(seconds.begin(), seconds.begin() + 4, seconds.end());
    const double time = seconds[4], bytes = 2.0 * rows * cols * sizeof(float);
    std::printf("%-8s %-12s %-11.3g %-11s %-9.1f %s\n",
                where == Where::Cpu ? "cpu" : "gpu",
                (std::to_string(rows) + "x" + std::to_string(cols)).c_str(),
                max_error, time_text(time).c_str(), bytes / time / 1e9,
                ok ? "" : "MISMATCH");
    passed = passed && ok;
  }
  return passed;
}

} // namespace

int main() {
  const uint64_t s = seed();
  std::mt19937_64 rng(s);
  std::printf("10-ahead-of-time: softmax compiled by blocc-compile for "
              "BLOCK = %d and %d, run with blocc_runtime alone (random "
              "inputs from seed %llu: BLOCC_TUTORIAL_SEED=%llu repeats them)\n",
              softmax_128::BLOCK, softmax_1024::BLOCK,
              static_cast<unsigned long long>(s),
              static_cast<unsigned long long>(s));
  bool passed = true;
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  std::printf("\nRunning on the CPU backend (ahead-of-time code for %s, %d "
              "threads).\n",
              softmax_128::cpu_target, threads);
  try {
    passed = run(Where::Cpu, threads, rng) && passed;
  } catch (const std::exception &e) {
    std::printf("error: %s\n", e.what());
    passed = false;
  }
#ifdef TUTORIAL_HAS_GPU_CODE
  if (blocc::cuda::is_available()) {
    const blocc::cuda::DeviceProperties gpu = blocc::cuda::properties(0);
    std::printf("\nRunning on the GPU backend: %s (sm_%d, %d SMs; %s, %d "
                "warps).\n",
                gpu.name.c_str(), gpu.compute_capability, gpu.multiprocessors,
                softmax_128::gpu_code, softmax_128::num_warps);
    try {
      passed = run(Where::Gpu, gpu.multiprocessors * 16, rng) && passed;
    } catch (const std::exception &e) {
      std::printf("error: %s\n", e.what());
      passed = false;
    }
  } else {
    std::printf("\nSkipping the GPU backend: %s\n",
                blocc::cuda::unavailable_reason().c_str());
  }
#else
  std::printf("\nSkipping the GPU backend: blocc was built without it, so "
              "the kernels have no GPU code\n");
#endif
  std::printf("\n10-ahead-of-time: %s\n", passed ? "PASSED" : "FAILED");
  return passed ? 0 : 1;
}
