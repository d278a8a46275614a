// blocc.testing.do_bench's clock on a GPU: CUDA events recorded on the
// launches' stream around the timed call, and an L2 flush (a memset of a
// buffer larger than the L2) before it, as triton.testing.do_bench does.
#pragma once

#include <pybind11/pybind11.h>

namespace blocc::python {

/// Defines blocc._blocc._GpuTimer(device, flush_bytes):
/// flush(stream), start(stream), stop(stream), elapsed_ms() (waits for
/// the stop event). `stream` is a CUstream handle (0: the default stream).
void define_gpu_timer(pybind11::module_ &module);

} // namespace blocc::python
