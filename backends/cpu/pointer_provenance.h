// Which kernel arguments a pointer value derives from, decided at compile
// time for the bounds checks of checked kernels (lower_checks.cpp). The
// interpreter tracks this per lane at run time; compiled code cannot afford
// to, so the backend follows the def-use chains instead: through pointer
// arithmetic, shape ops, selects, loop-carried values and if results. A
// pointer made from an integer (int_to_ptr, a cast, a constant, a loaded
// pointer) derives from no argument: it is checked, as the interpreter
// checks it, against whichever argument's buffer holds its address.
#pragma once

#include "ir/function.h"

#include <vector>

namespace blocc::cpu {

struct PointerOrigins {
  /// Indices of the kernel's pointer arguments, ascending.
  std::vector<int> arguments;
  /// Some lanes may come from an integer (see above).
  bool by_address = false;
};

/// The origins of `pointer` (a pointer-typed value of `kernel`).
PointerOrigins pointer_origins(const ir::Function &kernel,
                               const ir::Value *pointer);

} // namespace blocc::cpu
