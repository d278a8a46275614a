// The one header a kernel author includes.
//
//   #include <blocc/blocc.h>
//   namespace bl = blocc;
#pragma once

#include "blocc/autotune.h"
#include "blocc/block_ptr.h"
#include "blocc/control.h"
#include "blocc/dtype.h"
#include "blocc/kernel.h"
#include "blocc/ops.h"
#include "blocc/random.h"
#include "blocc/tensor.h"
#include "blocc/tensor_descriptor.h"
// blocc::Error, which every mistake and runtime fault is reported as.
#include "ir/error.h"
// GPUs (blocc::cuda::is_available, set_device, ...); blocc::DeviceBuffer
// comes with blocc/kernel.h.
#include "runtime/cuda/device.h"
// blocc::HostBuffer: aligned, owning host memory kernels launch on (it comes
// with blocc/kernel.h too).
#include "runtime/host_buffer.h"
