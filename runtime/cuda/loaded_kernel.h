// A compiled kernel's PTX and its launches: the module is loaded into each
// CUDA context the kernel runs in on first use (cuModuleLoadDataEx, with
// the JIT compiler's error log in the message when the driver rejects the
// PTX; or the cubin of the PTX assembler BLOCC_PTXAS names, assembled once:
// ptx_assembler.h) and its function cached per context; a kernel needing more
// than 48 KB of dynamic shared memory has it enabled per function there
// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), after checking the
// device's opt-in limit. Launches check the grid against the device's
// limits first. A kernel that can fail gets a fault record per context
// (fault_record.h), and its launches are watched for faults. Internal to
// runtime/ and backends/.
#pragma once

#include "runtime/cuda/driver_api.h"
#include "runtime/fault_site.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace blocc::cuda {

class FaultWatch;

struct LaunchShape {
  std::array<int64_t, 3> grid{1, 1, 1}; // programs along x, y, z
  int threads = 128;                    // per program (CTA), along x
};

class LoadedKernel {
public:
  /// `name` is the user's kernel name (for messages), `symbol` the PTX
  /// entry's name, `dynamic_shared_bytes` what each launch requests (the
  /// size of the PTX's `.extern .shared` buffer; 0 if none), `faults`
  /// where its programs may stop with an error (none: it cannot fail).
  /// `cubin`, when given, is what the PTX assembler BLOCC_PTXAS names
  /// made of `ptx` (read from a cache): loaded instead of assembling.
  LoadedKernel(std::string name, std::string ptx, std::string symbol,
               unsigned dynamic_shared_bytes = 0,
               std::vector<runtime::FaultSite> faults = {},
               std::string cubin = {});

  const std::string &name() const { return name_; }
  const std::string &ptx() const { return ptx_; }
  const std::string &symbol() const { return symbol_; }
  unsigned dynamic_shared_bytes() const { return dynamic_shared_bytes_; }

  /// Launches the kernel in `context` on `stream` (nullptr: the context's
  /// default stream), asynchronously: nothing waits for the GPU. First
  /// reports the fault of an earlier launch that has finished
  /// (fault_record.h); a fault of this one surfaces later the same way.
  /// `parameters[i]` points at the value of the PTX entry's parameter i.
  /// Throws blocc::Error naming the kernel for a grid beyond the device's
  /// limits and for every driver error.
  void launch(driver::CUcontext context, const LaunchShape &shape,
              void **parameters, driver::CUstream stream = nullptr) const;

  /// The function in `context` (the context must be current). Throws
  /// blocc::Error naming the kernel and both sizes when it needs more
  /// shared memory than the device allows a block.
  driver::CUfunction function_in(driver::CUcontext context) const;

private:
  struct Loaded {
    unsigned long long context_key = 0; // of the context it was loaded in
    driver::CUmodule module = nullptr;
    driver::CUfunction function = nullptr;
    /// The largest grid along x, y, z on the context's device.
    std::array<int64_t, 3> grid_limits{};
    FaultWatch *faults = nullptr; // none when the kernel cannot fail
  };
  const Loaded &loaded_in(driver::CUcontext context) const;
  /// What cuModuleLoadDataEx loads: the PTX, for the driver's JIT, or
  /// the cubin of the PTX assembler BLOCC_PTXAS names (ptx_assembler.h),
  /// made once. Called with mutex_ held.
  const std::string &module_image() const;
  void enable_dynamic_shared_memory(driver::CUfunction function) const;
  /// "kernel 'name'", for messages.
  std::string what() const { return "kernel '" + name_ + "'"; }

  std::string name_, ptx_, symbol_;
  unsigned dynamic_shared_bytes_ = 0;
  std::vector<runtime::FaultSite> faults_;
  mutable std::mutex mutex_;
  // The cubin loaded instead of the PTX: given, or made by module_image().
  mutable std::string cubin_;
  // Per context (context_key in context.h). Entries are never removed
  // (a map's nodes stay put), so the last one used can be read without
  // the mutex.
  mutable std::map<unsigned long long, Loaded> loaded_;
  // The entry the last launch used: a relaunch in the same context (the
  // usual case) finds it without locking.
  mutable std::atomic<const Loaded *> last_loaded_{nullptr};
};

/// The context device memory at `address` was allocated in; errors name
/// kernel `kernel`.
driver::CUcontext context_of_pointer(uint64_t address,
                                     const std::string &kernel);

/// The context `stream` belongs to, or nullptr for the null stream and the
/// special handles CU_STREAM_LEGACY and CU_STREAM_PER_THREAD (each
/// context's own default streams). Throws blocc::Error naming kernel
/// `kernel` when the driver does not know the handle.
driver::CUcontext context_of_stream(driver::CUstream stream,
                                    const std::string &kernel);

} // namespace blocc::cuda
