// The one exception type blocc throws for every user-facing mistake: bad
// kernels at trace time, malformed IR, bad launch arguments, out-of-bounds
// accesses found by the interpreter.
#pragma once

#include <stdexcept>
#include <string>

namespace blocc {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

} // namespace blocc
