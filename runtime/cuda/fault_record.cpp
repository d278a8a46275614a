#include "runtime/cuda/fault_record.h"

#include "ir/error.h"
#include "runtime/cuda/context.h"
#include "runtime/cuda/loaded_kernel.h"

#include <string>

namespace blocc::cuda {

using namespace driver;

std::optional<FaultRecord> take_fault_record(const LoadedKernel &kernel,
                                             CUcontext context,
                                             CUstream stream) {
  const std::string what = "kernel '" + kernel.name() + "'";
  ContextScope scope(context);
  auto [address, bytes] = kernel.global_in(context, kFaultRecordSymbol);
  if (bytes != sizeof(FaultRecord))
    throw Error(what + ": internal: its fault record has " +
                std::to_string(bytes) + " bytes, expected " +
                std::to_string(sizeof(FaultRecord)));
  // A stream created with CU_STREAM_NON_BLOCKING is not ordered before
  // the default stream's copy below.
  if (stream)
    check(api().cuStreamSynchronize(stream), "cuStreamSynchronize",
          what + " (waiting for its stream before reading its fault record; "
                 "the error may come from this or an earlier launch)");
  FaultRecord record{};
  // Synchronous: waits for the launch (on the context's default stream).
  check(api().cuMemcpyDtoH(&record, address, sizeof record), "cuMemcpyDtoH",
        what + " (while reading its fault record after the launch; the "
               "error may come from this or an earlier launch)");
  if (record.site == 0)
    return std::nullopt;
  check(api().cuMemsetD8(address, 0, sizeof record), "cuMemsetD8",
        what + " (clearing its fault record)");
  return record;
}

void raise_recorded_fault(const LoadedKernel &kernel,
                          const std::vector<runtime::FaultSite> &faults,
                          CUcontext context, CUstream stream) {
  if (faults.empty())
    return;
  // The launch must end before its fault record can be read: a kernel
  // that can fail runs synchronously.
  std::optional<FaultRecord> fault = take_fault_record(kernel, context, stream);
  if (!fault)
    return;
  if (fault->site < 1 || fault->site > faults.size())
    throw Error(
        "kernel '" + kernel.name() + "': internal: fault record names site " +
        std::to_string(fault->site) + " of " + std::to_string(faults.size()));
  const int64_t program[3] = {fault->pid[0], fault->pid[1], fault->pid[2]};
  throw Error(runtime::describe_fault(kernel.name(), faults[fault->site - 1],
                                      program, fault->lane));
}

} // namespace blocc::cuda
