// Tutorial 10, step 1: the kernel library. Any shared library that lists
// kernels with BLOCC_EXPORT_KERNELS can be compiled ahead of time (and
// loaded by Python's blocc.load_library): here tutorial 02's softmax,
// unchanged. It links blocc and LLVM, but only blocc-compile loads it, at
// build time; the application never does.
#include "02-fused-softmax/fused_softmax.h"

#include <blocc/export.h>

BLOCC_EXPORT_KERNELS(blocc::tutorials::softmax)
