// The PTX of compiled kernels kept between processes, in blocc's disk
// compile cache (runtime/cpu/disk_cache.h: $BLOCC_CACHE_DIR, a private
// directory, entries verified on read, least recently used evicted), so
// that a later process's first launch of a kernel skips LLVM (-O3 and the
// NVPTX backend). The key is everything that decides the PTX: the
// in-memory key (IR text, architecture, warps), blocc's version, a
// build-time hash of the sources that decide generated code, and the LLVM
// that runs. An entry holds only the PTX: what else a launch needs
// (dynamic shared memory, fault sites) comes from lowering the kernel
// again, which is cheap and deterministic. Where BLOCC_PTXAS names a PTX
// assembler (runtime/cuda/ptx_assembler.h), the cubin it makes of that PTX
// is kept too, under the same key and the assembler's path and release, so
// that a later process skips ptxas as well. No LLVM types here.
#pragma once

#include "runtime/cuda/ptx_assembler.h"

#include <cstddef>
#include <optional>
#include <string>

namespace blocc::nvptx {

/// "blocc 0.1.0 (nvptx sources 0123456789abcdef), LLVM 19.1.7"
const std::string &ptx_compiler_version();

/// The PTX stored under `key` in the disk cache the environment selects
/// now; nullopt when there is none, the entry fails verification, or the
/// cache is off.
std::optional<std::string> load_cached_ptx(const std::string &key);

/// Stores `ptx` under `key` (nothing when the cache is off or cannot be
/// written: it is an optimization).
void store_cached_ptx(const std::string &key, const std::string &ptx);

/// The cubin `assembler` makes of `ptx`, the PTX of `key`: read from the
/// disk cache where an earlier process stored it, else assembled (errors
/// as cuda::assemble_ptx, naming `what`) and stored.
std::string cached_cubin(const cuda::PtxAssembler &assembler,
                         const std::string &key, const std::string &ptx,
                         const std::string &what);

struct PtxDiskCounters {
  size_t hits = 0;           // PTX or cubins read from the disk cache
  size_t rejected = 0;       // entries that failed verification
  size_t writes = 0;         // entries written
  size_t write_failures = 0; // entries that could not be written
};
PtxDiskCounters ptx_disk_counters();

} // namespace blocc::nvptx
