#include "backends/interpreter/execution_site.h"

#include "ir/error.h"
#include "ir/function.h"

#include <cstdio>

namespace blocc::interp {

std::string ProgramId::str() const {
  return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " +
         std::to_string(z) + ")";
}

std::string ExecutionSite::str() const {
  std::string s = "kernel '" + (kernel ? kernel->name() : std::string("?")) +
                  "', program " + program.str();
  if (op)
    s += ", " + op->describe();
  return s;
}

void ExecutionSite::fail(const std::string &what) const {
  throw Error(str() + ": " + what);
}

std::string hex_address(uint64_t address) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%016llx",
                static_cast<unsigned long long>(address));
  return buffer;
}

} // namespace blocc::interp
