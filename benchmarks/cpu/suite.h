// The benchmark rows of blocc_bench_cpu, each a method that checks blocc's
// result against its peer's, times both and appends Records to the report.
#pragma once

#include "checks.h"
#include "numpy_peer.h"
#include "peers.h"
#include "report.h"
#include "timing.h"

#include <random>

namespace bench {

class Suite {
public:
  Suite(Report &report, NumpyPeer &numpy, TimingPlan plan, uint64_t seed)
      : report_(report), numpy_(numpy), plan_(plan), rng_(seed) {}

  /// Cold compile latency: the median over `runs` fresh processes (this
  /// program re-run as `self --cold-compile`) of the first launch.
  void compile_latency(const std::string &self, int runs);
  /// The host time of a cached relaunch of a one-program grid.
  void relaunch();
  void vector_add(int n);
  /// An elementwise math function against libmvec's (peers.h).
  void math(peer::MathFunction function, int n);
  void softmax(int rows, int cols);
  void layer_norm(int rows, int cols);
  void matmul(int m, int n, int k);

  bool failed() const { return check_.failed(); }

private:
  std::vector<float> random(size_t n, float lo, float hi);
  void add_numpy_note(const std::string &what);
  /// A row of `metric` = `amount` / 10^9 per second over blocc's and the
  /// peer's median `seconds` (in that order), with the bar min_ratio.
  static Record throughput(const std::string &kernel,
                           std::vector<int64_t> shape,
                           const std::string &metric, double amount,
                           const std::vector<double> &seconds,
                           const std::string &peer, const std::string &config,
                           double min_ratio);

  Report &report_;
  NumpyPeer &numpy_;
  TimingPlan plan_;
  std::mt19937_64 rng_;
  Checker check_;
};

/// What `--cold-compile` runs in a fresh process: the first launch of
/// vector add, in milliseconds (-1 when its result is wrong).
double cold_compile_milliseconds();

} // namespace bench
