// Timing for the GPU benchmark programs: device time of bursts of launches
// between two CUDA events (what the GPU spends), and host time of bursts of
// launches (what the CPU spends queueing them). Each figure is the median
// of many samples after a warm-up burst (compilation, module load, first
// touch), so one slow sample does not move it.
#pragma once

#include "runtime/cuda/device.h"
#include "runtime/cuda/driver_api.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace gpu_bench {

namespace driver = blocc::cuda::driver;

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Median device milliseconds per call of `work`, timed with CUDA events on
/// `stream` (nullptr: the current context's default stream) around bursts
/// of `burst` calls. Needs a current context.
inline double median_ms(const std::function<void()> &work, int samples,
                        int burst, driver::CUstream stream = nullptr) {
  const driver::Api &api = driver::api();
  driver::CUevent start = nullptr, stop = nullptr;
  driver::check(api.cuEventCreate(&start, 0), "cuEventCreate", "benchmark");
  driver::check(api.cuEventCreate(&stop, 0), "cuEventCreate", "benchmark");
  for (int i = 0; i < burst; ++i) // warm-up
    work();
  std::vector<double> times;
  for (int s = 0; s < samples; ++s) {
    driver::check(api.cuEventRecord(start, stream), "cuEventRecord",
                  "benchmark");
    for (int i = 0; i < burst; ++i)
      work();
    driver::check(api.cuEventRecord(stop, stream), "cuEventRecord",
                  "benchmark");
    driver::check(api.cuEventSynchronize(stop), "cuEventSynchronize",
                  "benchmark");
    float ms = 0;
    driver::check(api.cuEventElapsedTime(&ms, start, stop),
                  "cuEventElapsedTime", "benchmark");
    times.push_back(ms / burst);
  }
  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);
  return median(times);
}

/// Median host microseconds per call of `launch`: each sample times a
/// burst of `burst` calls on the host clock, then waits for the GPU
/// (`wait`, outside the timed span), so the launch queue never fills and
/// every sample measures queueing alone.
inline double median_host_us(const std::function<void()> &launch,
                             const std::function<void()> &wait, int samples,
                             int burst) {
  for (int i = 0; i < burst; ++i) // warm-up
    launch();
  wait();
  std::vector<double> times;
  for (int s = 0; s < samples; ++s) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < burst; ++i)
      launch();
    auto stop = std::chrono::steady_clock::now();
    wait();
    times.push_back(
        std::chrono::duration<double, std::micro>(stop - start).count() /
        burst);
  }
  return median(times);
}

} // namespace gpu_bench
