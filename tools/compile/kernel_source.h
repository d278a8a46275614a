// Where blocc-compile's kernel comes from:
//   --library LIB --kernel NAME --signature SIG: a shared library that
//     exports kernels (BLOCC_EXPORT_KERNELS, bindings/include/blocc/
//     export.h) is loaded, and its own copy of blocc traces the kernel for
//     the signature's specialization and runs the generic passes (the C
//     interface's inspect, stage IR): the same IR its JIT would compile;
//   --ir FILE: textual block IR of one specialization (BLOCC_DUMP=ir,
//     kernel.ir_for(...)), whose arguments carry their divisibility.
// Either way the result is the block IR every target compiles.
#pragma once

#include "ir/function.h"
#include "tools/compile/options.h"
#include "tools/compile/specialization.h"

#include <memory>

namespace blocc::compile {

struct LoadedKernel {
  Specialization specialization;
  std::unique_ptr<ir::Function> function; ///< parsed from its IR text
};

/// Throws blocc::Error naming the library, the kernel (listing those the
/// library has when it has no such kernel) or the signature's entry.
LoadedKernel load_kernel(const Options &options);

} // namespace blocc::compile
