// The one source of randomness of the differential tests: a seeded
// SplitMix64 stream with the few draws the generator and the input maker
// need. Written out here (rather than std::uniform_*_distribution, whose
// results differ between standard libraries) so that a seed names the same
// kernel and the same inputs on every machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace blocc::differential {

class Random {
public:
  explicit Random(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, n) for n > 0 (the modulo bias is below 2^-40 for the
  /// small n used here).
  uint64_t below(uint64_t n) { return next() % n; }

  /// Uniform in [lo, hi], both included.
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }

  /// True with probability `percent` / 100.
  bool percent(int percent) {
    return below(100) < static_cast<uint64_t>(percent);
  }

  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  template <typename T> const T &pick(const std::vector<T> &items) {
    return items[below(items.size())];
  }

  /// An index drawn with probability proportional to `weights[i]`.
  size_t weighted(const std::vector<int> &weights) {
    int total = 0;
    for (int w : weights)
      total += w;
    int64_t r = static_cast<int64_t>(below(static_cast<uint64_t>(total)));
    for (size_t i = 0; i < weights.size(); ++i) {
      r -= weights[i];
      if (r < 0)
        return i;
    }
    return weights.size() - 1;
  }

private:
  uint64_t state_;
};

} // namespace blocc::differential
