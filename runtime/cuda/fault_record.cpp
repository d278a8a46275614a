#include "runtime/cuda/fault_record.h"

#include "ir/error.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

namespace blocc::cuda {

using namespace driver;

class FaultWatch {
public:
  std::string kernel;
  std::vector<runtime::FaultSite> faults;
  /// Mapped host memory the GPU writes; volatile: the GPU changes it.
  volatile FaultRecord *record = nullptr;
  /// Events recorded after launches not yet seen to finish, and spare
  /// ones (events belong to the watch's context).
  std::vector<CUevent> in_flight, spare;
  bool pending = false; // listed in Registry::pending
};

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<FaultWatch>> watches;
  std::vector<FaultWatch *> pending; // with launches in flight
  std::atomic<size_t> num_pending{0};
};

/// Never destroyed: launches may run during static destruction.
Registry &registry() {
  static Registry *r = new Registry;
  return *r;
}

bool set_to_one(const char *variable) {
  const char *value = std::getenv(variable);
  return value && std::strcmp(value, "1") == 0;
}

/// Read at each launch of a kernel that can fail (a test sets it).
bool launch_blocking() {
  return set_to_one("BLOCC_LAUNCH_BLOCKING") ||
         set_to_one("CUDA_LAUNCH_BLOCKING");
}

/// The message of the fault `watch`'s record holds, clearing it; nullopt
/// when it holds none. Only once no launch of the module runs: no program
/// writes the record meanwhile.
std::optional<std::string> take_fault(FaultWatch &watch) {
  volatile FaultRecord &r = *watch.record;
  std::atomic_thread_fence(std::memory_order_acquire);
  const uint32_t site = r.site;
  if (site == 0)
    return std::nullopt;
  const int64_t program[3] = {r.pid[0], r.pid[1], r.pid[2]};
  const uint32_t lane = r.lane;
  r.site = 0;
  r.program = 0;
  r.lane = 0;
  std::atomic_thread_fence(std::memory_order_release);
  if (site > watch.faults.size())
    return "kernel '" + watch.kernel + "': internal: fault record names site " +
           std::to_string(site) + " of " + std::to_string(watch.faults.size());
  return runtime::describe_fault(watch.kernel, watch.faults[site - 1], program,
                                 lane);
}

} // namespace

FaultWatch *watch_faults(CUmodule module, CUcontext context,
                         const std::string &kernel,
                         std::vector<runtime::FaultSite> faults) {
  (void)context;
  const Api &a = api();
  const std::string what = "kernel '" + kernel + "'";
  CUdeviceptr global = 0;
  size_t bytes = 0;
  CUresult found =
      a.cuModuleGetGlobal(&global, &bytes, module, kFaultRecordSymbol);
  if (found == CUDA_ERROR_NOT_FOUND)
    return nullptr;
  check(found, "cuModuleGetGlobal", what);
  if (bytes != sizeof(CUdeviceptr))
    throw Error(what + ": internal: its fault record's address has " +
                std::to_string(bytes) + " bytes, expected " +
                std::to_string(sizeof(CUdeviceptr)));
  auto watch = std::make_unique<FaultWatch>();
  watch->kernel = kernel;
  watch->faults = std::move(faults);
  void *host = nullptr;
  check(a.cuMemHostAlloc(&host, sizeof(FaultRecord),
                         CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP),
        "cuMemHostAlloc", what + " (its fault record)");
  std::memset(host, 0, sizeof(FaultRecord));
  watch->record = static_cast<FaultRecord *>(host);
  CUdeviceptr address = 0;
  check(a.cuMemHostGetDevicePointer(&address, host, 0),
        "cuMemHostGetDevicePointer", what + " (its fault record)");
  check(a.cuMemcpyHtoD(global, &address, sizeof address), "cuMemcpyHtoD",
        what + " (the address of its fault record)");
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.watches.push_back(std::move(watch));
  return r.watches.back().get();
}

void note_launch(FaultWatch &watch, CUstream stream) {
  const Api &a = api();
  if (launch_blocking()) {
    check(a.cuStreamSynchronize(stream), "cuStreamSynchronize",
          "kernel '" + watch.kernel +
              "' (waiting for its launch: BLOCC_LAUNCH_BLOCKING; the error "
              "may come from this or an earlier launch)");
    std::optional<std::string> fault;
    {
      std::lock_guard<std::mutex> lock(registry().mutex);
      fault = take_fault(watch);
    }
    if (fault)
      throw Error(*fault);
    return;
  }
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  CUevent event = nullptr;
  if (watch.spare.empty()) {
    check(a.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate",
          "kernel '" + watch.kernel + "' (an event marking its launch's end)");
  } else {
    event = watch.spare.back();
    watch.spare.pop_back();
  }
  CUresult recorded = a.cuEventRecord(event, stream);
  if (recorded != CUDA_SUCCESS) {
    watch.spare.push_back(event);
    check(recorded, "cuEventRecord", "kernel '" + watch.kernel + "'");
  }
  watch.in_flight.push_back(event);
  if (!watch.pending) {
    watch.pending = true;
    r.pending.push_back(&watch);
    r.num_pending.store(r.pending.size(), std::memory_order_relaxed);
  }
}

void report_finished_faults() {
  Registry &r = registry();
  if (r.num_pending.load(std::memory_order_relaxed) == 0)
    return;
  const Api &a = api();
  std::optional<std::string> fault;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    // One error at a time: another module's fault stays in its record
    // for the next check.
    for (size_t w = 0; w < r.pending.size() && !fault;) {
      FaultWatch &watch = *r.pending[w];
      for (size_t i = 0; i < watch.in_flight.size();) {
        CUresult done = a.cuEventQuery(watch.in_flight[i]);
        if (done == CUDA_ERROR_NOT_READY) {
          ++i;
          continue;
        }
        check(done, "cuEventQuery",
              "kernel '" + watch.kernel +
                  "' (waiting for a launch of it; the error may come from "
                  "that or an earlier launch)");
        watch.spare.push_back(watch.in_flight[i]);
        watch.in_flight.erase(watch.in_flight.begin() + i);
      }
      if (!watch.in_flight.empty()) {
        ++w;
        continue;
      }
      watch.pending = false;
      r.pending.erase(r.pending.begin() + w);
      fault = take_fault(watch);
    }
    r.num_pending.store(r.pending.size(), std::memory_order_relaxed);
  }
  if (fault)
    throw Error(*fault);
}

} // namespace blocc::cuda
