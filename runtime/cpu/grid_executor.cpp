#include "runtime/cpu/grid_executor.h"

#include "ir/error.h"
#include "runtime/cpu/thread_count.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>

namespace blocc::runtime::cpu {

namespace {

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

/// Scratch memory for the kernels a thread runs, kept between launches and
/// grown as needed (a kernel's blocks live there, not on the stack, whose
/// size OpenMP threads do not let us choose).
void *thread_scratch(size_t bytes) {
  thread_local std::unique_ptr<void, FreeDeleter> buffer;
  thread_local size_t capacity = 0;
  if (bytes > capacity) {
    size_t rounded = (bytes + 63) / 64 * 64;
    buffer.reset(std::aligned_alloc(64, rounded));
    if (!buffer) {
      capacity = 0;
      return nullptr;
    }
    capacity = rounded;
  }
  return buffer.get();
}

/// The first failure of a launch: the smallest linear program index wins,
/// so that a failing launch reports the same program however its programs
/// were scheduled (among those that ran before the launch stopped).
class FirstFailure {
public:
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  void record(int64_t index, std::string message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failed_ || index < index_) {
      index_ = index;
      message_ = std::move(message);
    }
    failed_.store(true, std::memory_order_relaxed);
  }
  void rethrow() const {
    if (failed_)
      throw Error(message_);
  }

private:
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  int64_t index_ = 0;
  std::string message_;
};

} // namespace

void run_grid(const Grid &grid, const GridLaunch &launch) {
  const int64_t total = grid.x * grid.y * grid.z;
  if (total <= 0)
    return;
  FirstFailure failure;
  const int threads = static_cast<int>(std::min<int64_t>(num_threads(), total));
  const int64_t chunk = std::max<int64_t>(1, total / (int64_t{threads} * 16));
#pragma omp parallel num_threads(threads)
  {
    ProgramState state;
    state.grid[0] = grid.x;
    state.grid[1] = grid.y;
    state.grid[2] = grid.z;
    state.kernel = launch.kernel;
    state.bounds = launch.bounds;
    state.launch = launch.launch_checks;
    void *scratch = thread_scratch(launch.scratch_bytes);
    if (!scratch && launch.scratch_bytes > 0)
      failure.record(-1, "cannot allocate " +
                             std::to_string(launch.scratch_bytes) +
                             " bytes of kernel scratch memory");
      // Programs in a grid usually cost the same; dynamic scheduling in
      // small chunks still balances the ones that do not (masked tails,
      // early exits) at one atomic increment per chunk. No barrier after
      // the loop (nowait): the region's end is one, and each barrier costs
      // a wait for the slowest thread (a whole scheduler time slice when
      // the machine is oversubscribed and a thread is descheduled).
#pragma omp for schedule(dynamic, chunk) nowait
    for (int64_t linear = 0; linear < total; ++linear) {
      if (failure.failed())
        continue;
      state.program[0] = linear % grid.x;
      state.program[1] = (linear / grid.x) % grid.y;
      state.program[2] = linear / (grid.x * grid.y);
      if (launch.function(launch.args, &state, scratch) != 0)
        failure.record(linear, std::move(state.error));
      state.error.clear();
    }
  }
  failure.rethrow();
}

} // namespace blocc::runtime::cpu
