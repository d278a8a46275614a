// The random generator of the differential and GPU test suites: seeded
// differently in every run so that over many runs more inputs are tried,
// and reproducible with BLOCC_TEST_SEED=<the seed BLOCC_SEED_TRACE prints
// with a failure>.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

namespace blocc::test_seed {

/// The run's seed: $BLOCC_TEST_SEED when set, else a fresh random one.
inline uint64_t seed() {
  static const uint64_t s = [] {
    if (const char *env = std::getenv("BLOCC_TEST_SEED"))
      return static_cast<uint64_t>(std::strtoull(env, nullptr, 10));
    return static_cast<uint64_t>(std::random_device{}());
  }();
  return s;
}

inline std::mt19937_64 &rng() {
  static std::mt19937_64 engine(seed());
  return engine;
}

} // namespace blocc::test_seed

/// Prints the seed with every failure of the enclosing scope.
#define BLOCC_SEED_TRACE()                                                     \
  SCOPED_TRACE("BLOCC_TEST_SEED=" + std::to_string(::blocc::test_seed::seed()))
