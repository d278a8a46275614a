// Write-race detection (InterpretOptions::detect_races, BLOCC_CHECK=races):
// every element a store writes is recorded for the launch, and a program
// storing a value different from what another program of the same launch
// stored at that address is an error. Storing the same bytes from several
// programs is benign (Triton kernels often do), a program may overwrite its
// own stores, atomics are not recorded. The message is the CPU backend's
// (backends/cpu/check_hooks.cpp), word for word.
#pragma once

#include "backends/interpreter/execution_site.h"
#include "ir/type.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace blocc::interp {

class Memory;

class WriteRaces {
public:
  /// Records lane `lane` of store `site` writing `value` (canonical, of
  /// `element`, `bytes` in memory) at `address`; throws through `site`
  /// when another program stored different bytes there in this launch.
  void record(const ExecutionSite &site, const Memory &memory, int64_t lane,
              uint64_t address, int bytes, ir::Scalar element, uint64_t value);

private:
  struct Store {
    ProgramId program;
    const ir::Operation *op = nullptr;
    int64_t lane = 0;
    int bytes = 0;
    uint64_t raw = 0;   // the bytes in memory
    uint64_t value = 0; // canonical, for the message
    ir::Scalar element = ir::Scalar::I8;
  };
  std::unordered_map<uint64_t, Store> stores_;
};

} // namespace blocc::interp
