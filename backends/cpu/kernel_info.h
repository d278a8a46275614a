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
#include "runtime/cpu/program_sites.h"
#include "runtime/cpu/write_race_detector.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blocc::cpu {

using runtime::describe_lane;
using runtime::FaultSite;
using runtime::cpu::format_element;
using runtime::cpu::PrintSite;
using runtime::cpu::program_str;

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

/// The runtime's part (name, fault and print sites: what the hooks of
/// every kernel read) and what only the backend and checked kernels use.
/// ProgramState::kernel points at the ProgramSites base.
struct KernelInfo : runtime::cpu::ProgramSites {
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

} // namespace blocc::cpu
