// How many threads the CPU runtime runs a grid on.
#pragma once

namespace blocc::runtime::cpu {

/// BLOCC_NUM_THREADS if set, else OMP_NUM_THREADS (read by OpenMP itself),
/// else the number of hardware threads. A value that is not a positive
/// integer is ignored (with a warning on stderr, once). Read at every
/// launch, so a program may change it between launches.
int num_threads();

} // namespace blocc::runtime::cpu
