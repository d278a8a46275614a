// The fault record of a GPU kernel: how a program that stops at a run-time
// error (a failed device_assert, an integer division by zero) tells the
// host what happened, without trapping, and without making the launch
// wait for the GPU.
//
// A trap would end the launch at once but leave the CUDA context unusable
// (every later call in the process fails until the primary context is
// reset, which frees every buffer in it). Instead the failing program
// writes a FaultRecord under a spin lock (the program with the smallest
// linear index wins, as on the CPU backend) and all its threads return, so
// the program stores nothing after the fault; the other programs run to
// completion. backends/nvptx/lower_fault.cpp writes the record field by
// field at these offsets.
//
// The record lives in pinned host memory mapped into the GPU's address
// space, one per module and context; the module's global variable
// kFaultRecordSymbol holds its device address, set when the module is
// loaded. So reading it costs the host a memory read, not a copy. Launches
// are asynchronous, as CUDA's are: each launch of a kernel that can fail
// records an event, and a fault is reported (thrown as blocc::Error) by the
// first blocc call after every queued launch of that module has finished
// that checks: any later launch, a copy to the host, cuda::synchronize or
// synchronize_stream. BLOCC_LAUNCH_BLOCKING=1 (or CUDA_LAUNCH_BLOCKING=1)
// makes each such launch wait and report its own fault. Internal to
// runtime/ and backends/.
#pragma once

#include "runtime/cuda/driver_api.h"
#include "runtime/fault_site.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace blocc::cuda {

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

/// The module global holding the record's device address (8 bytes).
constexpr const char *kFaultRecordSymbol = "blocc_fault_record";

/// One module's fault record in one context, with the launches of it not
/// yet seen to finish (fault_record.cpp). Lives as long as the process, as
/// the module does.
class FaultWatch;

/// For `module`, just loaded into `context` (current): nullptr when the
/// module has no fault record (its kernel cannot fail); else gives it a
/// record in mapped host memory and returns the watch over it. `kernel`
/// names the kernel in messages, `faults` are its fault sites.
FaultWatch *watch_faults(driver::CUmodule module, driver::CUcontext context,
                         const std::string &kernel,
                         std::vector<runtime::FaultSite> faults);

/// Notes a launch of `watch`'s module just queued on `stream` (its context
/// current). Under BLOCC_LAUNCH_BLOCKING=1 waits for the stream and throws
/// the launch's fault, if any, at once.
void note_launch(FaultWatch &watch, driver::CUstream stream);

/// Throws, as blocc::Error, the fault an earlier launch recorded, once all
/// queued launches of its module have finished; never waits. Launches call
/// it first, and so do the calls that wait for the GPU (copies to the
/// host, synchronize), so that a fault surfaces at the first of them after
/// the failing launch ends.
void report_finished_faults();

} // namespace blocc::cuda
