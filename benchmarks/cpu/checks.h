// Result checks that run before any timing: blocc's output against the
// peer's on the same inputs. A mismatch is printed and makes the benchmark
// exit non-zero (a fast wrong kernel is a failure, not a result).
#pragma once

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace bench {

/// Fills `v` with NaN, so that an element a kernel forgot to write fails.
inline void poison(std::vector<float> &v) {
  for (float &x : v)
    x = std::numeric_limits<float>::quiet_NaN();
}

class Checker {
public:
  /// |got - want| <= atol + rtol * |want| for every element.
  bool close(const std::string &what, const std::vector<float> &got,
             const std::vector<float> &want, double rtol, double atol) {
    return within(what, got, want, [&](size_t i) {
      return atol + rtol * std::abs(double(want[i]));
    });
  }
  /// |got - want| <= tolerance * scale[i] for every element (scale: the
  /// sum of the magnitudes of the terms, for sums of products).
  bool close_scaled(const std::string &what, const std::vector<float> &got,
                    const std::vector<float> &want,
                    const std::vector<float> &scale, double tolerance) {
    return within(what, got, want,
                  [&](size_t i) { return tolerance * double(scale[i]); });
  }
  bool failed() const { return failed_; }

private:
  template <typename Allowed>
  bool within(const std::string &what, const std::vector<float> &got,
              const std::vector<float> &want, Allowed allowed) {
    if (got.size() != want.size())
      return fail(what + ": " + std::to_string(got.size()) + " vs " +
                  std::to_string(want.size()) + " elements");
    for (size_t i = 0; i < got.size(); ++i) {
      double g = got[i], w = want[i];
      if (!(std::abs(g - w) <= allowed(i)))
        return fail(what + ": element " + std::to_string(i) + " is " +
                    std::to_string(g) + ", the peer has " + std::to_string(w) +
                    " (allowed error " + std::to_string(allowed(i)) + ")");
    }
    std::printf("  check %-44s ok\n", what.c_str());
    return true;
  }
  bool fail(const std::string &message) {
    std::printf("  check FAILED: %s\n", message.c_str());
    failed_ = true;
    return false;
  }
  bool failed_ = false;
};

} // namespace bench
