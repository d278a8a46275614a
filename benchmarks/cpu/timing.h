// Timing of benchmark repetitions: warm-up runs first (page faults, JIT,
// caches), then many timed repetitions of which the median is reported, so
// that one descheduled repetition on a shared machine does not move the
// result. Two functions compared with each other run interleaved, one
// repetition each in turn, so that a slow phase of the machine slows both.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace bench {

/// How long to measure: at least `min_reps` repetitions and at least
/// `min_seconds` of timed runs (of each side), at most `max_reps`.
struct TimingPlan {
  int warmup = 3;
  int min_reps = 10;
  int max_reps = 1000;
  double min_seconds = 1.0;
};

inline double seconds_of(const std::function<void()> &f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Median seconds of each function, measured interleaved.
inline std::vector<double>
median_seconds(const std::vector<std::function<void()>> &fs,
               const TimingPlan &plan) {
  for (int w = 0; w < plan.warmup; ++w)
    for (const auto &f : fs)
      f();
  std::vector<std::vector<double>> times(fs.size());
  double spent = 0;
  for (int rep = 0; rep < plan.max_reps; ++rep) {
    if (rep >= plan.min_reps && spent >= plan.min_seconds)
      break;
    double slowest = 0;
    for (size_t i = 0; i < fs.size(); ++i) {
      times[i].push_back(seconds_of(fs[i]));
      slowest = std::max(slowest, times[i].back());
    }
    spent += slowest;
  }
  std::vector<double> medians;
  for (const auto &t : times)
    medians.push_back(median(t));
  return medians;
}

} // namespace bench
