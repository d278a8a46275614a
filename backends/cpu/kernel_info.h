// What the CPU backend knows about a compiled kernel at run time, without
// LLVM: the places where a program can fail or print (each a numbered
// site that generated code passes to a runtime hook), and how much scratch
// memory a program needs. Messages name the kernel, the program and the op
// exactly as the reference interpreter does.
//
// Checked kernels (BLOCC_CHECK, see lower_checks.cpp) also number their
// memory accesses (AccessSite): a lane that fails its bounds check, and a
// store that races with another program's, is reported through the access
// hooks (check_hooks.cpp), which find the launch's buffers in LaunchChecks.
#pragma once

#include "ir/type.h"
#include "runtime/cpu/program_abi.h"
#include "runtime/cpu/write_race_detector.h"

#include <cstdint>
#include <memory>
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

/// A load, store or atomic of a checked kernel.
struct AccessSite {
  enum class Kind { Load, Store, Atomic };
  Kind kind = Kind::Load;
  std::string op; // "store at kernel.cpp:12"
  ir::Scalar element = ir::Scalar::F32;
  int bytes = 4;              // of one element in memory
  std::vector<int64_t> shape; // of the access (empty for scalars)
  /// The pointer arguments the address derives from (pointer_provenance.h);
  /// `by_address`: it (also) comes from an integer, and is checked against
  /// every pointer argument's buffer, as the interpreter does.
  std::vector<int> arguments;
  bool by_address = false;
};

struct KernelInfo {
  std::string name;
  std::vector<FaultSite> faults;
  std::vector<PrintSite> prints;
  size_t scratch_bytes = 0;
  /// What the kernel was compiled to check (part of its cache key).
  bool check_bounds = false;
  bool detect_races = false; // implies check_bounds
  std::vector<AccessSite> accesses;
  /// Per kernel argument: its name ("arg2") and whether it is a pointer.
  std::vector<std::string> argument_names;
  std::vector<bool> pointer_arguments;
};

/// What the hooks of a checked kernel know about its launch
/// (ProgramState::launch).
struct LaunchChecks {
  std::vector<runtime::cpu::BufferBounds> bounds;         // per kernel argument
  std::unique_ptr<runtime::cpu::WriteRaceDetector> races; // when detecting
};

/// "lane 5" or, for blocks of rank 2 and more, "lane 5 (index (1, 1))".
std::string describe_lane(int64_t lane, const std::vector<int64_t> &shape);

/// One element in storage form, as the interpreter's print op writes it.
std::string format_element(const unsigned char *p, ir::Scalar s, bool hex);

/// "kernel 'add', program (3, 0, 0)", as the interpreter names a program.
std::string program_str(const runtime::cpu::ProgramState *state);

} // namespace blocc::cpu
