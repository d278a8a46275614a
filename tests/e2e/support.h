// What every end-to-end kernel test needs: fresh random inputs, poisoned
// outputs, and comparisons with tolerances that fit the dtype.
#pragma once

#include "poison.h"

#include <blocc/blocc.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace blocc::testing {

/// A generator seeded differently in every run (the seed is printed on
/// failure through the test's SCOPED_TRACE) unless BLOCC_TEST_SEED is set.
inline std::mt19937_64 &rng() {
  static std::mt19937_64 engine([] {
    if (const char *s = std::getenv("BLOCC_TEST_SEED"))
      return static_cast<uint64_t>(std::strtoull(s, nullptr, 10));
    return static_cast<uint64_t>(std::random_device{}());
  }());
  return engine;
}

inline std::vector<float> random_floats(size_t n, float lo = -1, float hi = 1) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto &x : v)
    x = d(rng());
  return v;
}

template <typename T> std::vector<T> random_ints(size_t n, T lo, T hi) {
  std::uniform_int_distribution<int64_t> d(lo, hi);
  std::vector<T> v(n);
  for (auto &x : v)
    x = static_cast<T>(d(rng()));
  return v;
}

// Output buffers filled with NaN, so that an element the kernel forgot to
// write cannot pass for a correct one.
using poison::nan::poisoned;

/// Relative-plus-absolute closeness, reporting the first mismatch.
inline ::testing::AssertionResult all_close(const std::vector<float> &got,
                                            const std::vector<double> &want,
                                            double rtol = 1e-5,
                                            double atol = 1e-6) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << "size " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], w = want[i];
    if (!(std::abs(g - w) <= atol + rtol * std::abs(w)))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

} // namespace blocc::testing
