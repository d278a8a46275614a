#include "runtime/aot/launch.h"

#include <cstdio>
#include <string>

namespace blocc::aot {

namespace {

std::string argument(const char *kernel, int position, const char *entry) {
  return "kernel '" + std::string(kernel) + "', argument " +
         std::to_string(position) + " (" + entry + ")";
}

} // namespace

void require_aligned(const void *pointer, size_t alignment, const char *kernel,
                     int position, const char *entry) {
  if (reinterpret_cast<uintptr_t>(pointer) % alignment == 0)
    return;
  char address[32];
  std::snprintf(address, sizeof address, "%p", pointer);
  throw Error(argument(kernel, position, entry) + ": the address " + address +
              " is not " + std::to_string(alignment) +
              "-byte aligned, which this specialization assumes; pass " +
              "aligned memory, or compile a specialization without ':" +
              std::to_string(alignment) + "' for it");
}

void require_divisible(int64_t value, int64_t divisor, const char *kernel,
                       int position, const char *entry) {
  if (value % divisor == 0)
    return;
  throw Error(argument(kernel, position, entry) + ": " + std::to_string(value) +
              " is not a multiple of " + std::to_string(divisor) +
              ", which this specialization assumes; compile a " +
              "specialization without ':" + std::to_string(divisor) +
              "' for such values");
}

} // namespace blocc::aot
