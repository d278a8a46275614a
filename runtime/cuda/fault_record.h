// The fault record of a GPU kernel: how a program that stops at a run-time
// error (a failed device_assert, an integer division by zero) tells the
// host what happened, without trapping.
//
// A trap would end the launch at once but leave the CUDA context unusable
// (every later call in the process fails until the primary context is
// reset, which frees every buffer in it). Instead, generated code keeps one
// record per module, a global variable named kFaultRecordSymbol: the
// failing program writes it under a spin lock (the program with the
// smallest linear index wins, as on the CPU backend) and all its threads
// return, so the program stores nothing after the fault; the other
// programs run to completion. After a launch of a kernel that can fault the
// host reads the record (a synchronizing copy) and, when it holds a fault,
// clears it and raises the error. The layout is shared with
// backends/nvptx/lower_fault.cpp, which writes it field by field at these
// offsets. Internal to runtime/ and backends/.
#pragma once

#include "runtime/cuda/driver_api.h"
#include "runtime/fault_site.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace blocc::cuda {

class LoadedKernel;

struct FaultRecord {
  uint32_t lock;    // 1 while a program writes the record
  uint32_t site;    // the kernel's fault site + 1; 0: no fault
  uint64_t program; // linear index of the reporting program (x fastest)
  uint32_t pid[3];  // its program ids
  uint32_t lane;    // the failing element of the value (0 for scalars)
};
static_assert(sizeof(FaultRecord) == 32 && offsetof(FaultRecord, site) == 4 &&
                  offsetof(FaultRecord, program) == 8 &&
                  offsetof(FaultRecord, pid) == 16 &&
                  offsetof(FaultRecord, lane) == 28,
              "the fault record's layout is part of the generated code");

constexpr const char *kFaultRecordSymbol = "blocc_fault_record";

/// Waits for the work queued in `context` (the record is read with a
/// synchronous copy; first `stream`, when the launch named one, which may
/// not be ordered with the default stream) and returns the fault
/// `kernel`'s module recorded there, clearing the record; nullopt when no
/// program failed. Driver errors of the launch (a memory fault) surface
/// here as blocc::Error.
std::optional<FaultRecord> take_fault_record(const LoadedKernel &kernel,
                                             driver::CUcontext context,
                                             driver::CUstream stream = nullptr);

/// After a launch of `kernel`, whose programs may stop at `faults` (none:
/// returns at once, without waiting): takes its fault record and throws
/// the failed program's error as blocc::Error (runtime/fault_site.h).
void raise_recorded_fault(const LoadedKernel &kernel,
                          const std::vector<runtime::FaultSite> &faults,
                          driver::CUcontext context,
                          driver::CUstream stream = nullptr);

} // namespace blocc::cuda
