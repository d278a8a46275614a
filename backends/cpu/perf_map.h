// Linux perf's map of JIT-compiled code: /tmp/perf-<pid>.map, one line per
// loaded kernel, "START SIZE NAME" (hex), which `perf report` and
// `perf top` read to name samples in code no ELF file describes. Written
// only when BLOCC_PERF_MAP=1: the file grows with every kernel a process
// loads and stays in /tmp after it exits.
//
// LLVM's own listeners (the perf jitdump and GDB JIT interfaces) are not
// registered: a kernel has no debug information to give a debugger, and
// jitdump needs `perf inject` and LLVM's executor-side support library for
// what this one line per kernel already gives a profile.
#pragma once

#include <string>
#include <string_view>

namespace blocc::cpu {

/// When $BLOCC_PERF_MAP is 1, appends the function `symbol` of `object`
/// (an ELF relocatable object), loaded at `address`, to this process's
/// perf map, named `symbol` with its size from the object's symbol table.
/// Never throws: a map that cannot be written is reported once on stderr.
void record_in_perf_map(std::string_view object, const std::string &symbol,
                        const void *address);

} // namespace blocc::cpu
