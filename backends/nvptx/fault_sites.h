// The places where a GPU program may stop with an error (a failed
// device_assert, an integer division by zero), numbered in the order the
// lowering meets them: generated code records the site's number in the
// kernel's fault record (runtime/cuda/fault_record.h) and the host turns
// it into the message the CPU backend gives, word for word
// (runtime/fault_site.h, which ahead-of-time compiled kernels share).
// No LLVM types: gpu_backend.cpp keeps the sites of a kernel.
#pragma once

#include "runtime/fault_site.h"

namespace blocc::nvptx {

using runtime::describe_fault;
using runtime::FaultSite;

} // namespace blocc::nvptx
