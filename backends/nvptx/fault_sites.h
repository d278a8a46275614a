// The places where a GPU program may stop with an error (a failed
// device_assert, an integer division by zero), numbered in the order the
// lowering meets them: generated code records the site's number in the
// kernel's fault record (runtime/cuda/fault_record.h) and the host turns
// it into the message the CPU backend gives, word for word:
//   "kernel 'k', program (x, y, z), <op>: " followed by
//     LaneFirst:  "<lane>: <message>"            (integer division by zero)
//     NoLane:     "<message>"                    (a zero loop step)
//     FalseLane:  "<message> (<lane> is false)"  (a failed assert)
// where <lane> is "lane 5" or "lane 5 (index (1, 1))" for blocks of
// rank > 1. No LLVM types: gpu_backend.cpp keeps the sites of a kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace blocc::nvptx {

struct FaultSite {
  enum class Form { LaneFirst, NoLane, FalseLane };
  std::string op;             // "div at kernel.cpp:12" (describe())
  std::string message;        // "integer division by zero"
  std::vector<int64_t> shape; // of the value whose lane failed
  Form form = Form::LaneFirst;
};

/// The error text of `site` failing in program `pid` at element `lane`.
std::string describe_fault(const std::string &kernel, const FaultSite &site,
                           const uint32_t pid[3], uint32_t lane);

} // namespace blocc::nvptx
