#include "gpu_timer.h"

#include "runtime/cuda/context.h"
#include "runtime/cuda/device_buffer.h"
#include "runtime/cuda/driver_api.h"

#include <memory>

namespace py = pybind11;

namespace blocc::python {

namespace {

using namespace cuda::driver;

class GpuTimer {
public:
  GpuTimer(int device, size_t flush_bytes)
      : context_(cuda::context_for_device(device)),
        flush_(std::make_unique<DeviceAllocation>(flush_bytes, device)) {
    cuda::ContextScope scope(context_);
    check(api().cuEventCreate(&start_, 0), "cuEventCreate", what);
    check(api().cuEventCreate(&stop_, 0), "cuEventCreate", what);
  }
  ~GpuTimer() {
    cuda::ContextScope scope(context_);
    api().cuEventDestroy(start_);
    api().cuEventDestroy(stop_);
  }
  GpuTimer(const GpuTimer &) = delete;
  GpuTimer &operator=(const GpuTimer &) = delete;

  void flush(uintptr_t stream) {
    cuda::ContextScope scope(context_);
    check(api().cuMemsetD8Async(flush_->address(), 0, flush_->bytes(),
                                to_stream(stream)),
          "cuMemsetD8Async", what);
  }
  void start(uintptr_t stream) { record(start_, stream); }
  void stop(uintptr_t stream) { record(stop_, stream); }
  double elapsed_ms() {
    cuda::ContextScope scope(context_);
    check(api().cuEventSynchronize(stop_), "cuEventSynchronize", what);
    float ms = 0;
    check(api().cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime",
          what);
    return ms;
  }

private:
  static constexpr const char *what = "blocc.testing.do_bench";
  static CUstream to_stream(uintptr_t stream) {
    return reinterpret_cast<CUstream>(stream);
  }
  void record(CUevent event, uintptr_t stream) {
    cuda::ContextScope scope(context_);
    check(api().cuEventRecord(event, to_stream(stream)), "cuEventRecord", what);
  }

  CUcontext context_;
  std::unique_ptr<DeviceAllocation> flush_;
  CUevent start_ = nullptr, stop_ = nullptr;
};

} // namespace

void define_gpu_timer(py::module_ &module) {
  using release = py::call_guard<py::gil_scoped_release>;
  py::class_<GpuTimer>(module, "_GpuTimer")
      .def(py::init<int, size_t>(), release())
      .def("flush", &GpuTimer::flush, release())
      .def("start", &GpuTimer::start, release())
      .def("stop", &GpuTimer::stop, release())
      .def("elapsed_ms", &GpuTimer::elapsed_ms, release());
}

} // namespace blocc::python
