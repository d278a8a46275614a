// What the CPU backend knows about a compiled kernel at run time, without
// LLVM: the places where a program can fail or print (each a numbered
// site that generated code passes to a runtime hook), and how much scratch
// memory a program needs. Messages name the kernel, the program and the op
// exactly as the reference interpreter does.
#pragma once

#include "ir/type.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blocc::cpu {

/// A place in the kernel where a program may stop with an error. The
/// message reads "kernel 'k', program (x, y, z), <op>: " followed by
///   LaneFirst:  "<lane>: <message>"         (integer division by zero)
///   NoLane:     "<message>"                 (a zero loop step)
///   FalseLane:  "<message> (<lane> is false)"  (a failed assert)
/// where <lane> is "lane 5" or "lane 5 (index (1, 1))" (describe_lane).
struct FaultSite {
  enum class Form { LaneFirst, NoLane, FalseLane };
  std::string op;      // "div at kernel.cpp:12" (ir::Operation::describe)
  std::string message; // "integer division by zero"
  std::vector<int64_t> shape; // of the value whose lane failed
  Form form = Form::LaneFirst;
};

/// A print op: how to format the operands generated code hands over.
struct PrintSite {
  std::string prefix;
  bool hex = false;
  /// Element type and shape (empty for scalars) of each operand; the data
  /// arrives in storage form (see backends/llvm/llvm_types.h).
  std::vector<ir::Scalar> elements;
  std::vector<std::vector<int64_t>> shapes;
};

struct KernelInfo {
  std::string name;
  std::vector<FaultSite> faults;
  std::vector<PrintSite> prints;
  size_t scratch_bytes = 0;
};

/// "lane 5" or, for blocks of rank 2 and more, "lane 5 (index (1, 1))".
std::string describe_lane(int64_t lane, const std::vector<int64_t> &shape);

} // namespace blocc::cpu
