// What the runtime knows about a compiled CPU kernel's program beyond its
// code: the places where a program may stop with an error or print, each a
// numbered site that generated code passes to the runtime hooks below
// (C ABI: the JIT binds them by name, and ahead-of-time compiled objects
// link against them). A launch hands the kernel's ProgramSites to its
// programs in ProgramState::kernel. Messages are the interpreter's, word
// for word.
#pragma once

#include "ir/type.h"
#include "runtime/cpu/program_abi.h"
#include "runtime/fault_site.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blocc::runtime::cpu {

/// A print op: how to format the operands generated code hands over.
struct PrintSite {
  std::string prefix;
  bool hex = false;
  /// Element type and shape (empty for scalars) of each operand; the data
  /// arrives in storage form (see backends/llvm/llvm_types.h).
  std::vector<ir::Scalar> elements;
  std::vector<std::vector<int64_t>> shapes;
};

struct ProgramSites {
  std::string name; // the kernel's, for messages
  std::vector<FaultSite> faults;
  std::vector<PrintSite> prints;
};

/// One element in storage form, as the interpreter's print op writes it.
std::string format_element(const unsigned char *p, ir::Scalar s, bool hex);

/// "kernel 'add', program (3, 0, 0)" for the program `state` runs.
std::string program_str(const ProgramState *state);

/// The sites of the kernel `state` runs (ProgramState::kernel).
inline const ProgramSites &sites_of(const ProgramState *state) {
  return *static_cast<const ProgramSites *>(state->kernel);
}

} // namespace blocc::runtime::cpu

extern "C" {

/// Program `state` failed at fault site `site`, in lane `lane` (ignored
/// by sites that name no lane): the message goes to state->error.
void blocc_cpu_fault(blocc::runtime::cpu::ProgramState *state, int32_t site,
                     int64_t lane);

/// Print op `site`: `operands[k]` points at operand k's elements.
void blocc_cpu_print(blocc::runtime::cpu::ProgramState *state, int32_t site,
                     const void *const *operands);
}
