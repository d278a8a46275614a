#include "runtime/cpu/thread_count.h"

#include <omp.h>

#include <cstdlib>
#include <iostream>
#include <string>

namespace blocc::runtime::cpu {

namespace {

int parse_positive(const char *text) {
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v <= 0 || v > 1 << 16)
    return -1;
  return static_cast<int>(v);
}

int read_num_threads() {
  int v = parse_positive(std::getenv("BLOCC_NUM_THREADS"));
  if (v > 0)
    return v;
  static bool warned = false;
  if (v < 0 && !warned) {
    warned = true;
    std::cerr << "blocc: ignoring BLOCC_NUM_THREADS='"
              << std::getenv("BLOCC_NUM_THREADS")
              << "' (expected a positive integer)\n";
  }
  // omp_get_max_threads honours OMP_NUM_THREADS, else the hardware.
  return omp_get_max_threads();
}

} // namespace

int num_threads() { return read_num_threads(); }

} // namespace blocc::runtime::cpu
