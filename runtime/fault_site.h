// The places where a compiled program may stop with an error (a failed
// device_assert, an integer division by zero, a zero loop step), numbered
// in the order a backend's lowering meets them. Generated code reports a
// site's number (the CPU backend through a runtime hook, the GPU backend in
// its fault record), and the host words the error the way the reference
// interpreter does, on every backend and ahead-of-time compiled kernels
// alike:
//   "kernel 'k', program (x, y, z), <op>: " followed by
//     LaneFirst:  "<lane>: <message>"            (integer division by zero)
//     NoLane:     "<message>"                    (a zero loop step)
//     FalseLane:  "<message> (<lane> is false)"  (a failed assert)
// where <lane> is "lane 5", or "lane 5 (index (1, 1))" for blocks of rank 2
// and more. Header-only: every runtime and backend includes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace blocc::runtime {

struct FaultSite {
  enum class Form { LaneFirst, NoLane, FalseLane };
  std::string op;             // "div at kernel.cpp:12" (Operation::describe)
  std::string message;        // "integer division by zero"
  std::vector<int64_t> shape; // of the value whose lane failed
  Form form = Form::LaneFirst;
};

/// "lane 5" or, for blocks of rank 2 and more, "lane 5 (index (1, 1))".
inline std::string describe_lane(int64_t lane,
                                 const std::vector<int64_t> &shape) {
  std::string s = "lane " + std::to_string(lane);
  if (shape.size() < 2)
    return s;
  std::vector<int64_t> index(shape.size());
  int64_t rest = lane;
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = rest % shape[d];
    rest /= shape[d];
  }
  s += " (index (";
  for (size_t d = 0; d < index.size(); ++d)
    s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "))";
}

/// "kernel 'add', program (3, 0, 0)", as the interpreter names a program.
inline std::string describe_program(const std::string &kernel,
                                    const int64_t program[3]) {
  return "kernel '" + kernel + "', program (" + std::to_string(program[0]) +
         ", " + std::to_string(program[1]) + ", " + std::to_string(program[2]) +
         ")";
}

/// The error text of `site` failing in `program` at element `lane`.
inline std::string describe_fault(const std::string &kernel,
                                  const FaultSite &site,
                                  const int64_t program[3], int64_t lane) {
  std::string text = describe_program(kernel, program) + ", " + site.op + ": ";
  switch (site.form) {
  case FaultSite::Form::LaneFirst:
    return text + describe_lane(lane, site.shape) + ": " + site.message;
  case FaultSite::Form::NoLane:
    return text + site.message;
  case FaultSite::Form::FalseLane:
    return text + site.message + " (" + describe_lane(lane, site.shape) +
           " is false)";
  }
  return text + site.message;
}

} // namespace blocc::runtime
