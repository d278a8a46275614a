// Differential testing of the CPU backend: the same kernel, launched on the
// reference interpreter and on the CPU backend with the same inputs and
// equally poisoned outputs, must produce the same results, bit for bit for
// integers and within a stated tolerance for floats. Where a float64 host
// reference is cheap, tests check against it too.
#pragma once

#include "ir/error.h"
#include <blocc/blocc.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "poison.h"
#include "test_seed.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace blocc::cpu_testing {

inline LaunchOptions on(Backend backend) {
  LaunchOptions options;
  options.backend = backend;
  return options;
}
inline const LaunchOptions kInterpreter = on(Backend::Interpreter);
inline const LaunchOptions kCpu = on(Backend::Cpu);

using test_seed::rng;
using test_seed::seed;

template <typename T>
std::vector<T> random_values(size_t n, double lo, double hi) {
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, half> ||
                std::is_same_v<T, bfloat16_t>) {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto &x : v)
      x = static_cast<T>(static_cast<float>(d(rng())));
  } else {
    std::uniform_int_distribution<int64_t> d(static_cast<int64_t>(lo),
                                             static_cast<int64_t>(hi));
    for (auto &x : v)
      x = static_cast<T>(d(rng()));
  }
  return v;
}

/// Every byte 0x5a: an element a kernel forgot to write stands out (and
/// both backends' outputs start alike).
using poison::bytes::poisoned;

template <typename T> double as_double(T x) {
  return static_cast<double>(static_cast<float>(x));
}
inline double as_double(double x) { return x; }

/// Bitwise equality (integers, and floats where the backends agree
/// exactly); NaNs compare equal to NaNs whatever their payload.
template <typename T>
::testing::AssertionResult same(const std::vector<T> &cpu,
                                const std::vector<T> &interpreter) {
  if (cpu.size() != interpreter.size())
    return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (std::memcmp(&cpu[i], &interpreter[i], sizeof(T)) == 0)
      continue;
    if constexpr (!std::is_integral_v<T>) {
      if (std::isnan(as_double(cpu[i])) &&
          std::isnan(as_double(interpreter[i])))
        continue;
      return ::testing::AssertionFailure()
             << "element " << i << ": cpu " << as_double(cpu[i])
             << ", interpreter " << as_double(interpreter[i]);
    } else {
      return ::testing::AssertionFailure()
             << "element " << i << ": cpu " << +cpu[i] << ", interpreter "
             << +interpreter[i];
    }
  }
  return ::testing::AssertionSuccess();
}

/// |cpu - want| <= atol + rtol * |want| for every element (NaN matches
/// NaN).
template <typename T>
::testing::AssertionResult close(const std::vector<T> &cpu,
                                 const std::vector<double> &want, double rtol,
                                 double atol) {
  if (cpu.size() != want.size())
    return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < cpu.size(); ++i) {
    double g = as_double(cpu[i]), w = want[i];
    if (std::isnan(g) && std::isnan(w))
      continue;
    if (!(std::abs(g - w) <= atol + rtol * std::abs(w)))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

template <typename T>
::testing::AssertionResult close(const std::vector<T> &cpu,
                                 const std::vector<T> &interpreter, double rtol,
                                 double atol) {
  std::vector<double> want(interpreter.size());
  for (size_t i = 0; i < want.size(); ++i)
    want[i] = as_double(interpreter[i]);
  return close(cpu, want, rtol, atol);
}

/// The message of the blocc::Error `f` throws ("" and a failure if none).
template <typename F> std::string error_of(F &&f) {
  try {
    f();
  } catch (const blocc::Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a blocc::Error";
  return {};
}

} // namespace blocc::cpu_testing
