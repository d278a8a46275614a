// What every tutorial's main() shares, so that a tutorial's own file holds
// its launch and its float64 reference and little else: the backends to run
// on, fresh random inputs, outputs poisoned with NaN, the comparison with
// the reference, timing, the table, and the last line `NN-name: PASSED`.
//
//   int main() {
//     tutorial::Tutorial t("01-vector-add");
//     t.run([&](auto &on) {                   // once per backend
//       for (int n : {1, 97, 98431}) {
//         auto x = tutorial::random_uniform(n, -1, 1);
//         std::vector<double> want = ...;      // the float64 reference
//         auto x_on = on.copy(x);              // the backend's memory
//         auto out = on.copy(tutorial::poisoned<float>(n));
//         on.row(std::to_string(n), bytes_moved,
//                [&] { add[{bl::cdiv(n, 1024)}](x_on, x_on, out, n, 1024); },
//                [&](tutorial::Check &check) {
//                  check("out", on.read(out), want, {1e-6, 0});
//                });
//       }
//     });
//     return t.finish();                        // PASSED: 0, FAILED: 1
//   }
//
// The backends, in order: the host's (the CPU backend on HostBuffers, or
// the reference interpreter where blocc was built without the CPU backend
// or BLOCC_BACKEND=interpreter asks for it), then the GPU backend on
// DeviceBuffers where blocc::cuda::is_available(); otherwise a line says
// why the GPU was skipped. The launch is the same code on both: the
// buffers' memory picks the backend.
//
// Timing: the median of up to nine samples (fewer where they add up to
// half a second: the interpreter is slow), each sample a batch of launches
// timed with the host's steady clock and ended by the backend's
// synchronize (blocc::cuda::synchronize on the GPU), the batch doubled
// until it takes 1 ms, so that the GPU's launch latency and the clock's
// resolution are spread over many launches; the batches before that are
// the warm-up. The rate is GB/s of the bytes the tutorial says one launch
// must move (reads plus writes), or TFLOP/s of its floating-point
// operations (Work::flops).
#pragma once

#include <blocc/blocc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace blocc::tutorial {

/// Inputs differ in every run; the seed is printed, and BLOCC_TUTORIAL_SEED
/// repeats a run's inputs.
inline uint64_t seed() {
  static const uint64_t value = [] {
    if (const char *s = std::getenv("BLOCC_TUTORIAL_SEED"))
      return uint64_t(std::strtoull(s, nullptr, 10));
    return uint64_t(std::random_device{}());
  }();
  return value;
}

inline std::mt19937_64 &rng() {
  static std::mt19937_64 engine(seed());
  return engine;
}

/// `n` values uniform in [lo, hi), rounded to T (float, blocc::half, ...).
template <typename T = float>
std::vector<T> random_uniform(size_t n, double lo, double hi) {
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<T> values(n);
  for (T &v : values)
    v = T(float(uniform(rng())));
  return values;
}

/// An output's starting contents: NaN everywhere, so that an element the
/// kernel forgets to write cannot pass for a correct one.
template <typename T> std::vector<T> poisoned(size_t n) {
  return std::vector<T>(n, T(std::numeric_limits<float>::quiet_NaN()));
}

/// An element passes when |got - want| <= atol + rtol * |want|.
struct Tolerance {
  double rtol = 0, atol = 0;
};

/// Compares outputs with their float64 references; one Check per table row.
class Check {
public:
  template <typename T>
  void operator()(const std::string &what, const std::vector<T> &got,
                  const std::vector<double> &want, Tolerance tolerance) {
    char limit[64];
    std::snprintf(limit, sizeof limit, "rtol %g, atol %g", tolerance.rtol,
                  tolerance.atol);
    compare(
        what, got, want,
        [&](size_t i) {
          return tolerance.atol + tolerance.rtol * std::fabs(want[i]);
        },
        [&](size_t) { return std::string(limit); });
  }
  /// For errors a tutorial bounds element by element: element i passes
  /// when |got - want| <= bound[i].
  template <typename T>
  void within(const std::string &what, const std::vector<T> &got,
              const std::vector<double> &want,
              const std::vector<double> &bound) {
    if (bound.size() != want.size()) {
      fail(what + ": " + std::to_string(bound.size()) + " bounds for " +
           std::to_string(want.size()) + " elements");
      max_error_ = INFINITY;
      return;
    }
    compare(
        what, got, want, [&](size_t i) { return bound[i]; },
        [&](size_t i) {
          char limit[64];
          std::snprintf(limit, sizeof limit, "bound %g", bound[i]);
          return std::string(limit);
        });
  }
  /// The largest |got - want| compared (infinite for a NaN).
  double max_error() const { return max_error_; }
  bool ok() const { return mismatch_.empty(); }
  /// The first element out of tolerance, in words.
  const std::string &mismatch() const { return mismatch_; }

private:
  /// allowed(i) is element i's largest error; limit(i) says it in words.
  template <typename T, typename Allowed, typename Limit>
  void compare(const std::string &what, const std::vector<T> &got,
               const std::vector<double> &want, Allowed &&allowed,
               Limit &&limit) {
    if (got.size() != want.size()) {
      fail(what + ": " + std::to_string(got.size()) + " elements, the " +
           "reference has " + std::to_string(want.size()));
      max_error_ = INFINITY;
      return;
    }
    for (size_t i = 0; i < got.size(); ++i) {
      double g = double(float(got[i])), error = std::fabs(g - want[i]);
      if (!(error <= allowed(i))) {
        char line[200];
        std::snprintf(line, sizeof line,
                      "%s[%zu] = %.9g, the reference %.9g (%s)", what.c_str(),
                      i, g, want[i], limit(i).c_str());
        fail(line);
        error = std::isnan(error) ? INFINITY : error;
      }
      max_error_ = std::max(max_error_, error);
    }
  }
  void fail(const std::string &what) {
    if (mismatch_.empty())
      mismatch_ = what;
  }
  std::string mismatch_;
  double max_error_ = 0;
};

/// What one launch does, for the table's rate column: bytes it must move
/// (reads plus writes; GB/s), or floating-point operations (TFLOP/s).
struct Work {
  double amount = 0;
  bool operations = false;
  static Work bytes(double n) { return {n, false}; }
  static Work flops(double n) { return {n, true}; }
};

/// What both kinds of backend share: the table rows and the timing.
class Backend {
public:
  explicit Backend(std::string label) : label_(std::move(label)) {}
  virtual ~Backend() = default;

  /// Runs `launch` once on outputs the caller has just poisoned, lets
  /// `verify` compare them with the reference, times `launch`, and prints
  /// the row: `size` is the size's label, `bytes` what one launch moves.
  template <typename Launch, typename Verify>
  void row(const std::string &size, double bytes, Launch &&launch,
           Verify &&verify) {
    row(size, Work::bytes(bytes), launch, verify);
  }
  template <typename Launch, typename Verify>
  void row(const std::string &size, Work work, Launch &&launch,
           Verify &&verify) {
    if (rows_++ == 0)
      std::printf("%-12s %-16s %-11s %-11s %-14s\n", "backend", "size",
                  "max |err|", "time", "rate");
    launch();
    Check check;
    verify(check);
    passed_ &= check.ok();
    double seconds = median_seconds(launch);
    std::printf("%-12s %-16s %-11.3g %-11s %-14s %s\n", label_.c_str(),
                size.c_str(), check.max_error(), duration(seconds).c_str(),
                rate(work, seconds).c_str(), check.ok() ? "ok" : "MISMATCH");
    if (!check.ok())
      std::printf("  first mismatch: %s\n", check.mismatch().c_str());
  }

  bool passed() const { return passed_; }
  void fail() { passed_ = false; }
  /// "cpu", "interpreter" or "gpu": the table's backend column.
  const std::string &label() const { return label_; }
  /// Whether launches run on a GPU (for configurations chosen per backend).
  bool is_gpu() const { return label_ == "gpu"; }

protected:
  /// Returns when every launch queued so far has finished.
  virtual void synchronize() = 0;

private:
  double median_seconds(const std::function<void()> &launch) {
    using clock = std::chrono::steady_clock;
    auto sample = [&](int launches) {
      auto start = clock::now();
      for (int i = 0; i < launches; ++i)
        launch();
      synchronize();
      return std::chrono::duration<double>(clock::now() - start).count();
    };
    // The checked launch has compiled the kernel; the batch's calibration
    // warms up the rest.
    int batch = 1;
    double seconds = sample(batch);
    while (seconds < 1e-3 && batch < 4096)
      seconds = sample(batch *= 2);
    std::vector<double> per_launch{seconds / batch};
    double total = seconds;
    while (per_launch.size() < 9 && total < 0.5) {
      seconds = sample(batch);
      total += seconds;
      per_launch.push_back(seconds / batch);
    }
    std::nth_element(per_launch.begin(),
                     per_launch.begin() + per_launch.size() / 2,
                     per_launch.end());
    return per_launch[per_launch.size() / 2];
  }

  static std::string rate(Work work, double seconds) {
    char text[32];
    if (work.operations)
      std::snprintf(text, sizeof text, "%.3f TFLOP/s",
                    work.amount / seconds * 1e-12);
    else
      std::snprintf(text, sizeof text, "%.1f GB/s",
                    work.amount / seconds * 1e-9);
    return text;
  }

  static std::string duration(double seconds) {
    char text[32];
    if (seconds < 1e-3)
      std::snprintf(text, sizeof text, "%.2f us", seconds * 1e6);
    else if (seconds < 1)
      std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
    else
      std::snprintf(text, sizeof text, "%.3f s", seconds);
    return text;
  }

  std::string label_;
  int rows_ = 0;
  bool passed_ = true;
};

/// Host memory: the CPU backend, or the interpreter.
class HostBackend : public Backend {
public:
  HostBackend()
      : Backend(host_backend_description().starts_with("CPU") ? "cpu"
                                                              : "interpreter"),
        description_(host_backend_description()) {}

  const std::string &description() const { return description_; }
  /// Processors that run programs in parallel (hardware threads), for
  /// grids sized to the machine.
  int processors() const {
    return std::max(1, int(std::thread::hardware_concurrency()));
  }

  template <typename T> HostBuffer<T> copy(const std::vector<T> &host) const {
    return HostBuffer<T>(std::span<const T>(host));
  }
  template <typename T> std::vector<T> read(const HostBuffer<T> &buffer) const {
    return std::vector<T>(buffer.data(), buffer.data() + buffer.size());
  }

protected:
  void synchronize() override {} // host launches return when done

private:
  std::string description_;
};

/// Device memory on the current GPU: the GPU backend.
class GpuBackend : public Backend {
public:
  GpuBackend()
      : Backend("gpu"), properties_(cuda::properties(cuda::current_device())) {}

  std::string description() const {
    return "GPU backend: " + properties_.name + " (sm_" +
           std::to_string(properties_.compute_capability) + ", " +
           std::to_string(properties_.multiprocessors) + " SMs)";
  }
  /// Multiprocessors, for grids sized to the GPU.
  int processors() const { return properties_.multiprocessors; }

  template <typename T> DeviceBuffer<T> copy(const std::vector<T> &host) const {
    return DeviceBuffer<T>(host);
  }
  /// Waits for the launches queued before it (the copy is synchronous).
  template <typename T>
  std::vector<T> read(const DeviceBuffer<T> &buffer) const {
    return buffer.to_host();
  }

protected:
  void synchronize() override { cuda::synchronize(); }

private:
  cuda::DeviceProperties properties_;
};

/// Runs a tutorial's body on every backend and keeps the verdict.
class Tutorial {
public:
  explicit Tutorial(std::string name) : name_(std::move(name)) {
    std::printf("%s (random inputs from seed %llu: BLOCC_TUTORIAL_SEED=%llu "
                "repeats them)\n",
                name_.c_str(), (unsigned long long)seed(),
                (unsigned long long)seed());
  }

  /// Calls body(backend) with a HostBackend, then with a GpuBackend where
  /// a GPU is available.
  template <typename Body> void run(Body &&body) {
    HostBackend host;
    run_on(host, body);
    if (!cuda::is_available()) {
      std::printf("\nSkipping the GPU backend: %s\n",
                  cuda::unavailable_reason().c_str());
      return;
    }
    GpuBackend gpu;
    run_on(gpu, body);
  }

  /// Prints `NN-name: PASSED` or `FAILED`; returns main's exit status.
  int finish() const {
    std::printf("%s: %s\n", name_.c_str(), passed_ ? "PASSED" : "FAILED");
    return passed_ ? 0 : 1;
  }

private:
  template <typename B, typename Body> void run_on(B &backend, Body &body) {
    std::printf("\nRunning on the %s.\n", backend.description().c_str());
    try {
      body(backend);
    } catch (const std::exception &e) {
      std::printf("error: %s\n", e.what());
      backend.fail();
    }
    passed_ &= backend.passed();
  }

  std::string name_;
  bool passed_ = true;
};

} // namespace blocc::tutorial
